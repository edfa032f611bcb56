# jax.experimental.maps (JAX before 0.4.x moved Mesh to jax.sharding): Mesh, the 2021-era `maps.mesh` resource
# environment (until 0.3.7) and xmap, which shardscope does not run.
import contextlib

import _shardscope

if _shardscope.jax_version_info() >= (0, 4, 31):
    # JAX 0.4.31 deleted the module: `from jax.experimental import maps` then fails as for any missing name.
    raise ModuleNotFoundError("No module named 'jax.experimental.maps'", name='jax.experimental.maps')

Mesh = _shardscope.Mesh


@contextlib.contextmanager
def _mesh(devices, axis_names):
    """`with maps.mesh(devices, ('x', 'y')):` enters the Mesh of those devices, as `with Mesh(...):` does."""
    import warnings
    import numpy as np
    if _shardscope.jax_has('maps_mesh_deprecated'):
        warnings.warn('`maps.mesh` context manager is deprecated. Please use `maps.Mesh`.', FutureWarning,
                      stacklevel=3)
    with Mesh(np.asarray(devices, dtype=object), tuple(axis_names)) as entered:
        yield entered


def xmap(fun, in_axes=None, out_axes=None, *args, **kwargs):
    raise NotImplementedError('jax.experimental.maps.xmap is not supported by shardscope (named-axis programs: use '
                              'shard_map)')


def __getattr__(name):
    if name == 'mesh' and not _shardscope.jax_has('maps_mesh_removed'):
        return _mesh
    raise AttributeError(f"module 'jax.experimental.maps' has no attribute '{name}'")


if _shardscope.jax_has('xmap_removed'):
    del xmap
