# jax.experimental.
from jax.experimental import shard_map, mesh_utils  # noqa: F401
