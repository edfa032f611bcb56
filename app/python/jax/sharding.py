# jax.sharding: meshes, specs and shardings from the engine.
import dataclasses
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
    # NamedSharding(mesh, None): replicated until 0.5.3 (ParsedPartitionSpec.from_user_input mapped None to no
    # sharded dims); from 0.5.3 check_pspec iterates the spec and fails; from 0.11 the constructor is C++ and its
    # argument conversion rejects None. The engine's constructor takes a PartitionSpec or a tuple.
    engine_init = NamedSharding.__init__

    def __init__(self, mesh, spec, *args, **kwargs):
        if isinstance(spec, list):
            raise TypeError("unhashable type: 'list'")  # JAX hashes the spec while building the sharding
        if spec is None:
            version = _shardscope.jax_version_info()
            if version >= (0, 11, 0):
                raise TypeError(_cpp_init_mismatch((self, mesh, spec) + args))
            if version >= (0, 5, 3):
                raise TypeError("'NoneType' object is not iterable")
            spec = PartitionSpec()
        if args and _shardscope.jax_version_info() >= (0, 11, 0):
            # The C++ constructor takes memory_kind (and _logical_device_ids) positionally too.
            if len(args) > 2 or 'memory_kind' in kwargs:
                raise TypeError(_cpp_init_mismatch((self, mesh, spec) + args))
            kwargs['memory_kind'], args = args[0], ()
        engine_init(self, mesh, spec, *args, **kwargs)
    NamedSharding.__init__ = __init__


def _cpp_init_mismatch(arguments):
    """The message of JAX's C++ NamedSharding constructor (0.11 on) for arguments it cannot convert."""
    def type_name(value):
        kind = type(value)
        if isinstance(value, (NamedSharding, PartitionSpec)):
            return 'jax.sharding.' + kind.__name__
        if isinstance(value, (_shardscope.Mesh, _shardscope.AbstractMesh)):
            return 'jax._src.mesh.' + kind.__name__
        return kind.__qualname__ if kind.__module__ == 'builtins' else f'{kind.__module__}.{kind.__qualname__}'
    return ('__init__(): incompatible function arguments. The following argument types are supported:\n'
            '    1. __init__(self, mesh: object, spec: object, memory_kind: object | None = None, '
            '_logical_device_ids: object | None = None) -> None\n\n'
            'Invoked with types: ' + ', '.join(type_name(a) for a in arguments))


_accept_none_spec()


class _HloSharding:
    """XLA's HloSharding of a sharding (sharding._to_xla_hlo_sharding(ndim)): prints as XLA's text,
    {devices=[4,1,2]<=[8] last_tile_dim_replicate}."""

    def __init__(self, text):
        self._text = text

    def __repr__(self):
        return self._text

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, _HloSharding) and other._text == self._text

    def __hash__(self):
        return hash(self._text)

    def is_replicated(self):
        return self._text == '{replicated}'


def _to_xla_hlo_sharding(self, num_dimensions):
    return _HloSharding(_shardscope.sharding_notations(self, num_dimensions)['hlo'])


NamedSharding._to_xla_hlo_sharding = _to_xla_hlo_sharding


def _get_mesh():
    """The concrete mesh jax.set_mesh installed; only outside jit."""
    from jax._src.mesh_context import concrete_mesh
    if _shardscope.debug.in_trace():
        raise ValueError('`get_mesh` can only be used outside of `jax.jit`. Maybe you want '
                         '`jax.sharding.get_abstract_mesh()`?')
    mesh = concrete_mesh()
    if mesh is None:
        # JAX answers with an empty Mesh(), which the engine's meshes cannot be.
        raise NotImplementedError('jax.sharding.get_mesh() with no mesh set (an empty Mesh in JAX) is not supported '
                                  'by shardscope')
    return mesh


def _make_single_device_sharding(device, *, memory_kind=None):
    return SingleDeviceSharding(device, memory_kind=memory_kind)


@dataclasses.dataclass(frozen=True)
class _AbstractDevice:
    """A device known only by its kind, core count and platform (an AbstractMesh's devices)."""
    device_kind: str
    num_cores: int = None
    platform: str = None

    def __repr__(self):
        return f'AbstractDevice(device_kind={self.device_kind}, num_cores={self.num_cores}, platform={self.platform})'


_AbstractDevice.__name__ = _AbstractDevice.__qualname__ = 'AbstractDevice'


def __getattr__(name):
    import sys
    from jax._src.deprecations import deprecated_attribute
    version = _shardscope.jax_version_info()
    if name == 'PositionalSharding':
        # Deprecated in 0.6.0, 0.7.0 names its removal, and from 0.7.1 jax.sharding no longer knows it.
        def positional():
            from jax._src.positional_sharding import PositionalSharding
            return PositionalSharding
        return deprecated_attribute(
            __name__, name, positional, 'jax.sharding.PositionalSharding is deprecated. Use jax.NamedSharding instead.',
            warned_from=(0, 6, 0), removed_in=(0, 7, 0), gone_from=(0, 7, 1),
            removed_message='jax.sharding.PositionalSharding was deprecated in JAX v0.6.0 and removed in JAX v0.7.0')
    # Public from 0.7.2, to override the mesh inside jit.
    if name == 'use_abstract_mesh' and version >= (0, 7, 2):
        return _shardscope.use_abstract_mesh
    # jax.sharding.use_mesh existed from 0.5.0; 0.7.1 removed it in favour of jax.set_mesh.
    if name == 'use_mesh' and (0, 5, 0) <= version < (0, 7, 1):
        from jax._src.mesh_context import use_mesh
        return use_mesh
    if name == 'get_mesh' and version >= (0, 8, 1):
        return _get_mesh
    if name == 'make_single_device_sharding' and version >= (0, 10, 0):
        return _make_single_device_sharding
    if name == 'AbstractDevice' and version >= (0, 7, 2):
        return _AbstractDevice
    if name == 'ManualAxisType' and version >= (0, 10, 0):
        raise NotImplementedError('jax.sharding.ManualAxisType is not supported by shardscope')
    # name and obj let the traceback suggest a close name ("Did you mean: 'set_mesh'?") as for any module.
    raise AttributeError(f"module 'jax.sharding' has no attribute '{name}'", name=name, obj=sys.modules[__name__])
