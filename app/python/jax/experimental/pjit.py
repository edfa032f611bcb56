# jax.experimental.pjit: the names JAX 0.4.x still exported there.
from jax.lax import with_sharding_constraint  # noqa: F401
