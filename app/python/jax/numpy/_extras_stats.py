# jax.numpy statistics extras: quantiles and medians, NaN-skipping reductions, average, cov/corrcoef, ptp.
import numpy as _np

from jax.numpy._extras_util import (jnp as _jnp, promote_inexact as _inexact, canonical_axis as _axis,
                                    default_int as _default_int, is_inexact as _is_inexact,
                                    check_not_complex as _check_not_complex)

_METHODS = ('linear', 'lower', 'higher', 'midpoint', 'nearest')


def _reduction_axes(a, axis):
    """a with the reduced axes merged into one last axis, and the kept shape for keepdims."""
    j = _jnp()
    if axis is None:
        return j.reshape(a, (-1,)), (1,) * a.ndim
    axes = (axis,) if isinstance(axis, int) or _np.ndim(axis) == 0 else tuple(axis)
    axes = tuple(_axis(ax, a.ndim) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError('repeated axis')
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = j.transpose(a, kept + list(axes))
    merged = j.reshape(moved, tuple(a.shape[d] for d in kept) + (-1,))
    return merged, tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))


def _quantile(a, q, axis, method, keepdims, skip_nans, name):
    j = _jnp()
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'")
    _check_not_complex(a, name)
    a, = _inexact(a)
    q = j.asarray(q)
    if q.ndim > 1:
        raise ValueError(f'q must be have rank <= 1, got shape {tuple(q.shape)}')
    q = q.astype(a.dtype) if not _is_inexact(q.dtype) else q
    data, keep_shape = _reduction_axes(a, axis)
    if skip_nans:
        # NaNs sort last; each slice interpolates among its own count of numbers.
        data = j.sort(data, axis=-1)
        count = j.sum(j.logical_not(j.isnan(data)), axis=-1, keepdims=True).astype(q.dtype)
    else:
        # One NaN makes its whole slice NaN (numpy's answer).
        data = j.where(j.any(j.isnan(data), axis=-1, keepdims=True), j.asarray(_np.nan, data.dtype), data)
        data = j.sort(data, axis=-1)
        count = j.full(data.shape[:-1] + (1,), data.shape[-1], q.dtype)
    # q broadcast against every slice: positions have shape slice_shape + q_shape.
    qq = j.reshape(q, (1,) * (data.ndim - 1) + tuple(q.shape)) if q.ndim else j.reshape(q, (1,) * data.ndim)
    position = qq * (count - 1)
    low, high = j.floor(position), j.ceil(position)
    high_weight = position - low
    low_weight = 1 - high_weight
    last = count - 1
    low_index = j.clip(low, 0, last).astype('int32')
    high_index = j.clip(high, 0, last).astype('int32')
    low_value = j.take_along_axis(data, low_index, axis=-1)
    high_value = j.take_along_axis(data, high_index, axis=-1)
    if method == 'linear':
        result = low_value.astype(q.dtype) * low_weight + high_value.astype(q.dtype) * high_weight
    elif method == 'lower':
        result = low_value
    elif method == 'higher':
        result = high_value
    elif method == 'nearest':
        result = j.where(high_weight <= 0.5, low_value, high_value)
    else:
        result = (low_value + high_value) * 0.5
    if not q.ndim:
        result = j.reshape(result, result.shape[:-1])
    else:
        result = j.moveaxis(result, -1, 0)
    if keepdims:
        result = j.reshape(result, tuple(q.shape) + keep_shape)
    return result.astype(a.dtype)


def _no_out(out, overwrite_input, name):
    if out is not None or overwrite_input:
        raise ValueError(f'jax.numpy.{name} does not support overwrite_input=True or out != None')


def quantile(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False):
    _no_out(out, overwrite_input, 'quantile')
    return _quantile(a, q, axis, method, keepdims, False, 'quantile')


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False):
    _no_out(out, overwrite_input, 'nanquantile')
    return _quantile(a, q, axis, method, keepdims, True, 'nanquantile')


def percentile(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False):
    _no_out(out, overwrite_input, 'percentile')
    q, = _inexact(q)
    return _quantile(a, q / 100, axis, method, keepdims, False, 'percentile')


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False):
    _no_out(out, overwrite_input, 'nanpercentile')
    q, = _inexact(q)
    return _quantile(a, q / 100, axis, method, keepdims, True, 'nanpercentile')


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _no_out(out, overwrite_input, 'median')
    return _quantile(a, 0.5, axis, 'midpoint', keepdims, False, 'median')


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _no_out(out, overwrite_input, 'nanmedian')
    return _quantile(a, 0.5, axis, 'midpoint', keepdims, True, 'nanmedian')


def _masked_nans(a, fill):
    j = _jnp()
    return j.where(j.isnan(a), j.asarray(fill, a.dtype), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    j = _jnp()
    a = j.asarray(a)
    if _is_inexact(a.dtype):
        a = _masked_nans(a, 0)
    return j.sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    j = _jnp()
    a = j.asarray(a)
    if _is_inexact(a.dtype):
        a = _masked_nans(a, 1)
    return j.prod(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)


def _nan_extreme(reduce, fill):
    def op(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        j = _jnp()
        a = j.asarray(a)
        if not _is_inexact(a.dtype):
            return reduce(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
        result = reduce(_masked_nans(a, fill), axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
        # A slice of NaNs only has no number: its answer is NaN.
        all_nan = j.all(j.isnan(a), axis=axis, keepdims=keepdims)
        return j.where(all_nan, j.asarray(_np.nan, result.dtype), result)
    return op


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_extreme(_jnp().max, -_np.inf)(a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_extreme(_jnp().min, _np.inf)(a, axis, out, keepdims, initial, where)


def _nan_arg(arg, fill):
    def op(a, axis=None, out=None, keepdims=None):
        j = _jnp()
        a = j.asarray(a)
        keepdims = bool(keepdims)
        if not _is_inexact(a.dtype):
            return arg(a, axis=axis, keepdims=keepdims)
        nans = j.isnan(a)
        found = arg(j.where(nans, j.asarray(fill, a.dtype), a), axis=axis, keepdims=keepdims)
        return j.where(j.all(nans, axis=axis, keepdims=keepdims), -1, found)
    return op


def nanargmax(a, axis=None, out=None, keepdims=None):
    return _nan_arg(_jnp().argmax, -_np.inf)(a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    return _nan_arg(_jnp().argmin, _np.inf)(a, axis, out, keepdims)


def _nan_cumulative(name, fill):
    def op(a, axis=None, dtype=None, out=None):
        j = _jnp()
        a = j.asarray(a)
        if _is_inexact(a.dtype):
            a = _masked_nans(a, fill)
        kwargs = {} if dtype is None else {'dtype': dtype}
        return getattr(j, name)(a, axis=axis, **kwargs)
    op.__name__ = 'nan' + name
    return op


nancumsum = _nan_cumulative('cumsum', 0)
nancumprod = _nan_cumulative('cumprod', 1)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    j = _jnp()
    a = j.asarray(a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmean is not supported.")
    if not _is_inexact(a.dtype):
        return j.mean(a, axis=axis, dtype=dtype, keepdims=keepdims) if where is None else \
            j.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where) / \
            j.sum(j.broadcast_to(where, a.shape), axis=axis, keepdims=keepdims)
    dtype = a.dtype if dtype is None else dtype
    present = j.logical_not(j.isnan(a))
    if where is not None:
        present = present & where
    count = j.sum(present, axis=axis, keepdims=keepdims, dtype=_default_int()).astype(dtype)
    total = nansum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return total / count


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    j = _jnp()
    a, = _inexact(a)
    present = j.logical_not(j.isnan(a))
    mean = nanmean(a, axis=axis, keepdims=True)
    centered = j.where(present, a - mean, j.zeros_like(a))
    dof = j.sum(present, axis=axis, keepdims=keepdims, dtype=_default_int()) - ddof
    # No degrees of freedom left: NaN, not a division by zero or a negative count.
    none_left = dof <= 0
    total = j.where(none_left, j.asarray(_np.nan, a.dtype), j.sum(j.square(centered), axis=axis, keepdims=keepdims))
    result = total / j.where(none_left, 1, dof).astype(a.dtype)
    return result if dtype is None else result.astype(dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return _jnp().sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


def ptp(a, axis=None, out=None, keepdims=False):
    j = _jnp()
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    return j.max(a, axis=axis, keepdims=keepdims) - j.min(a, axis=axis, keepdims=keepdims)


def count_nonzero(a, axis=None, keepdims=False):
    j = _jnp()
    a = j.asarray(a)
    return j.sum(a != 0, axis=axis, keepdims=keepdims, dtype=_default_int())


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    j = _jnp()
    if weights is None:
        avg = j.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        a = j.asarray(a)
        count = a.size // max(avg.size, 1) if avg.size else 0
        return avg, j.broadcast_to(j.asarray(count, avg.dtype), avg.shape)
    a, weights = _inexact(a, weights)
    if a.shape != weights.shape:
        if axis is None:
            raise ValueError('Axis must be specified when shapes of a and weights differ.')
        if weights.ndim != 1:
            raise TypeError('1D weights expected when shapes of a and weights differ.')
        axis = _axis(axis, a.ndim)
        if weights.shape[0] != a.shape[axis]:
            raise ValueError('Length of weights not compatible with specified axis.')
        weights = j.reshape(weights, tuple(a.shape[axis] if d == axis else 1 for d in range(a.ndim)))
        weights = j.broadcast_to(weights, a.shape)
    weights_sum = j.sum(weights, axis=axis, keepdims=keepdims)
    avg = j.sum(a * weights, axis=axis, keepdims=keepdims) / weights_sum
    if not returned:
        return avg
    return avg, j.broadcast_to(weights_sum, avg.shape)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    j = _jnp()
    if y is not None:
        m, y = _inexact(m, y)
    else:
        m, = _inexact(m)
    if m.ndim > 2:
        raise ValueError('m has more than 2 dimensions')
    x = m if m.ndim == 2 else j.reshape(m, (1, -1))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return j.zeros((0, 0), x.dtype)
    if y is not None:
        if y.ndim > 2:
            raise ValueError('y has more than 2 dimensions')
        y = y if y.ndim == 2 else j.reshape(y, (1, -1))
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = j.concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 1 if not bias else 0
    w = None
    n = x.shape[1]
    if fweights is not None:
        fweights = j.asarray(fweights)
        if fweights.ndim > 1:
            raise RuntimeError('cannot handle multidimensional fweights')
        if fweights.shape[0] != n:
            raise RuntimeError('incompatible numbers of samples and fweights')
        w = fweights
    if aweights is not None:
        aweights = j.asarray(aweights)
        if aweights.ndim > 1:
            raise RuntimeError('cannot handle multidimensional aweights')
        if aweights.shape[0] != n:
            raise RuntimeError('incompatible numbers of samples and aweights')
        w = aweights if w is None else w * aweights
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        factor = n - ddof
    elif ddof == 0:
        factor = w_sum
    elif aweights is None:
        factor = w_sum - ddof
    else:
        factor = w_sum - ddof * j.sum(w * aweights) / w_sum
    centered = x - avg[:, None]
    weighted = centered if w is None else centered * w
    return j.squeeze(j.matmul(centered, weighted.T) / factor)


def corrcoef(x, y=None, rowvar=True):
    j = _jnp()
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        # One variable: its correlation with itself (NaN when it does not vary).
        return c / c
    spread = j.sqrt(j.diagonal(c))
    c = c / spread[:, None] / spread[None, :]
    return j.clip(c, -1, 1)
