"""jax.random samplers built on uniform, bits, split and sort as JAX builds them (jax/_src/random), so that their
values equal JAX's for the same key: permutation, choice, gumbel, categorical, exponential, laplace, logistic."""
import math

import numpy as np


def _jnp():
    import jax.numpy as jnp
    return jnp


def _random():
    import jax.random as random
    return random


def _float_dtype(dtype):
    jnp = _jnp()
    return jnp.dtype(dtype if dtype is not None else jnp.float32)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def shuffle_along(key, x, axis):
    """JAX's _shuffle: sort by fresh random 32-bit keys, as many rounds as make collisions negligible."""
    from jax import lax
    random = _random()
    size = int(np.prod(x.shape)) if x.shape else 1
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = random.split(key)
        sort_keys = random.bits(subkey, x.shape, np.uint32)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    jnp = _jnp()
    if not np.ndim(x):
        if not jnp.issubdtype(jnp.result_type(x), jnp.integer):
            raise TypeError('x must be an integer or at least 1-dimensional')
        return shuffle_along(key, jnp.arange(int(x)), 0)
    x = jnp.asarray(x)
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return shuffle_along(key, x, axis)
    ind = shuffle_along(key, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis)


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    jnp = _jnp()
    random = _random()
    dtype = _float_dtype(dtype)
    shape = _shape(shape)
    if mode in ('high', 'highest'):
        info = jnp.finfo(dtype)
        pair = random.uniform(key, (2,) + shape, dtype, minval=0., maxval=1.)
        high, low = pair[0], pair[1]
        x = jnp.where(high >= 0.5, high,
                      high + 2 ** -int(info.nmant) * low + max(2 ** -(2 * int(info.nmant) + 1), float(info.tiny)))
        return -jnp.log(-jnp.log1p(-x))
    tiny = float(jnp.finfo(dtype).tiny)
    return -jnp.log(-jnp.log(random.uniform(key, shape, dtype, minval=tiny, maxval=1.)))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None):
    jnp = _jnp()
    from jax import lax
    logits = jnp.asarray(logits)
    axis = axis % logits.ndim if axis >= 0 or -logits.ndim <= axis else axis
    batch_shape = tuple(np.delete(logits.shape, axis))
    shape = batch_shape if shape is None else _shape(shape)
    if shape[len(shape) - len(batch_shape):] != batch_shape:
        raise ValueError(f'categorical shape parameter {shape} must be broadcast-compatible with the batch shape '
                         f'{batch_shape}')
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        neg_axis = axis - logits.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(neg_axis % logits.ndim, logits.shape[neg_axis])
        noise = gumbel(key, (*prefix, *logits_shape), logits.dtype, mode=mode)
        return jnp.argmax(noise + jnp.expand_dims(logits, tuple(range(len(prefix)))), axis=neg_axis)
    logits = logits + gumbel(key, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f'Number of samples without replacement ({k}) cannot exceed number of categories '
                         f'({logits.shape[axis]}).')
    _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
    order = (indices.ndim - 1, *range(indices.ndim - 1))
    return jnp.transpose(indices, order).reshape(shape)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    jnp = _jnp()
    random = _random()
    from jax import lax
    shape = _shape(shape)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError('a must be greater than 0 unless no samples are taken')
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) when "
                         f"'replace=False'")
    if p is None:
        if replace:
            ind = random.randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            perm = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=0 if arr.ndim == 0 else axis)
    else:
        p_arr = jnp.asarray(p)
        if not jnp.issubdtype(p_arr.dtype, jnp.inexact):
            p_arr = p_arr.astype(jnp.float32)
        if p_arr.shape != (n_inputs,):
            raise ValueError(f'p must be None or a 1D vector with the same size as a.shape[axis]. p has shape '
                             f'{p_arr.shape} and a.shape[axis] is {n_inputs}.')
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - random.uniform(key, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.top_k(g, k=n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


def exponential(key, shape=(), dtype=None, *, out_sharding=None):
    jnp = _jnp()
    u = _random().uniform(key, _shape(shape), _float_dtype(dtype))
    return -jnp.log1p(-u)


def laplace(key, shape=(), dtype=None, *, out_sharding=None):
    jnp = _jnp()
    dtype = _float_dtype(dtype)
    u = _random().uniform(key, _shape(shape), dtype, minval=-1. + float(jnp.finfo(dtype).epsneg), maxval=1.)
    return jnp.sign(u) * jnp.log1p(-jnp.abs(u))


def logistic(key, shape=(), dtype=None, *, out_sharding=None):
    jnp = _jnp()
    dtype = _float_dtype(dtype)
    x = _random().uniform(key, _shape(shape), dtype, minval=float(jnp.finfo(dtype).tiny), maxval=1.)
    return jnp.log(x) - jnp.log1p(-x)
