# jax.config: the flags shardscope honours (the rest are kept and ignored, as JAX's own config would store them).
import _shardscope


class _Config:
    def __init__(self):
        self._values = {'jax_enable_x64': False, 'jax_threefry_partitionable': True, 'jax_platforms': None,
                        'jax_num_cpu_devices': -1, 'jax_default_prng_impl': 'threefry2x32'}

    def update(self, name, value):
        if name == 'jax_enable_x64':
            _shardscope.set_enable_x64(bool(value))
        elif name == 'jax_threefry_partitionable':
            _shardscope.set_threefry_partitionable(bool(value))
        elif name == 'jax_default_prng_impl' and value != 'threefry2x32':
            raise NotImplementedError(f"jax_default_prng_impl={value!r} is not supported by shardscope (only "
                                      "'threefry2x32')")
        elif name == 'jax_num_cpu_devices':
            # Only the CPU backend grows; on a TPU or GPU machine jax.devices() keeps the accelerators.
            if _shardscope.device_preset().startswith('cpu'):
                _shardscope.set_device_preset(f'cpu:{int(value)}')
        elif name == 'jax_platforms' and value and str(value).split(',')[0] == 'cpu':
            if not _shardscope.device_preset().startswith('cpu'):
                _shardscope.set_device_preset('cpu:1')
        self._values[name] = value

    def __getattr__(self, name):
        if name.startswith('jax_'):
            return self._values.get(name)
        raise AttributeError(name)

    def read(self, name):
        return self._values.get(name)


config = _Config()
update = config.update
