# jax.numpy extras that search, count, order or slide: searchsorted, bincount, unique, partition, diff, convolve...
import operator as _operator

import numpy as _np

from jax.numpy._extras_util import (jnp as _jnp, promote as _promote, promote_inexact as _inexact,
                                    canonical_axis as _axis, default_int as _default_int, is_inexact as _is_inexact,
                                    is_integer as _is_integer, is_bool as _is_bool,
                                    is_tracer as _is_tracer, concrete as _concrete, static_nonzero as _static_nonzero)


def _before(x, y):
    """x < y in sort order: NaNs after every number, as jnp.sort places them."""
    j = _jnp()
    if not _is_inexact(x.dtype):
        return x < y
    return (x < y) | (j.isnan(y) & j.logical_not(j.isnan(x)))


def searchsorted(a, v, side='left', sorter=None, *, method='scan'):
    j = _jnp()
    if side not in ('left', 'right'):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of ['left', 'right'].")
    if method not in ('scan', 'scan_unrolled', 'sort', 'compare_all'):
        raise ValueError(f"method={method!r} not recognized; expected one of 'scan', 'scan_unrolled', 'sort', or "
                         "'compare_all'")
    a, v = j.asarray(a), j.asarray(v)
    if a.ndim != 1:
        raise ValueError(f'a should be 1-dimensional, got a.ndim={a.ndim}')
    if sorter is not None:
        a = a[j.asarray(sorter)]
    a, v = _promote(a, v)
    # Every method gives the same indices; this counts, for each query, the entries placed before it.
    flat = j.reshape(v, (-1, 1))
    entries = a[None, :]
    placed = _before(entries, flat) if side == 'left' else j.logical_not(_before(flat, entries))
    found = j.sum(placed, axis=1, dtype=_default_int())
    return j.reshape(found, v.shape)


def digitize(x, bins, right=False, *, method=None):
    j = _jnp()
    x, bins = j.asarray(x), j.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f'digitize: bins must be a 1-dimensional array; got bins={bins}')
    if bins.shape[0] == 0:
        return j.zeros(x.shape, _default_int())
    side = 'left' if right else 'right'
    kwargs = {} if method is None else {'method': method}
    rising = searchsorted(bins, x, side=side, **kwargs)
    falling = bins.shape[0] - searchsorted(bins[::-1], x, side=side, **kwargs)
    return j.where(bins[-1] >= bins[0], rising, falling)


def bincount(x, weights=None, minlength=0, *, length=None):
    j = _jnp()
    x = j.asarray(x)
    if not _is_integer(x.dtype):
        raise TypeError(f'x argument to bincount must have an integer type; got {x.dtype}')
    if x.ndim != 1:
        raise ValueError('only 1-dimensional input supported.')
    minlength = _operator.index(minlength)
    if length is None:
        values = _concrete(x, "The error occurred because of argument 'x' of jnp.bincount. To avoid this error, "
                           "pass a static `length` argument.")
        length = max(minlength, int(values.max()) + 1 if values.size else 0)
    else:
        length = _operator.index(length)
    if weights is None:
        weights = j.asarray(1, _default_int())
    else:
        weights = j.asarray(weights)
        if tuple(weights.shape) != tuple(x.shape):
            raise ValueError('shape of weights must match shape of x.')
    # Negative entries count in bin 0 and those past `length` are dropped, as JAX's scatter-add does.
    return j.zeros(length, weights.dtype).at[j.clip(x, 0)].add(weights, mode='drop')


def _nonzero(a, size, fill_value, name):
    j = _jnp()
    if size is None:
        if _is_tracer(a):
            from jax.errors import ConcretizationTypeError
            raise ConcretizationTypeError(a, f'The size argument of jnp.{name} must be statically specified to use '
                                          f'jnp.{name} within JAX transformations.')
        size = int(_np.count_nonzero(_np.asarray(a)))
    return _static_nonzero(a, _operator.index(size), fill_value)


def argwhere(a, *, size=None, fill_value=None):
    j = _jnp()
    a = j.asarray(a)
    if a.ndim == 0:
        found = _nonzero(j.reshape(a, (1,)), size, fill_value, 'argwhere')[0]
        return j.zeros((found.shape[0], 0), _default_int())
    return j.stack(_nonzero(a, size, fill_value, 'argwhere'), axis=1)


def flatnonzero(a, *, size=None, fill_value=None):
    return _nonzero(_jnp().ravel(a), size, fill_value, 'flatnonzero')[0]


def lexsort(keys, axis=-1):
    j = _jnp()
    from jax import lax
    keys = tuple(j.asarray(k) for k in keys)
    if len(keys) == 0:
        raise TypeError('need sequence of keys with len > 0 in lexsort')
    if len({tuple(k.shape) for k in keys}) > 1:
        raise ValueError('all keys need to be the same shape')
    if keys[0].ndim == 0:
        return j.asarray(0, _default_int())
    axis = _axis(axis, keys[0].ndim)
    # The last key is the primary one; positions (an iota) ride along to become the answer.
    positions = lax.broadcasted_iota(_default_int(), keys[0].shape, axis)
    return lax.sort((*keys[::-1], positions), dimension=axis, num_keys=len(keys))[-1]


def _reversed_order(x):
    """An order-reversing map without overflow: negation for floats, bitwise not for integers (and unsigned)."""
    j = _jnp()
    from jax.numpy._extras_math import invert
    return -x if _is_inexact(x.dtype) else invert(x)


def partition(a, kth, axis=-1):
    j = _jnp()
    from jax import lax
    a = j.asarray(a)
    if _is_bool(a.dtype):
        a = a.astype('int32').astype(bool)
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    kth = _axis(kth, n, 'kth')
    moved = j.moveaxis(a, axis, -1)
    # The kth+1 smallest ascending, then the rest from the largest down (JAX's two top_k calls).
    bottom = _reversed_order(lax.top_k(_reversed_order(moved), kth + 1)[0])
    top = lax.top_k(moved, n - kth - 1)[0]
    return j.moveaxis(j.concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    j = _jnp()
    from jax import lax
    a = j.asarray(a)
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    kth = _axis(kth, n, 'kth')
    moved = j.moveaxis(a, axis, -1)
    bottom = lax.top_k(_reversed_order(moved), kth + 1)[1]
    # The other positions in index order: a top_k of a 0/1 proxy that is 0 where the bottom part already took it.
    taken = j.any(bottom[..., :, None] == j.arange(n, dtype=bottom.dtype), axis=-2)
    proxy = j.where(taken, 0, 1).astype('int32')
    rest = lax.top_k(proxy, n - kth - 1)[1]
    return j.moveaxis(j.concatenate([bottom, rest.astype(bottom.dtype)], axis=-1), -1, axis)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):
    j = _jnp()
    if axis is not None:
        raise NotImplementedError('jax.numpy.unique with axis= is not supported by shardscope yet')
    a = j.asarray(ar)
    flat = j.ravel(a)
    if size is None and _is_tracer(flat):
        from jax.errors import ConcretizationTypeError
        raise ConcretizationTypeError(flat, "The error arose for the jnp.unique argument 'size'. To use jnp.unique "
                                      'within JAX transformations, specify a static size.')
    order = j.argsort(flat, stable=True)
    ranked = flat[order]
    n = flat.shape[0]
    if n:
        fresh = ranked[1:] != ranked[:-1]
        if equal_nan and _is_inexact(ranked.dtype):
            fresh = fresh & j.logical_not(j.isnan(ranked[1:]) & j.isnan(ranked[:-1]))
        first = j.concatenate([j.ones(1, bool), fresh])
    else:
        first = j.zeros(0, bool)
    if size is None:
        size = int(_np.count_nonzero(_np.asarray(first)))
    size = _operator.index(size)
    slots = _static_nonzero(first, size)[0]
    count = j.sum(first, dtype=_default_int())
    beyond = j.arange(size) >= count
    values = ranked[slots] if n else j.zeros(size, a.dtype)
    fill = j.min(flat) if fill_value is None and n else (0 if fill_value is None else fill_value)
    values = j.where(beyond, j.asarray(fill, a.dtype), values)
    outputs = [values]
    if return_index:
        outputs.append(j.where(beyond, 0, order[slots]) if n else j.zeros(size, _default_int()))
    group = j.cumsum(first.astype(_default_int())) - 1
    if return_inverse:
        inverse = j.zeros(n, _default_int()).at[order].set(group)
        outputs.append(j.reshape(inverse, a.shape))
    if return_counts:
        outputs.append(j.zeros(size, _default_int()).at[group].add(1, mode='drop'))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    j = _jnp()
    arr = j.asarray(a)
    n = _operator.index(n)
    if n < 0:
        raise ValueError(f'order must be non-negative but got {n}')
    if arr.ndim == 0:
        raise ValueError(f'diff requires input that is at least one dimensional; got {a}')
    if n == 0:
        return arr
    axis = _axis(axis, arr.ndim)
    pieces = []
    for extra in (prepend, arr, append):
        if extra is None:
            continue
        extra = j.asarray(extra)
        if extra.ndim == 0:
            shape = list(arr.shape)
            shape[axis] = 1
            extra = j.broadcast_to(extra, tuple(shape))
        pieces.append(extra)
    if len(pieces) > 1:
        arr = j.concatenate(pieces, axis=axis)
    head = (slice(None),) * axis + (slice(1, None),)
    tail = (slice(None),) * axis + (slice(None, -1),)
    for _ in range(n):
        # Booleans differ by not_equal, as numpy's diff does.
        arr = (arr[head] != arr[tail]) if _is_bool(arr.dtype) else arr[head] - arr[tail]
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    j = _jnp()
    arr = j.ravel(ary)
    result = arr[1:] - arr[:-1]
    if to_begin is not None:
        result = j.concatenate([j.ravel(j.asarray(to_begin)), result])
    if to_end is not None:
        result = j.concatenate([result, j.ravel(j.asarray(to_end))])
    return result


def _sliding(x, y, mode, name, precision, preferred_element_type):
    j = _jnp()
    from jax import lax
    if _np.ndim(x) != 1 or _np.ndim(y) != 1:
        raise ValueError(f'{name}() only support 1-dimensional inputs.')
    x, y = _inexact(x, y) if preferred_element_type is None else _promote(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f'{name}: inputs cannot be empty, got shapes {tuple(x.shape)} and {tuple(y.shape)}.')
    backwards = False
    if x.shape[0] < y.shape[0]:
        x, y = y, x
        # Swapped correlation inputs give the answer reversed.
        backwards = name == 'correlate'
    if name == 'convolve':
        y = y[::-1]
    k = y.shape[0]
    if mode == 'valid':
        padding = [(0, 0)]
    elif mode == 'same':
        padding = [(k // 2, k - k // 2 - 1)]
    elif mode == 'full':
        padding = [(k - 1, k - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax.conv_general_dilated(x[None, None, :], y[None, None, :], (1,), padding, precision=precision,
                                   preferred_element_type=preferred_element_type)[0, 0]
    return out[::-1] if backwards else out


def convolve(a, v, mode='full', *, precision=None, preferred_element_type=None):
    return _sliding(a, v, mode, 'convolve', precision, preferred_element_type)


def correlate(a, v, mode='valid', *, precision=None, preferred_element_type=None):
    return _sliding(a, v, mode, 'correlate', precision, preferred_element_type)


def polyval(p, x, *, unroll=16):
    j = _jnp()
    p, x = _inexact(p, x)
    from jax.numpy._extras_shape import broadcast_shapes
    y = j.zeros(broadcast_shapes(tuple(p.shape[1:]), tuple(x.shape)), x.dtype)
    # Horner's rule unrolled in Python: JAX scans over p, but the engine's scan cannot yet transpose a carry that
    # multiplies by a differentiated x, and polyval must stay differentiable.
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


def interp(x, xp, fp, left=None, right=None, period=None):
    j = _jnp()
    x, xp, fp = _inexact(x, xp, fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape[0] != fp.shape[0]:
        raise ValueError('xp and fp must be one-dimensional arrays of equal size')
    if period is not None:
        if _np.ndim(period) != 0:
            raise ValueError(f'period must be a scalar; got {period}')
        period = j.abs(j.asarray(period, x.dtype))
        x = j.remainder(x, period)
        xp = j.remainder(xp, period)
        order = j.argsort(xp)
        xp, fp = xp[order], fp[order]
        # One copy of each end on the other side makes the table wrap around.
        xp = j.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = j.concatenate([fp[-1:], fp, fp[:1]])
    i = j.clip(searchsorted(xp, x, side='right'), 1, xp.shape[0] - 1)
    rise = fp[i] - fp[i - 1]
    run = xp[i] - xp[i - 1]
    offset = x - xp[i - 1]
    tiny = j.abs(run) <= _np.spacing(j.finfo(xp.dtype).eps)
    f = j.where(tiny, fp[i - 1], fp[i - 1] + (offset / j.where(tiny, 1, run)) * rise)
    if period is None:
        f = j.where(x < xp[0], fp[0] if left is None else j.asarray(left, f.dtype), f)
        f = j.where(x > xp[-1], fp[-1] if right is None else j.asarray(right, f.dtype), f)
    return f
