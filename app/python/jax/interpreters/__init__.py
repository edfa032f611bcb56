# jax.interpreters: the legacy module paths old notebooks name (pxla).
