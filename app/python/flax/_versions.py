# Which Flax/optax behaviour a JAX version profile implies: the tutorials' recordings pair each JAX release with
# the Flax and optax of the same months, so printed forms are keyed by the profile's JAX version.


def jax_version():
    # The engine's current profile (jax.__version__ is fixed when jax is first imported).
    import _shardscope
    return tuple(int(part) for part in _shardscope.jax_version().split('.')[:3])


def returns_frozen_dicts():
    """Flax 0.7.1 (July 2023, next to jax 0.4.14) moved init/apply from FrozenDict to plain dicts."""
    return jax_version() < (0, 4, 15)


def boxes_print_mesh():
    """Partitioned gained its `mesh` field (and LogicallyPartitioned `rules`) in early 2023 (Flax 0.6.5)."""
    return jax_version() >= (0, 4, 7)


def unboxed_leaves_get_empty_spec():
    """get_partition_spec: arrays outside a box got PartitionSpec() (earlier None) from Flax 0.6.5 on."""
    return jax_version() >= (0, 4, 7)


def optax_chain_has_extra_args():
    """optax.chain returns GradientTransformationExtraArgs in the optax of jax >= 0.4.15's time."""
    return jax_version() >= (0, 4, 15)


def nnx_variables_shard_eagerly():
    """Flax 0.12 (September 2025, next to jax 0.7.2) shards annotated nnx Variables when they are created,
    renames their `sharding` metadata to `out_sharding` and records hijax/ref/eager_sharding on each."""
    return jax_version() >= (0, 7, 2)
