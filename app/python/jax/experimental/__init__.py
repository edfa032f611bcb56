# jax.experimental.
import _shardscope
from jax.experimental import shard_map, mesh_utils, pjit  # noqa: F401
# jax.experimental.maps is imported on first use: JAX 0.4.31 removed it.
from jax._src.callback import io_callback  # noqa: F401,E402

PartitionSpec = _shardscope.PartitionSpec
