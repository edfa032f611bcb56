# jax.numpy: every function is the engine's (C++), emitting the primitives JAX's own jnp emits.
import numpy as _np

import _shardscope

from jax._src.scalar_types import (  # noqa: E402,F401
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, float16, float32, float64, complex64,
    complex128, single, double, csingle, cdouble, int_, uint, float_, complex_, dtype, _ScalarMeta)
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
ndarray = _shardscope.ArrayImpl
_engine = _shardscope.numpy


iinfo, finfo = _np.iinfo, _np.finfo
generic, number, inexact, floating, complexfloating = _np.generic, _np.number, _np.inexact, _np.floating, \
    _np.complexfloating
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger


def issubdtype(arg1, arg2):
    # JAX's scalar types stand for their dtypes; bfloat16 has no numpy dtype here: it is a floating type like float16.
    if isinstance(arg1, _ScalarMeta):
        arg1 = arg1.dtype
    if isinstance(arg2, _ScalarMeta):
        arg2 = arg2.dtype
    if str(arg1) == 'bfloat16' or str(arg2) == 'bfloat16':
        if str(arg1) == str(arg2):
            return True
        return str(arg1) == 'bfloat16' and arg2 in (floating, inexact, number, generic)
    return _np.issubdtype(arg1, arg2)


def shape(a):
    return tuple(a.shape) if hasattr(a, 'shape') else _np.shape(a)


def ndim(a):
    return len(shape(a))


def size(a, axis=None):
    dims = shape(a)
    if axis is not None:
        return dims[axis]
    import math
    return math.prod(dims)


def result_type(*args, return_weak_type_flag=False):
    from jax import dtypes as _dtypes
    return _dtypes.result_type(*args, return_weak_type_flag=return_weak_type_flag)


def promote_types(a, b):
    from jax import dtypes as _dtypes
    return _dtypes.result_type(_dtypes.dtype(a), _dtypes.dtype(b))


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError('Either both or neither of the x and y arguments should be provided to jax.numpy.where, '
                         f'got {x} and {y}.')
    return _shardscope.numpy.where(condition, x, y)


def nonzero(a, *, size=None, fill_value=None):
    # The output shape depends on the values: only concrete arrays (or a static size) can answer.
    if getattr(a, '_is_tracer', False):
        if size is None:
            # JAX's text: the count of nonzero entries (an int32 scalar) is what is not concrete.
            from jax.errors import ConcretizationTypeError, _ShapeOnly
            raise ConcretizationTypeError(_ShapeOnly('int32[]'), 'The size argument of jnp.nonzero must be statically '
                                          'specified to use jnp.nonzero within JAX transformations.')
        raise NotImplementedError('jax.numpy.nonzero (and one-argument where) of a traced value with size= is not '
                                  'supported by shardscope yet')
    found = _np.nonzero(_np.asarray(a))
    if size is not None:
        fill = 0 if fill_value is None else fill_value
        found = tuple(_np.concatenate([f[:size], _np.full(max(0, size - len(f)), fill, f.dtype)]) for f in found)
    return tuple(_shardscope.numpy.asarray(f.astype(_np.int32)) for f in found)


def atleast_1d(*arys):
    out = [_engine.asarray(a) if getattr(_engine.asarray(a), 'ndim', 0) >= 1 else _engine.reshape(a, (1,)) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    def one(a):
        a = _engine.asarray(a)
        return a if a.ndim >= 2 else _engine.reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape))
    out = [one(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    def one(a):
        a = _engine.asarray(a)
        if a.ndim == 0:
            return _engine.reshape(a, (1, 1, 1))
        if a.ndim == 1:
            return _engine.reshape(a, (1, a.shape[0], 1))
        return _engine.reshape(a, tuple(a.shape) + (1,)) if a.ndim == 2 else a
    out = [one(a) for a in arys]
    return out[0] if len(out) == 1 else out


def hstack(tup, dtype=None):
    arrs = [atleast_1d(a) for a in tup]
    out = _engine.concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1)
    return out if dtype is None else out.astype(dtype)


def vstack(tup, dtype=None):
    out = _engine.concatenate([atleast_2d(a) for a in tup], axis=0)
    return out if dtype is None else out.astype(dtype)


def dstack(tup, dtype=None):
    out = _engine.concatenate([atleast_3d(a) for a in tup], axis=2)
    return out if dtype is None else out.astype(dtype)


def column_stack(tup):
    return _engine.concatenate([_engine.reshape(a, (-1, 1)) if _engine.asarray(a).ndim < 2 else _engine.asarray(a) for a in tup], axis=1)


def identity(n, dtype=None):
    return _engine.eye(n, dtype=dtype)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    # XLA has no uninitialised buffers: jnp.empty is zeros, as in JAX.
    from jax._src import numpy_signatures
    numpy_signatures._check_forgot_shape_tuple('empty', shape, dtype)
    return numpy_signatures.zeros(shape, dtype, device=device, out_sharding=out_sharding)


def moveaxis(a, source, destination):
    a = _engine.asarray(a)
    source = [source] if isinstance(source, int) else list(source)
    destination = [destination] if isinstance(destination, int) else list(destination)
    source = [s % a.ndim for s in source]
    destination = [d % a.ndim for d in destination]
    perm = [i for i in range(a.ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        perm.insert(dest, src)
    return _engine.transpose(a, perm)


def matrix_transpose(x):
    return _engine.swapaxes(x, -1, -2)


def flip(m, axis=None):
    m = _engine.asarray(m)
    axes = range(m.ndim) if axis is None else ([axis] if isinstance(axis, int) else axis)
    axes = {ax % m.ndim for ax in axes}
    return m[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(m.ndim))]


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


from jax._src.numpy_signatures import sum, prod, max, min, amax, amin, array, asarray  # noqa: E402,F401,A004
from jax._src.numpy_signatures import zeros, ones, full, dot, matmul, reshape  # noqa: E402,F401
from jax._src.numpy_signatures import zeros_like, ones_like, full_like, empty_like, repeat, tile  # noqa: E402,F401
from jax._src.numpy_signatures import mean, var, std, masked_any as any, masked_all as all  # noqa: E402,F401,A004


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    # jnp.unstack arrived in 0.4.27.
    if name == 'unstack' and _shardscope.jax_version_info() < (0, 4, 27):
        raise AttributeError(f"module 'jax.numpy' has no attribute '{name}'")
    engine = getattr(_shardscope, 'numpy', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.numpy.{name} is not supported by shardscope')


from jax.numpy._extras import *  # noqa: E402,F401,F403 (functions the engine lacks, written over it in Python)

import importlib as _importlib  # noqa: E402

linalg = _importlib.import_module('jax.numpy.linalg')
