# jax.experimental.
import _shardscope
from jax.experimental import shard_map, mesh_utils, pjit  # noqa: F401
# jax.experimental.maps is imported on first use: JAX 0.4.31 removed it.
from jax._src.callback import io_callback  # noqa: F401,E402


def __getattr__(name):
    # jax.experimental.PartitionSpec: deprecated from 0.4.4 (a DeprecationWarning), gone in 0.4.11.
    from jax._src.deprecations import deprecated_attribute
    if name == 'PartitionSpec':
        return deprecated_attribute(__name__, name, lambda: _shardscope.PartitionSpec,
                                    'jax.experimental.PartitionSpec is deprecated. Use jax.sharding.PartitionSpec.',
                                    warned_from=(0, 4, 4), removed_in=(0, 4, 11))
    import sys
    raise AttributeError(f"module 'jax.experimental' has no attribute '{name}'", name=name, obj=sys.modules[__name__])
