# jax.numpy: every function is the engine's (C++), emitting the primitives JAX's own jnp emits.
import numpy as _np

import _shardscope

float32, float16, bfloat16, float64 = _np.float32, _np.float16, 'bfloat16', _np.float64
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
bool_ = _np.bool_
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
dtype = _np.dtype
ndarray = _shardscope.ArrayImpl


iinfo, finfo = _np.iinfo, _np.finfo
generic, number, inexact, floating, complexfloating = _np.generic, _np.number, _np.inexact, _np.floating, \
    _np.complexfloating
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger


def issubdtype(arg1, arg2):
    # bfloat16 has no numpy dtype here: it is a floating type like float16.
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


def result_type(*args):
    return _np.result_type(*[getattr(a, 'dtype', a) for a in args])


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    engine = getattr(_shardscope, 'numpy', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.numpy.{name} is not supported by shardscope')
