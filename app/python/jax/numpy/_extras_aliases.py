# jax.numpy's array-API names (numpy 2's aliases: acos, concat, pow, permute_dims...) and small functions over the
# engine's jnp: index helpers, cumulative_sum/prod, isin, vector products, scalar tests and print options.
import builtins as _builtins

import numpy as _np

from jax.numpy._extras_util import jnp as _jnp


def _alias(target, name):
    def alias(*args, **kwargs):
        return getattr(_jnp(), target)(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = name
    return alias


_ALIASES = {'acos': 'arccos', 'asin': 'arcsin', 'atan': 'arctan', 'acosh': 'arccosh', 'asinh': 'arcsinh',
            'atanh': 'arctanh', 'atan2': 'arctan2', 'pow': 'power', 'bitwise_invert': 'invert'}
globals().update({name: _alias(target, name) for name, target in _ALIASES.items()})

euler_gamma = _np.euler_gamma
s_ = _np.s_
index_exp = _np.index_exp
get_printoptions = _np.get_printoptions
set_printoptions = _np.set_printoptions
printoptions = _np.printoptions


def concat(arrays, /, *, axis=0):
    return _jnp().concatenate(arrays, axis=axis)


def permute_dims(a, /, axes):
    return _jnp().transpose(a, axes)


def nextafter(x1, x2, /):
    from jax import lax
    jnp = _jnp()
    dtype = jnp.result_type(x1, x2)
    if not jnp.issubdtype(dtype, jnp.floating):
        dtype = jnp.result_type(float)
    return lax.nextafter(jnp.asarray(x1, dtype), jnp.asarray(x2, dtype))


def bitwise_count(x, /):
    """The number of 1 bits in each element's absolute value, as uint8."""
    from jax import lax
    x = _jnp().asarray(x)
    if not _jnp().issubdtype(x.dtype, _jnp().integer) and x.dtype != _jnp().bool_:
        raise TypeError(f'bitwise_count requires integer or boolean arguments, got {x.dtype}')
    return lax.population_count(_jnp().abs(x) if _jnp().issubdtype(x.dtype, _jnp().signedinteger) else x).astype(
        _jnp().uint8)


def isscalar(element):
    """Python and numpy scalars, and zero-dimensional arrays (JAX counts those as scalars, numpy does not)."""
    if hasattr(element, '__jax_array__'):
        element = element.__jax_array__()
    if isinstance(element, (_builtins.bool, int, float, complex, _np.generic)):
        return True
    if getattr(element, '_is_tracer', None) is not None or type(element).__name__ == 'ArrayImpl':
        return element.ndim == 0
    if isinstance(element, _np.ndarray):
        return element.ndim == 0
    return False


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


def _cumulative(name, x, axis, dtype, include_initial):
    jnp = _jnp()
    x = jnp.asarray(x)
    kind = 'sum' if name == 'cumulative_sum' else 'product'
    if x.ndim == 0:
        raise ValueError(f'The input must be non-scalar to take a cumulative {kind}, however a scalar value or '
                         'scalar array was given.')
    if axis is None:
        axis = 0
        if x.ndim > 1:
            raise ValueError(f'The input array has rank {x.ndim}, however axis was not set to an explicit value. The '
                             'axis argument is only optional for one-dimensional arrays.')
    axis = axis % x.ndim
    out = jnp.cumsum(x, axis=axis, dtype=dtype) if kind == 'sum' else jnp.cumprod(x, axis=axis, dtype=dtype)
    if include_initial:
        first = list(x.shape)
        first[axis] = 1
        out = jnp.concatenate([jnp.full(first, 0 if kind == 'sum' else 1, dtype=out.dtype), out], axis=axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative('cumulative_sum', x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative('cumulative_prod', x, axis, dtype, include_initial)


def _index_pair(rows, cols):
    jnp = _jnp()
    return jnp.asarray(rows, jnp.int32), jnp.asarray(cols, jnp.int32)


def tril_indices(n, k=0, m=None):
    return _index_pair(*_np.tril_indices(int(n), int(k), None if m is None else int(m)))


def triu_indices(n, k=0, m=None):
    return _index_pair(*_np.triu_indices(int(n), int(k), None if m is None else int(m)))


def _check_2d(arr, name):
    shape = _np.shape(arr)
    if len(shape) != 2:
        raise ValueError(f'{name} requires a 2-dimensional array; got shape {shape}')
    return shape


def tril_indices_from(arr, k=0):
    rows, cols = _check_2d(arr, 'tril_indices_from')
    return tril_indices(rows, k, cols)


def triu_indices_from(arr, k=0):
    rows, cols = _check_2d(arr, 'triu_indices_from')
    return triu_indices(rows, k, cols)


def diag_indices(n, ndim=2):
    if n < 0:
        raise ValueError(f'n argument to diag_indices must be nonnegative, got {n}')
    if ndim < 0:
        raise ValueError(f'ndim argument to diag_indices must be nonnegative, got {ndim}')
    return (_jnp().arange(n, dtype=_jnp().int32),) * ndim


def diag_indices_from(arr):
    shape = _np.shape(arr)
    if len(shape) < 2:
        raise ValueError('input array must be at least 2-d')
    if len(set(shape)) != 1:
        raise ValueError('All dimensions of input must be of equal length')
    return diag_indices(shape[0], len(shape))


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to val (cycled); JAX arrays are immutable, so inplace=False is required."""
    if inplace:
        raise NotImplementedError('JAX arrays are immutable, must use inplace=False')
    if wrap:
        raise NotImplementedError('wrap=True is not implemented, must use wrap=False')
    jnp = _jnp()
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise ValueError('array must be at least 2-d')
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError('All dimensions of input must be of equal length')
    n = min(a.shape)
    idx = jnp.arange(n)
    values = jnp.ravel(jnp.asarray(val, a.dtype))
    values = jnp.resize(values, (n,)) if values.size else values
    return a.at[(idx,) * a.ndim].set(values)


def isin(element, test_elements, assume_unique=False, invert=False, *, method='auto'):
    """Whether each element occurs in test_elements: every pair compared (what JAX's method='compare_all' does)."""
    jnp = _jnp()
    element = jnp.asarray(element)
    tests = jnp.ravel(jnp.asarray(test_elements))
    found = (element[..., None] == tests).any(axis=-1) if tests.size else jnp.zeros(element.shape, bool)
    return ~found if invert else found


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of vectors along `axis` of the broadcast operands (the first conjugated)."""
    jnp = _jnp()
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f'x1 and x2 must have the same size along axis={axis}; got shapes {x1.shape} and '
                         f'{x2.shape}')
    x1, x2 = jnp.moveaxis(x1, axis, -1), jnp.moveaxis(x2, axis, -1)
    out = jnp.einsum('...i,...i->...', jnp.conj(x1), x2)
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def matvec(x1, x2, /):
    """Matrix-vector products over broadcast batch dimensions: x1 [..., m, n], x2 [..., n]."""
    return _jnp().einsum('...mn,...n->...m', x1, x2)


def vecmat(x1, x2, /):
    """Vector-matrix products over broadcast batch dimensions: x1 [..., m], x2 [..., m, n] (x1 conjugated)."""
    jnp = _jnp()
    return jnp.einsum('...m,...mn->...n', jnp.conj(x1), x2)


__all__ = [*_ALIASES, 'euler_gamma', 's_', 'index_exp', 'get_printoptions', 'set_printoptions', 'printoptions',
           'concat', 'permute_dims', 'nextafter', 'bitwise_count', 'isscalar', 'iterable', 'cumulative_sum',
           'cumulative_prod', 'tril_indices', 'triu_indices', 'tril_indices_from', 'triu_indices_from',
           'diag_indices', 'diag_indices_from', 'fill_diagonal', 'isin', 'vecdot', 'matvec', 'vecmat']
