# jax.scipy.special: each function is the sequence of lax operations JAX's version applies, so values and
# jaxprs match, with JAX's custom derivatives where it defines them.
import numpy as _np

import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy._util import promote_args_inexact, const

_ERFINV_NAME = 'erfinv'


def gammaln(x):
    x, = promote_args_inexact('gammaln', x)
    return lax.lgamma(x)


def digamma(x):
    x, = promote_args_inexact('digamma', x)
    return lax.digamma(x)


def erf(x):
    x, = promote_args_inexact('erf', x)
    return lax.erf(x)


def erfc(x):
    x, = promote_args_inexact('erfc', x)
    return lax.erfc(x)


def erfinv(x):
    x, = promote_args_inexact(_ERFINV_NAME, x)
    return lax.erf_inv(x)


def factorial(n, exact=False):
    if exact:
        raise NotImplementedError('factorial with exact=True')
    n, = promote_args_inexact('factorial', n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


@jax.custom_jvp
def logit(x):
    x, = promote_args_inexact('logit', x)
    return lax.log(lax.div(x, lax.sub(const(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(const(x, 1), x))))


def expit(x):
    x, = promote_args_inexact('expit', x)
    return lax.logistic(x)


def _reduction_dims(a, axis):
    ndim = _np.ndim(a)
    if axis is None:
        return (tuple(range(ndim)),) * 2
    axes = tuple(axis) if isinstance(axis, (tuple, list, _np.ndarray)) else (axis,)
    canonical = tuple(int(x) % ndim if -ndim <= int(x) < ndim else _bad_axis(x, ndim) for x in axes)
    if len(canonical) != len(set(canonical)):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return canonical, canonical


def _bad_axis(axis, ndim):
    raise ValueError(f'axis {axis} is out of bounds for array of dimension {ndim}')


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    if b is None and where is None and not return_sign:
        # The engine's jax.nn.logsumexp applies the same operations (jax.nn's is this function).
        a, = promote_args_inexact('logsumexp', a)
        return jax.nn.logsumexp(a, axis=axis, keepdims=keepdims)
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact('logsumexp', a, b)
        a_arr = jnp.where(b_arr != 0, a_arr, -_np.inf)
    else:
        a_arr, = promote_args_inexact('logsumexp', a)
        b_arr = a_arr
    pos_dims, dims = _reduction_dims(a_arr, axis)
    amax = jnp.max(a_arr, axis=dims, keepdims=keepdims, where=where, initial=-_np.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, pos_dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(a_arr.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = exp_a.sum(axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    sumexp = abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return (out, sign)
    if b is not None:
        out = jnp.where(sign < 0, jnp.array(_np.nan, dtype=out.dtype), out)
    return out


@jax.custom_jvp
def xlogy(x, y):
    x, y = promote_args_inexact('xlogy', x, y)
    x_ok = x != 0.
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(y) + y_dot * x / y).astype(result.dtype)


@jax.custom_jvp
def xlog1py(x, y):
    x, y = promote_args_inexact('xlog1py', x, y)
    x_ok = x != 0.
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(result.dtype)


@jax.custom_jvp
def _xlogx(x):
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


def entr(x):
    x, = promote_args_inexact('entr', x)
    return lax.select(lax.lt(x, const(x, 0)), lax.full_like(x, -_np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    p, q = promote_args_inexact('rel_entr', p, q)
    zero = const(p, 0.0)
    both_gt_zero_mask = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero_mask = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_gt_zero_mask, p, 1)
    safe_q = jnp.where(both_gt_zero_mask, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_gt_zero_mask, log_val, jnp.where(one_zero_mask, zero, _np.inf))


def kl_div(p, q):
    p, q = promote_args_inexact('kl_div', p, q)
    return rel_entr(p, q) - p + q


def _ndtr(x):
    dtype = _np.dtype(str(x.dtype)).type
    half_sqrt_2 = dtype(0.5) * _np.sqrt(2., dtype=dtype)
    w = x * half_sqrt_2
    z = abs(w)
    y = lax.select(lax.lt(z, half_sqrt_2), dtype(1.) + lax.erf(w),
                   lax.select(lax.gt(w, dtype(0.)), dtype(2.) - lax.erfc(z), lax.erfc(z)))
    return dtype(0.5) * y


def ndtr(x):
    x = jnp.asarray(x)
    if str(x.dtype) not in ('float32', 'float64'):
        raise TypeError(f'x.dtype={x.dtype} is not supported, see docstring for supported types.')
    return _ndtr(x)


# log_ndtr switches to the asymptotic series below these points and to -ndtr(-x) above the upper ones.
_LOGNDTR_LOWER = {'float32': _np.array(-10, _np.float32), 'float64': _np.array(-20, _np.float64)}
_LOGNDTR_UPPER = {'float32': _np.array(5, _np.float32), 'float64': _np.array(8, _np.float64)}


def _double_factorial(n):
    return _np.prod(_np.arange(n, 1, -2))


def _log_ndtr_asymptotic_series(x, series_order):
    dtype = _np.dtype(str(x.dtype)).type
    if series_order <= 0:
        return _np.array(1, dtype)
    x_2 = lax.square(x)
    even_sum = jnp.zeros_like(x)
    odd_sum = jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = _np.array(_double_factorial(2 * n - 1), dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return dtype(1.) + even_sum - odd_sum


def _log_ndtr_lower(x, series_order):
    dtype = _np.dtype(str(x.dtype)).type
    x_2 = lax.square(x)
    log_scale = -dtype(0.5) * x_2 - lax.log(-x) - dtype(0.5 * _np.log(2. * _np.pi))
    return log_scale + lax.log(_log_ndtr_asymptotic_series(x, series_order))


def _norm_logpdf(x):
    neg_half = const(x, -0.5)
    log_normalizer = const(x, _np.log(_np.sqrt(2 * _np.pi)))
    return lax.sub(lax.mul(neg_half, lax.square(x)), log_normalizer)


def _log_ndtr(x, series_order=3):
    if series_order < 0:
        raise ValueError('series_order must be non-negative.')
    if series_order > 30:
        raise ValueError('series_order must be <= 30.')
    x_arr = jnp.asarray(x)
    dtype = str(x_arr.dtype)
    if dtype not in _LOGNDTR_LOWER:
        raise TypeError(f'x.dtype={dtype} is not supported.')
    lower_segment, upper_segment = _LOGNDTR_LOWER[dtype], _LOGNDTR_UPPER[dtype]
    x_arr_gt_upper_segment = lax.gt(x_arr, upper_segment)
    ndtr_arg = jnp.where(x_arr_gt_upper_segment, -x_arr, lax.max(x_arr, lower_segment))
    ndtr_res = _ndtr(ndtr_arg)
    return jnp.where(x_arr_gt_upper_segment, -ndtr_res,
                     jnp.where(lax.gt(x_arr, lower_segment), lax.log(ndtr_res),
                               _log_ndtr_lower(lax.min(x_arr, lower_segment), series_order)))


log_ndtr = jax.custom_jvp(_log_ndtr, nondiff_argnums=(1,))


@log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = log_ndtr(x, series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


def softmax(x, /, *, axis=None):
    return jax.nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    return jax.nn.log_softmax(x, axis=axis)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.scipy.special.{name} is not supported by shardscope')
