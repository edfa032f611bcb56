# jax.lib: xla_bridge through JAX 0.8 (JAX 0.9 removed the module).
import _shardscope

if _shardscope.jax_version_info() < (0, 9):
    from jax.lib import xla_bridge  # noqa: F401
