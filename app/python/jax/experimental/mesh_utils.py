# jax.experimental.mesh_utils.
import _shardscope

# The release from which a mesh shape goes through int() size by size and anything else is refused by name.
_SIZES_CHECKED_FROM = (0, 4, 36)


def canonical_axis_sizes(sizes):
    """Each size through int(), or None when one does not convert. An int is not a sequence: iterating it raises
    Python's TypeError ('int' object is not iterable), which JAX lets through too."""
    converted = []
    for size in sizes:
        try:
            converted.append(int(size))
        except Exception:  # noqa: BLE001 (any failed conversion means "not a sequence of ints")
            return None
    return tuple(converted)


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False, allow_split_physical_axes=False):
    if _shardscope.jax_version_info() >= _SIZES_CHECKED_FROM:
        sizes = canonical_axis_sizes(mesh_shape)
        if sizes is None:
            raise ValueError(f'`mesh_shape` passed to `create_device_mesh` should be a sequence of ints. '
                             f'Got {mesh_shape}')
        mesh_shape = sizes
    elif isinstance(mesh_shape, int):
        # Older releases reshaped the device array to the shape, and numpy takes a bare int as (n,).
        mesh_shape = (mesh_shape,)
    return _shardscope.create_device_mesh(tuple(mesh_shape), devices, contiguous_submeshes, allow_split_physical_axes)
