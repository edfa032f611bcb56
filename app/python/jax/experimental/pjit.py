# jax.experimental.pjit: pjit over jit (in_axis_resources/out_axis_resources are the shardings, PartitionSpecs
# resolved on the mesh of `with mesh:`), and with_sharding_constraint as JAX 0.4.x still exported it here.
import math

import _shardscope
from jax._src.array_methods import ArrayImpl


def __getattr__(name):
    # Names this module once re-exported: with_sharding_constraint (deprecated from 0.4.16, gone in 0.4.24);
    # PartitionSpec and NamedSharding (deprecated from 0.4.4, gone in 0.4.11).
    from jax._src.deprecations import deprecated_attribute
    if name == 'with_sharding_constraint':
        from jax.lax import with_sharding_constraint
        return deprecated_attribute(__name__, name, lambda: with_sharding_constraint,
                                    'jax.experimental.pjit.with_sharding_constraint is deprecated. Please use '
                                    'jax.lax.with_sharding_constraint.', warned_from=(0, 4, 16), removed_in=(0, 4, 24))
    if name in ('PartitionSpec', 'NamedSharding'):
        return deprecated_attribute(__name__, name, lambda: getattr(_shardscope, name),
                                    f'jax.experimental.pjit.{name} is deprecated. Use jax.sharding.{name}.',
                                    warned_from=(0, 4, 4), removed_in=(0, 4, 11))
    import sys
    raise AttributeError(f"module 'jax.experimental.pjit' has no attribute '{name}'", name=name,
                         obj=sys.modules[__name__])


def _hlo_sharding_text(sharding, ndim):
    """XLA's HloSharding text of a NamedSharding: tile counts per dimension (plus a replication tile), device
    ids in the mesh transposed to the order the dimensions use its axes, unused axes last."""
    import numpy as np
    mesh, spec = sharding.mesh, sharding.spec
    names = list(mesh.axis_names)
    sizes = dict(zip(names, mesh.devices.shape))
    entries = list(spec.partitions) + [None] * (ndim - len(spec))
    used, tiles = [], []
    for entry in entries:
        axes = () if entry is None else (tuple(entry) if isinstance(entry, (tuple, list)) else (entry,))
        used += list(axes)
        tiles.append(math.prod(sizes[a] for a in axes))
    rest = [a for a in names if a not in used]
    replicated = math.prod(sizes[a] for a in rest)
    if all(t == 1 for t in tiles):
        return '{replicated}'
    ids = np.vectorize(lambda d: d.id)(mesh.devices).transpose([names.index(a) for a in used + rest]).reshape(-1)
    dims = tiles + ([replicated] if replicated > 1 else [])
    text = '{devices=[' + ','.join(map(str, dims)) + ']' + ','.join(str(int(i)) for i in ids)
    return text + (' last_tile_dim_replicate}' if replicated > 1 else '}')


class _XlaSharding:
    """The sharding object pjit outputs carried before jax 0.4.7: printed as its class and HloSharding text."""

    def __init__(self, class_name, named, ndim):
        self._class_name, self._named, self._ndim = class_name, named, ndim

    def __repr__(self):
        return f'{self._class_name}({_hlo_sharding_text(self._named, self._ndim)})'

    __str__ = __repr__

    def __getattr__(self, name):
        return getattr(self._named, name)


class _PjitOutput(ArrayImpl):
    __slots__ = ()

    @property
    def sharding(self):
        name = 'OpShardingSharding' if _shardscope.jax_version_info() < (0, 4, 5) else 'GSPMDSharding'
        return _XlaSharding(name, ArrayImpl.sharding.__get__(self), len(self.shape))


def _mark_outputs(tree):
    import jax
    _PjitOutput.__name__ = _PjitOutput.__qualname__ = ArrayImpl.__name__
    _PjitOutput.__module__ = ArrayImpl.__module__

    def mark(leaf):
        if type(leaf) is ArrayImpl:
            leaf.__class__ = _PjitOutput
        return leaf
    return jax.tree_util.tree_map(mark, tree)


def pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None, static_argnames=None,
         donate_argnums=(), *, in_axis_resources=None, out_axis_resources=None, **unused):
    from jax._src.jit import jit
    if in_axis_resources is not None:
        in_shardings = in_axis_resources
    if out_axis_resources is not None:
        out_shardings = out_axis_resources
    jitted = jit(fun, in_shardings=in_shardings, out_shardings=out_shardings, static_argnums=static_argnums,
                 static_argnames=static_argnames)
    if not _shardscope.jax_has('pmap_array_outputs'):
        # Before jax.Array, pjit's results were ShardedDeviceArrays, as pmap's were.
        def legacy_call(*args, **kwargs):
            import jax
            from jax.interpreters.pxla import mark_pmap_output
            return jax.tree_util.tree_map(mark_pmap_output, jitted(*args, **kwargs))
        legacy_call.lower = jitted.lower
        return legacy_call
    if _shardscope.jax_version_info() >= (0, 4, 7) or out_shardings is None:
        return jitted

    def call(*args, **kwargs):
        return _mark_outputs(jitted(*args, **kwargs))
    call.lower = jitted.lower
    return call
