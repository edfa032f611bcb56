# flax.linen pooling: pool, avg_pool, max_pool and min_pool as lax.reduce_window over the window dims (batch and
# feature dims get windows of one).
import numpy as np

import jax.numpy as jnp
from jax import lax


def pool(inputs, init, reduce_fn, window_shape, strides, padding):
    num_batch_dims = inputs.ndim - (len(window_shape) + 1)
    strides = strides or (1,) * len(window_shape)
    assert len(window_shape) == len(strides), f'len({window_shape}) must equal len({strides})'
    strides = (1,) * num_batch_dims + tuple(strides) + (1,)
    dims = (1,) * num_batch_dims + tuple(window_shape) + (1,)
    single = False
    if num_batch_dims == 0:
        # reduce_window always wants a batch dim: add one and take it off again.
        inputs = inputs[None]
        strides = (1,) + strides
        dims = (1,) + dims
        single = True
    assert inputs.ndim == len(dims), f'len({inputs.shape}) != len({dims})'
    if not isinstance(padding, str):
        padding = tuple(map(tuple, padding))
        assert len(padding) == len(window_shape), (
            f'padding {padding} must specify pads for same number of dims as window_shape {window_shape}')
        assert all(len(x) == 2 for x in padding), f'each entry in padding {padding} must be length 2'
        padding = ((0, 0),) * (inputs.ndim - len(window_shape) - 1) + padding + ((0, 0),)
    y = lax.reduce_window(inputs, init, reduce_fn, dims, strides, padding)
    if single:
        y = jnp.squeeze(y, axis=0)
    return y


def avg_pool(inputs, window_shape, strides=None, padding='VALID', count_include_pad=True):
    y = pool(inputs, 0.0, lax.add, window_shape, strides, padding)
    if count_include_pad:
        y = y / np.prod(window_shape)
    else:
        div_shape = inputs.shape[:-1] + (1,)
        if len(div_shape) - 2 == len(window_shape):
            div_shape = (1,) + div_shape[1:]
        y = y / pool(jnp.ones(div_shape), 0.0, lax.add, window_shape, strides, padding)
    return y


def max_pool(inputs, window_shape, strides=None, padding='VALID'):
    return pool(inputs, -jnp.inf, lax.max, window_shape, strides, padding)


def min_pool(inputs, window_shape, strides=None, padding='VALID'):
    return pool(inputs, jnp.inf, lax.min, window_shape, strides, padding)
