# jax.experimental.
import _shardscope
from jax.experimental import shard_map, mesh_utils, maps, pjit  # noqa: F401

PartitionSpec = _shardscope.PartitionSpec
