# jax.sharding: meshes, specs and shardings from the engine.
import enum

import _shardscope
from jax._src.mesh_context import set_mesh, get_abstract_mesh  # noqa: F401
from jax._src.sharding_in_types import reshard, auto_axes, explicit_axes  # noqa: F401
from jax._src.pmap_sharding import PmapSharding  # noqa: F401

Mesh = _shardscope.Mesh
NamedSharding = _shardscope.NamedSharding
SingleDeviceSharding = _shardscope.SingleDeviceSharding
PartitionSpec = _shardscope.PartitionSpec
AxisType = _shardscope.AxisType
AbstractMesh = _shardscope.AbstractMesh


class UnreducedKind(enum.Enum):
    """How an unreduced value's per-device parts combine (jax.sharding.UnreducedKind)."""
    sum = enum.auto()
    max = enum.auto()
    min = enum.auto()


class _Unconstrained:
    _shardscope_unconstrained = True

    def __repr__(self):
        return 'UNCONSTRAINED'


PartitionSpec.UNCONSTRAINED = _Unconstrained()
P = PartitionSpec


class Sharding:
    pass



def _accept_none_spec():
    # JAX's NamedSharding(mesh, None) means replicated (ParsedPartitionSpec.from_user_input maps None to no
    # sharded dims); the engine's constructor takes a PartitionSpec or a tuple.
    engine_init = NamedSharding.__init__

    def __init__(self, mesh, spec, *args, **kwargs):
        if isinstance(spec, list):
            raise TypeError("unhashable type: 'list'")  # JAX hashes the spec while building the sharding
        engine_init(self, mesh, PartitionSpec() if spec is None else spec, *args, **kwargs)
    NamedSharding.__init__ = __init__


_accept_none_spec()


def __getattr__(name):
    # jax.sharding.use_mesh existed from 0.5.0 until 0.8.0 removed it in favour of jax.set_mesh.
    if name == 'PositionalSharding':
        import jax
        # Deprecated in 0.6.0 and gone from jax.sharding in 0.7.0.
        if tuple(int(part) for part in jax.__version__.split('.')[:3]) < (0, 7, 0):
            from jax._src.positional_sharding import PositionalSharding
            return PositionalSharding
    if name == 'use_abstract_mesh':
        import _shardscope
        # Public from 0.7.2, to override the mesh inside jit.
        if _shardscope.jax_version_info() >= (0, 7, 2):
            return _shardscope.use_abstract_mesh
    if name == 'use_mesh':
        import jax
        version = tuple(int(part) for part in jax.__version__.split('.')[:3])
        if (0, 5, 0) <= version < (0, 8, 0):
            from jax._src.mesh_context import use_mesh
            return use_mesh
    import sys
    # name and obj let the traceback suggest a close name ("Did you mean: 'set_mesh'?") as for any module.
    raise AttributeError(f"module 'jax.sharding' has no attribute '{name}'", name=name, obj=sys.modules[__name__])
