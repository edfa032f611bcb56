# jax.numpy's scalar types: classes named like numpy's scalar types whose call builds a JAX array, as JAX's do.
import numpy as np

from jax import dtypes as _dtypes


class _ScalarMeta(type):
    """jnp.float32 and friends: equal to numpy's scalar type, usable wherever a dtype is, and a constructor of
    0-d arrays (JAX has no scalar objects of its own)."""

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __call__(cls, x):
        import jax.numpy as jnp
        return jnp.asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)


def _make_scalar_type(name, dtype):
    # `_shardscope_dtype` lets the engine read the type without asking numpy (which has no bfloat16 here).
    namespace = {'dtype': dtype}
    if getattr(dtype, 'kind', '') != 'c':  # complex types are not simulated: the engine reports them itself
        namespace['_shardscope_dtype'] = str(dtype)
    scalar = _ScalarMeta(name, (object,), namespace)
    scalar.__module__ = 'jax.numpy'
    scalar.__doc__ = (f'A JAX scalar constructor of type {name}.\n\n  While NumPy defines scalar types for each data '
                      'type, JAX represents\n  scalars as zero-dimensional arrays.\n  ')
    return scalar


bool_ = _make_scalar_type('bool', np.dtype(np.bool_))
uint8, uint16, uint32, uint64 = (_make_scalar_type(n, np.dtype(n)) for n in ('uint8', 'uint16', 'uint32', 'uint64'))
int8, int16, int32, int64 = (_make_scalar_type(n, np.dtype(n)) for n in ('int8', 'int16', 'int32', 'int64'))
bfloat16 = _make_scalar_type('bfloat16', _dtypes.bfloat16_dtype)
float16, float32, float64 = (_make_scalar_type(n, np.dtype(n)) for n in ('float16', 'float32', 'float64'))
complex64, complex128 = (_make_scalar_type(n, np.dtype(n)) for n in ('complex64', 'complex128'))
single, double, csingle, cdouble = float32, float64, complex64, complex128
int_, uint, float_, complex_ = int64, uint64, float64, complex128


class _DtypeMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, (np.dtype, _dtypes._BFloat16Dtype))

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, (np.dtype, _dtypes._BFloat16Dtype))


class dtype(metaclass=_DtypeMeta):
    """jnp.dtype: numpy's dtype constructor that also knows bfloat16 (and JAX's scalar types)."""

    def __new__(cls, obj, align=False, copy=False):
        if isinstance(obj, _ScalarMeta):
            return obj.dtype
        if isinstance(obj, _dtypes._BFloat16Dtype) or getattr(obj, '_shardscope_dtype', None) == 'bfloat16' or \
                (isinstance(obj, str) and obj == 'bfloat16'):
            return _dtypes.bfloat16_dtype
        return np.dtype(obj, align=align, copy=copy)


dtype.__module__ = 'numpy'
