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


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    engine = getattr(_shardscope, 'numpy', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.numpy.{name} is not supported by shardscope')
