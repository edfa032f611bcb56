# flax.linen.spmd: logical axis names resolved to mesh axes by ordered rules, and LogicallyPartitioned boxes.
import collections

from flax import struct
from flax.core import meta
from flax.core.spmd import get_logical_axis_rules, set_logical_axis_rules, logical_axis_rules  # noqa: F401

axis_rules = logical_axis_rules


class _Pending:
    """A named dimension that no rule has given mesh axes (yet); falsy, like the None it ends up as."""
    __slots__ = ()

    def __repr__(self):
        return 'UnassignedAxis'

    def __bool__(self):
        return False


_PENDING = _Pending()


def _clashes(candidate, chosen):
    """Whether a rule's mesh axes are already used by another dimension: a mesh axis shards one dimension only."""
    import jax
    from jax.sharding import PartitionSpec
    wanted = set(jax.tree_util.tree_leaves(candidate)) - {None, PartitionSpec.UNCONSTRAINED}
    return not wanted.isdisjoint(jax.tree_util.tree_leaves(chosen))


def _resolve(dim_names, rules):
    """Per dimension, its mesh axes or _PENDING; None for no names. Rules are tried in order, so an earlier rule
    takes precedence, and a dimension keeps the first rule whose mesh axes are still free."""
    if dim_names is None:
        return None
    table = get_logical_axis_rules() if rules is None else rules
    tally = collections.Counter(dim_names)
    repeated = tuple(dim for dim, n in tally.items() if n > 1 and isinstance(dim, str))
    if repeated:
        raise ValueError(f'Unsupported: Dimensions {repeated} occur more than once in array names.')
    if not isinstance(table, (list, tuple)):
        raise ValueError('Unknown axis rule specification type.')
    dims = list(dim_names)
    # None and PartitionSpec.UNCONSTRAINED pass through untouched; only strings are looked up.
    chosen = [_PENDING if isinstance(dim, str) else dim for dim in dims]
    for logical, mesh_axes in table:
        if logical not in dims:
            continue
        slot = dims.index(logical)
        if chosen[slot] is _PENDING and not _clashes(mesh_axes, chosen):
            chosen[slot] = mesh_axes
    return chosen


def _unmatched_to_none(chosen):
    return [None if axes is _PENDING else axes for axes in chosen]


def logical_to_mesh_axes(array_dim_names, rules=None):
    from jax.sharding import PartitionSpec
    chosen = _resolve(array_dim_names, rules)
    return None if chosen is None else PartitionSpec(*_unmatched_to_none(chosen))


def _is_partition_spec(x):
    from jax.sharding import PartitionSpec
    return isinstance(x, PartitionSpec)


def logical_to_mesh(tree, rules=None):
    import jax
    return jax.tree_util.tree_map(lambda spec: logical_to_mesh_axes(spec, rules), tree, is_leaf=_is_partition_spec)


def logical_to_mesh_sharding(tree, mesh, rules=None):
    import jax
    from jax.sharding import NamedSharding
    mesh_specs = logical_to_mesh(tree, rules)
    return jax.tree_util.tree_map(lambda spec: NamedSharding(mesh, spec), mesh_specs, is_leaf=_is_partition_spec)


class RulesFallback:
    AXIS_IS_UNSHARDED = 'axis_is_unsharded'
    RAISE_ERROR = 'raise_error'
    NO_CONSTRAINT = 'no_constraint'


def _constrain(x, mesh_spec, mesh):
    """lax.with_sharding_constraint, or x untouched when there is no mesh to constrain against."""
    import jax
    if mesh is None:
        if not meta.global_mesh_defined():
            return x
        return jax.lax.with_sharding_constraint(x, mesh_spec)
    target = mesh_spec if mesh_spec is None else jax.sharding.NamedSharding(mesh, mesh_spec)
    return jax.lax.with_sharding_constraint(x, target)


class _LogicalConstrainer:
    """Applied per (logical spec, array) pair of with_logical_constraint's trees."""

    def __init__(self, rules, mesh, fallback):
        self.rules, self.mesh, self.fallback = rules, mesh, fallback

    def __call__(self, logical_spec, x):
        from jax.sharding import PartitionSpec
        chosen = _resolve(logical_spec, self.rules)
        if chosen is None:
            return _constrain(x, None, self.mesh)
        if any(axes is _PENDING for axes in chosen):
            if self.fallback == RulesFallback.RAISE_ERROR:
                raise ValueError(f'Axis names {logical_spec} did not match a rule')
            if self.fallback == RulesFallback.NO_CONSTRAINT:
                return x
            chosen = _unmatched_to_none(chosen)
        return _constrain(x, PartitionSpec(*chosen), self.mesh)


def _names_a_whole_array(x):
    # A spec is a leaf of the resources tree: None, or a tuple of per-dimension names.
    from jax.sharding import PartitionSpec
    if x is None:
        return True
    return isinstance(x, tuple) and all(part is None or part is PartitionSpec.UNCONSTRAINED or isinstance(part, str)
                                        for part in x)


def with_logical_constraint(x, logical_axis_resources, rules=None, mesh=None,
                            fallback=RulesFallback.AXIS_IS_UNSHARDED):
    """with_sharding_constraint in logical axis names; without rules (argument or context) it changes nothing."""
    import jax
    active = get_logical_axis_rules() if rules is None else rules
    if logical_axis_resources is None or not active:
        return x
    return jax.tree_util.tree_map(_LogicalConstrainer(active, mesh, fallback), logical_axis_resources, x,
                                  is_leaf=_names_a_whole_array)


class LogicallyPartitioned(meta.Partitioned, repr=False):
    rules: object = struct.field(default=None, pytree_node=False)

    def _constrained_value(self):
        return with_logical_constraint(self.value, self.get_partition_spec(), rules=self.rules, mesh=self.mesh)


def with_logical_partitioning(fn, names, mesh=None, rules=None):
    return meta._boxing_initializer(fn, LogicallyPartitioned, names=names, mesh=mesh, rules=rules)
