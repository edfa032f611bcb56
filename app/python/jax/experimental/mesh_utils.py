# jax.experimental.mesh_utils.
import _shardscope


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False, allow_split_physical_axes=False):
    if isinstance(mesh_shape, int):
        mesh_shape = (mesh_shape,)
    return _shardscope.create_device_mesh(tuple(mesh_shape), devices, contiguous_submeshes, allow_split_physical_axes)
