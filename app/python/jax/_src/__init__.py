# Internals of shardscope's simulated jax package.
