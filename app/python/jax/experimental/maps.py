# jax.experimental.maps (JAX before 0.4.x moved Mesh to jax.sharding).
import _shardscope

Mesh = _shardscope.Mesh
