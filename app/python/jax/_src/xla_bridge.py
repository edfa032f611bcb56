# jax._src.xla_bridge: whether JAX has created its backends (the device set), which notebooks ask before setting
# jax_num_cpu_devices; querying the devices creates them, as xla_bridge.backends() does.
_state = {'initialized': False}


def backends_are_initialized() -> bool:
    return _state['initialized']


def _mark_initialized():
    _state['initialized'] = True
