# jax.dtypes: canonical dtypes under the x64 flag, bfloat16, float0, the abstract extended/prng_key types and
# JAX's type promotion (weak Python scalars included).
import numpy as np

import _shardscope
from jax._src.prng import extended, prng_key  # noqa: F401

float0 = np.dtype([('float0', np.void, 0)])


class bfloat16:
    """The scalar type of bfloat16 values, standing in for ml_dtypes' (which this numpy lacks): what
    jax.dtypes.bfloat16 and jnp.dtype(jnp.bfloat16).type are."""
    _shardscope_dtype = 'bfloat16'


bfloat16.__module__ = 'ml_dtypes'


class _BFloat16Dtype:
    """The dtype of bfloat16 values: this numpy has no ml_dtypes, so this object stands in with the name, str,
    repr, itemsize and equalities ml_dtypes' dtype has."""
    name = 'bfloat16'
    kind = 'V'
    char = 'E'
    itemsize = 2
    _shardscope_dtype = 'bfloat16'

    @property
    def type(self):
        return bfloat16

    def __repr__(self):
        return 'dtype(bfloat16)'

    def __str__(self):
        return 'bfloat16'

    def __eq__(self, other):
        if isinstance(other, (_BFloat16Dtype, str)):
            return str(other) == 'bfloat16'
        return getattr(other, '_shardscope_dtype', None) == 'bfloat16'

    def __hash__(self):
        return hash('bfloat16')


# Named as numpy 1.x names a dtype's class, so type(x.dtype) reads as it does with ml_dtypes installed.
_BFloat16Dtype.__module__, _BFloat16Dtype.__name__, _BFloat16Dtype.__qualname__ = 'numpy', 'dtype[bfloat16]', \
    'dtype[bfloat16]'
bfloat16_dtype = _BFloat16Dtype()

_NARROW = {np.dtype('float64'): np.dtype('float32'), np.dtype('int64'): np.dtype('int32'),
           np.dtype('uint64'): np.dtype('uint32'), np.dtype('complex128'): np.dtype('complex64')}


def dtype(x):
    """A dtype object for any dtype-like (bfloat16 included), not canonicalized."""
    if isinstance(x, _BFloat16Dtype) or (isinstance(x, str) and x == 'bfloat16') or \
            getattr(x, '_shardscope_dtype', None) == 'bfloat16':
        return bfloat16_dtype
    if isinstance(x, type) and isinstance(getattr(x, 'dtype', None), np.dtype):
        return x.dtype  # jnp.float32 and the other scalar types
    if isinstance(x, type) and issubclass(x, extended):
        return x
    if hasattr(x, 'dtype') and not isinstance(x, type):
        return dtype(x.dtype)
    if x is float:
        return np.dtype('float64')
    if x is int:
        return np.dtype('int64')
    return np.dtype(x)


def canonicalize_dtype(dtype_like, allow_extended_dtype=False):
    value = dtype(dtype_like)
    if isinstance(value, type):
        if allow_extended_dtype:
            return value
        raise ValueError(f'Internal: canonicalize_dtype called on extended dtype {value} with '
                         'allow_extended_dtype=False')
    if isinstance(value, _BFloat16Dtype) or _shardscope.enable_x64():
        return value
    return _NARROW.get(value, value)


def issubdtype(a, b):
    import jax.numpy as jnp
    return jnp.issubdtype(a, b)


def _as_value(x):
    import jax.numpy as jnp
    if isinstance(x, (str, np.dtype, _BFloat16Dtype)) or isinstance(x, type):
        return jnp.zeros((), canonicalize_dtype(x))  # a dtype given as such is strongly typed
    if hasattr(x, 'dtype') and not hasattr(x, 'shape'):
        return jnp.zeros((), canonicalize_dtype(x.dtype))
    return x


def result_type(*args, return_weak_type_flag=False):
    if not args:
        raise ValueError('at least one array or dtype is required')
    name, weak = _shardscope.numpy._result_type([_as_value(a) for a in args])
    out = dtype(name)
    return (out, weak) if return_weak_type_flag else out


def is_weakly_typed(x):
    # A Python int, float or complex (exactly: not bool, nor numpy's float64, a float subclass), or a weak array.
    if type(x) in (int, float, complex):
        return True
    return bool(getattr(x, 'weak_type', False))
