# jax.tools.
