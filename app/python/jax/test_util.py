# jax.test_util.check_grads: derivatives from jvp and vjp checked against central finite differences in one random
# direction, up to a given order, with JAX's step (1e-4), seeds and per-dtype tolerances.
import functools

import numpy as np

from jax import tree_util

_STEP = 1e-4
# The tolerance a gradient check allows per dtype, absolute and relative alike.
_GRADIENT_TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
                       np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5}


def _is_python_scalar(x):
    return not isinstance(x, np.generic) and isinstance(x, (bool, int, float, complex))


def _dtype_of(x):
    if _is_python_scalar(x):
        return np.dtype(np.float32 if isinstance(x, float) else type(x))
    return np.dtype(np.asarray(x).dtype)


def _tolerance(dtype, given):
    if given is None:
        return _GRADIENT_TOLERANCE.get(dtype, 0)
    if isinstance(given, dict):
        merged = dict(_GRADIENT_TOLERANCE)
        merged.update({np.dtype(k): v for k, v in given.items()})
        return merged.get(dtype, 0)
    return given


def _check_close(xs, ys, atol, rtol, what):
    def close(x, y):
        x, y = np.asarray(x), np.asarray(y)
        a = max(_tolerance(x.dtype, atol), _tolerance(y.dtype, atol))
        r = max(_tolerance(x.dtype, rtol), _tolerance(y.dtype, rtol))
        np.testing.assert_allclose(x.astype(np.float64) if x.dtype.kind == 'f' else x,
                                   y.astype(np.float64) if y.dtype.kind == 'f' else y, atol=a, rtol=r, err_msg=what)
    tree_util.tree_map(close, xs, ys)


def _random_like(rng, x):
    dtype = _dtype_of(x)
    sample = np.asarray(rng.randn(*np.shape(x)), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        sample = sample + dtype.type(1j) * np.asarray(rng.randn(*np.shape(x)), dtype=dtype)
    return sample.item() if _is_python_scalar(x) else sample


def _typed(op):
    def apply(*xs):
        result = np.array(op(*[np.asarray(x) for x in xs]), dtype=_dtype_of(xs[0]))
        return result.item() if all(_is_python_scalar(x) for x in xs) else result
    return apply


def _scaled(xs, factor):
    def scale(x):
        dtype = _dtype_of(x)
        out = np.multiply(np.asarray(x), np.array(factor, dtype=dtype), dtype=dtype)
        return out.item() if _is_python_scalar(x) else out
    return tree_util.tree_map(scale, xs)


def _difference(x, y):
    dtype = _dtype_of(x)
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(invalid='ignore'):
        return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))


def _finite_difference_jvp(f, primals, tangents, step):
    delta = _scaled(tangents, step)
    above = f(*tree_util.tree_map(_typed(np.add), primals, delta))
    below = f(*tree_util.tree_map(_typed(np.subtract), primals, delta))
    return _scaled(tree_util.tree_map(_difference, above, below), 0.5 / step)


def _inner(xs, ys):
    def dot(x, y):
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
    return functools.reduce(np.add, tree_util.tree_leaves(tree_util.tree_map(dot, xs, ys)))


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=_STEP, err_msg=''):
    """The JVP `f_jvp(args, tangents)` of f against finite differences, in one direction drawn from seed 0."""
    rng = np.random.RandomState(0)
    tangent = tree_util.tree_map(functools.partial(_random_like, rng), args)
    value, tangent_out = f_jvp(args, tangent)
    _check_close(value, f(*args), atol, rtol, f'{err_msg} primal' if err_msg else 'primal')
    _check_close(tangent_out, _finite_difference_jvp(f, args, tangent, eps), atol, rtol,
                 f'{err_msg} tangent' if err_msg else 'tangent')


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=_STEP, err_msg=''):
    """The VJP `f_vjp(*args)` of f: <vjp(c), t> against <c, finite-difference jvp(t)>, directions from seed 0."""
    draw = functools.partial(_random_like, np.random.RandomState(0))
    value, pullback = f_vjp(*args)
    _check_close(value, f(*args), atol, rtol, f'{err_msg} primal' if err_msg else 'primal')
    tangent = tree_util.tree_map(draw, args)
    tangent_out = _finite_difference_jvp(f, args, tangent, eps)
    cotangent = tree_util.tree_map(draw, value)
    cotangent_in = tree_util.tree_map(np.conj, pullback(tree_util.tree_map(np.conj, cotangent)))
    _check_close(_inner(tangent, cotangent_in), _inner(tangent_out, cotangent), atol, rtol,
                 f'{err_msg} cotangent projection' if err_msg else 'cotangent projection')


def check_grads(f, args, order, modes=('fwd', 'rev'), atol=None, rtol=None, eps=None):
    """jax.test_util.check_grads: raises AssertionError where a derivative up to `order` disagrees."""
    import jax
    args = tuple(args)
    eps = eps or _STEP

    def check(f, args, order, context):
        if 'fwd' in modes:
            what = f'JVP of {context}' if context else 'JVP'
            check_jvp(f, functools.partial(jax.jvp, f), args, atol, rtol, eps, what)
            if order > 1:
                check(functools.partial(jax.jvp, f), (args, args), order - 1, what)
        if 'rev' in modes:
            what = f'VJP of {context}' if context else 'VJP'
            check_vjp(f, functools.partial(jax.vjp, f), args, atol, rtol, eps, what)
            if order > 1:
                def pulled_back(*args):
                    value, pullback = jax.vjp(f, *args)
                    return pullback(value)
                check(pulled_back, args, order - 1, what)
        if 'lin' in modes:
            what = f'LIN of {context}' if context else 'LIN'

            def via_linearize(fun, primals, tangents):
                value, linear = jax.linearize(fun, *primals)
                return value, linear(*tangents)
            check_jvp(f, functools.partial(via_linearize, f), args, atol, rtol, eps, what)
            if order > 1:
                check(functools.partial(via_linearize, f), (args, args), order - 1, what)
    check(f, args, order, '')
