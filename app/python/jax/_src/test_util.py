# jax._src.test_util: the mesh helper JAX's own tests and docs build meshes with (the rest is JAX's test harness).
import math
import unittest

import jax


def create_mesh(mesh_shape, axis_names, iota_order=False, axis_types=None):
    """A mesh of the first prod(mesh_shape) devices; the test is skipped when there are fewer. In device-id order
    with iota_order, otherwise as jax.make_mesh lays it out, every axis Auto unless axis_types says otherwise."""
    size = math.prod(mesh_shape)
    devices = jax.devices()
    if len(devices) < size:
        raise unittest.SkipTest(f'Test requires {size} global devices and found {len(devices)}.')
    if iota_order:
        import numpy as np
        mesh_devices = np.array(sorted(devices, key=lambda d: d.id)[:size]).reshape(mesh_shape)
        return jax.sharding.Mesh(mesh_devices, axis_names, axis_types=axis_types)
    if axis_types is None:
        axis_types = (jax.sharding.AxisType.Auto,) * len(mesh_shape)
    return jax.make_mesh(mesh_shape, axis_names, axis_types)
