# Which Flax/optax behaviour a JAX version profile implies: the tutorials' recordings pair each JAX release with
# the Flax and optax of the same months, so printed forms are keyed by the profile's JAX version.


def jax_version():
    # The engine's current profile (jax.__version__ is fixed when jax is first imported).
    import _shardscope
    return _shardscope.jax_version_info()


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


# The Flax release current when each JAX release came out (the notebooks' recordings pair them so), newest first.
_FLAX_OF_JAX = (
    ((0, 11, 0), (0, 12, 10)),
    ((0, 8, 2), (0, 12, 2)),
    ((0, 8, 1), (0, 12, 1)),
    ((0, 7, 2), (0, 12, 0)),
    ((0, 7, 0), (0, 11, 1)),
    ((0, 6, 2), (0, 10, 7)),
    ((0, 6, 0), (0, 10, 6)),
    ((0, 5, 3), (0, 10, 5)),
    ((0, 5, 1), (0, 10, 4)),
    ((0, 4, 34), (0, 10, 0)),
    ((0, 4, 31), (0, 8, 5)),
)


def flax_version():
    """The Flax release paired with the profile's JAX release (0.8.5 for anything older than jax 0.4.31)."""
    profile = jax_version()
    for jax_release, flax_release in _FLAX_OF_JAX:
        if profile >= jax_release:
            return flax_release
    return (0, 8, 5)
