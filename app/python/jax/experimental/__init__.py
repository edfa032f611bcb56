# jax.experimental.
import _shardscope
from jax.experimental import shard_map, mesh_utils, pjit  # noqa: F401
# jax.experimental.maps is imported on first use: JAX 0.4.31 removed it.
from jax._src.callback import io_callback  # noqa: F401,E402


def __getattr__(name):
    # jax.experimental.PartitionSpec: deprecated from 0.4.4 (a DeprecationWarning), gone in 0.4.11.
    if name == 'PartitionSpec' and _shardscope.jax_version_info() < (0, 4, 11):
        if _shardscope.jax_version_info() >= (0, 4, 4):
            import warnings
            warnings.warn('jax.experimental.PartitionSpec is deprecated. Use jax.sharding.PartitionSpec.',
                          DeprecationWarning, stacklevel=2)
        return _shardscope.PartitionSpec
    import sys
    raise AttributeError(f"module 'jax.experimental' has no attribute '{name}'", name=name, obj=sys.modules[__name__])
