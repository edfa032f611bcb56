# flax.linen.spmd: logical axis names mapped to mesh axes by priority rules, and LogicallyPartitioned boxes.
import collections
import functools

from flax import struct
from flax.core import meta
from flax.core.spmd import get_logical_axis_rules, set_logical_axis_rules, logical_axis_rules  # noqa: F401

axis_rules = logical_axis_rules


class _UnassignedAxis:
    def __repr__(self):
        return 'UnassignedAxis'

    def __bool__(self):
        return False


_unassigned_axis = _UnassignedAxis()


def _mesh_assignment_free(new_assignment, existing_assignments):
    import jax
    from jax.sharding import PartitionSpec
    new = set(jax.tree_util.tree_leaves(new_assignment))
    existing = set(jax.tree_util.tree_leaves(existing_assignments))
    new.discard(None)
    new.discard(PartitionSpec.UNCONSTRAINED)
    return not existing.intersection(new)


def _logical_to_mesh_axes(array_dim_names, rules=None):
    """Mesh axes per dimension: rules in priority order give a dimension the first mesh axes still unused."""
    if array_dim_names is None:
        return None
    if rules is None:
        rules = get_logical_axis_rules()
    counts = collections.Counter(array_dim_names)
    duplicates = tuple(name for name, count in counts.items() if count > 1 and isinstance(name, str))
    if duplicates:
        raise ValueError(f'Unsupported: Dimensions {duplicates} occur more than once in array names.')
    if not isinstance(rules, (tuple, list)):
        raise ValueError('Unknown axis rule specification type.')
    names = list(array_dim_names)
    result = [_unassigned_axis if isinstance(name, str) else name for name in names]
    for logical, mesh_axes in rules:
        if logical in names:
            position = names.index(logical)
            if _mesh_assignment_free(mesh_axes, result) and result[position] is _unassigned_axis:
                result[position] = mesh_axes
    return result


def logical_to_mesh_axes(array_dim_names, rules=None):
    from jax.sharding import PartitionSpec
    result = _logical_to_mesh_axes(array_dim_names, rules)
    if result is None:
        return None
    return PartitionSpec(*[None if axis is _unassigned_axis else axis for axis in result])


def _is_spec(x):
    from jax.sharding import PartitionSpec
    return isinstance(x, PartitionSpec)


def logical_to_mesh(tree, rules=None):
    import jax
    return jax.tree_util.tree_map(lambda x: logical_to_mesh_axes(x, rules), tree, is_leaf=_is_spec)


def logical_to_mesh_sharding(tree, mesh, rules=None):
    import jax
    from jax.sharding import NamedSharding
    return jax.tree_util.tree_map(lambda spec: NamedSharding(mesh, spec), logical_to_mesh(tree, rules),
                                  is_leaf=_is_spec)


class RulesFallback:
    AXIS_IS_UNSHARDED = 'axis_is_unsharded'
    RAISE_ERROR = 'raise_error'
    NO_CONSTRAINT = 'no_constraint'


def _with_sharding_constraint(x, spec, mesh=None):
    """lax.with_sharding_constraint, a no-op without a mesh in context or given."""
    import jax
    if not meta.global_mesh_defined() and mesh is None:
        return x
    if mesh is not None and spec is not None:
        return jax.lax.with_sharding_constraint(x, jax.sharding.NamedSharding(mesh, spec))
    return jax.lax.with_sharding_constraint(x, spec)


def _constrain_one(logical_spec, x, fallback=RulesFallback.AXIS_IS_UNSHARDED, rules=None, mesh=None):
    from jax.sharding import PartitionSpec
    mesh_axes = _logical_to_mesh_axes(logical_spec, rules)
    if mesh_axes is None:
        return _with_sharding_constraint(x, None, mesh=mesh)
    if any(axis is _unassigned_axis for axis in mesh_axes):
        if fallback == RulesFallback.RAISE_ERROR:
            raise ValueError(f'Axis names {logical_spec} did not match a rule')
        if fallback == RulesFallback.NO_CONSTRAINT:
            return x
        mesh_axes = [None if axis is _unassigned_axis else axis for axis in mesh_axes]
    return _with_sharding_constraint(x, PartitionSpec(*mesh_axes), mesh=mesh)


def _is_logical_spec(x):
    from jax.sharding import PartitionSpec
    return x is None or (isinstance(x, tuple) and all(
        isinstance(e, str) or e is None or e is PartitionSpec.UNCONSTRAINED for e in x))


def with_logical_constraint(x, logical_axis_resources, rules=None, mesh=None,
                            fallback=RulesFallback.AXIS_IS_UNSHARDED):
    """with_sharding_constraint in logical axis names; without rules (argument or context) it changes nothing."""
    import jax
    if rules is None:
        rules = get_logical_axis_rules()
    if not rules or logical_axis_resources is None:
        return x
    return jax.tree_util.tree_map(
        functools.partial(_constrain_one, fallback=fallback, rules=rules, mesh=mesh),
        logical_axis_resources, x, is_leaf=_is_logical_spec)


class LogicallyPartitioned(meta.Partitioned):
    rules: object = struct.field(default=None, pytree_node=False)

    def __repr__(self):
        return meta._box_repr(self, ('mesh', 'rules'))

    def unbox(self, apply_constraint=True):
        if apply_constraint and (meta.global_mesh_defined() or self.mesh is not None):
            return with_logical_constraint(self.value, self.get_partition_spec(), rules=self.rules, mesh=self.mesh)
        return self.value


def with_logical_partitioning(fn, names, mesh=None, rules=None):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return LogicallyPartitioned(fn(*args, **kwargs), names, mesh=mesh, rules=rules)
    return wrapper
