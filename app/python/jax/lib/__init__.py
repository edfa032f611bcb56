# jax.lib.
from jax.lib import xla_bridge  # noqa: F401
