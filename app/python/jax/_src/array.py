# Pickling and copying of jax.Array: JAX rebuilds a copy from its host value, placed on the default device.
import numpy as np


def _reconstruct_array(fun, args, arr_state, aval_state):
    """Rebuilds an array from the numpy state `reduce_array` saved (JAX's array._reconstruct_array)."""
    import jax
    import _shardscope
    np_value = fun(*args)
    np_value.__setstate__(arr_state)
    value = jax.device_put(np_value)
    if aval_state.get('weak_type'):
        value = _shardscope.lax._convert_element_type(value, value.dtype, True)
    return value


def reduce_array(self):
    """ArrayImpl.__reduce__: the host value's numpy reduction plus the weak type (tracers refuse, as in JAX)."""
    value = np.asarray(self)
    fun, args, arr_state = value.__reduce__()
    return (_reconstruct_array, (fun, args, arr_state, {'weak_type': bool(self.weak_type)}))
