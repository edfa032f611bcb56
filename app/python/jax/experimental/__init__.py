# jax.experimental.
import _shardscope
from jax.experimental import shard_map, mesh_utils, maps, pjit  # noqa: F401
from jax._src.callback import io_callback  # noqa: F401,E402

PartitionSpec = _shardscope.PartitionSpec
