# jax.lib.xla_bridge: the backend the simulated devices belong to; gone from JAX 0.9 on.
import _shardscope

if _shardscope.jax_version_info() >= (0, 9):
    raise ModuleNotFoundError("No module named 'jax.lib.xla_bridge'", name='jax.lib.xla_bridge')


class _Backend:
    @property
    def platform(self):
        return _shardscope.devices()[0].platform


def get_backend(platform=None):
    return _Backend()
