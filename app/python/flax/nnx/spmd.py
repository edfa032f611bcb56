# flax.nnx sharding annotations: eager sharding of annotated Variables under a mesh, with_partitioning, and the
# PartitionSpec / NamedSharding trees of a State, following flax/core/spmd.py and flax/nnx/spmd.py.
import functools
import jax
from jax.sharding import NamedSharding, PartitionSpec

from flax.core import meta
from flax.nnx import variablelib

PARTITION_NAME = 'partition_name'
_AXIS_RULES = [()]


def get_logical_axis_rules():
    return _AXIS_RULES[-1]


def set_logical_axis_rules(rules):
    _AXIS_RULES[-1] = rules


class logical_axis_rules:
    def __init__(self, rules):
        self.rules = rules

    def __enter__(self):
        _AXIS_RULES.append(self.rules)

    def __exit__(self, *exc):
        _AXIS_RULES.pop()
        return False


def composite_rules(rule1, rule2):
    if not rule1 or not rule2:
        return tuple(rule1 or rule2 or ())
    rules = dict(rule1)
    for alias, value in rule2:
        if alias in rules and rules[alias] != value:
            raise ValueError(f'Inconsistent logical axis annotations for {alias}: {rules[alias]} vs {value}')
        rules[alias] = value
    return tuple(rules.items())


def _apply_rules(sharding, sharding_rules):
    rules = dict(composite_rules(get_logical_axis_rules(), sharding_rules)) if (
        get_logical_axis_rules() or sharding_rules) else {}
    if isinstance(sharding, NamedSharding):
        return NamedSharding(sharding.mesh, PartitionSpec(*[rules.get(a, a) for a in sharding.spec]))
    return PartitionSpec(*[rules.get(a, a) if _hashable(a) else a for a in sharding])


def _hashable(a):
    try:
        hash(a)
        return True
    except TypeError:
        return False


def _global_mesh():
    mesh = meta.get_global_mesh()
    return mesh if mesh is not None and tuple(mesh.axis_names) else None


def _axis_kinds(mesh):
    return {str(t).rsplit('.', 1)[-1].split(':')[0].strip('<>') for t in getattr(mesh, 'axis_types', ())}


def shard_value(value, out_sharding, sharding_rules, mesh):
    if not out_sharding:
        return value
    from_context = mesh is None
    if mesh is None:
        mesh = _global_mesh()
    out_sharding = _apply_rules(out_sharding, sharding_rules)
    if isinstance(out_sharding, NamedSharding):
        mesh, from_context = out_sharding.mesh, False
    if mesh is None:
        raise ValueError(
            'An auto mesh context or metadata is required if creating a variable'
            f' with annotation {out_sharding=}. '
            'For more guidance, see https://flax.readthedocs.io/en/latest/flip/4844-var-eager-sharding.html.')
    if isinstance(out_sharding, PartitionSpec) and not from_context:
        out_sharding = NamedSharding(mesh, out_sharding)
    kinds = _axis_kinds(mesh)
    if kinds == {'Explicit'}:
        return jax.sharding.reshard(value, out_sharding)
    if kinds <= {'Auto'}:
        return jax.lax.with_sharding_constraint(value, out_sharding)
    raise ValueError(f'Mesh must have all axes as Explicit or all axes as Auto. Got mixed axis types: '
                     f'{mesh.axis_types}')


def with_partitioning(initializer, sharding, mesh=None, **metadata):
    from flax import _versions
    if not _versions.nnx_variables_shard_eagerly():
        return variablelib.with_metadata(initializer, sharding=sharding, mesh=mesh, **metadata)
    return variablelib.with_metadata(initializer, out_sharding=sharding, mesh=mesh, **metadata)


def _annotation_key(metadata):
    # `out_sharding` from Flax 0.12 on, `sharding` before.
    return 'out_sharding' if 'out_sharding' in metadata else 'sharding'


def get_var_pspec(v):
    metadata = v.get_metadata()
    if metadata.get(_annotation_key(metadata)):
        sharding = metadata[_annotation_key(metadata)]
        if get_logical_axis_rules() or 'sharding_rules' in metadata:
            rules = dict(composite_rules(get_logical_axis_rules(), metadata.get('sharding_rules', ())))
            return PartitionSpec(*[rules[str(s)] if (s and str(s) in rules) else s for s in sharding])
        return PartitionSpec(*sharding)
    if hasattr(v, 'shape'):
        return PartitionSpec()
    return None


def get_partition_spec(tree):
    def f(x):
        if isinstance(x, variablelib.Variable):
            return x.replace(get_var_pspec(x))
        if hasattr(x, 'shape'):
            return PartitionSpec()
        return None
    return jax.tree.map(f, tree, is_leaf=lambda x: isinstance(x, variablelib.Variable))


def get_named_sharding(tree, mesh):
    spec = get_partition_spec(tree)
    return jax.tree.map(lambda p: NamedSharding(mesh, p), spec)


def get_abstract_model(init_fn, mesh):
    from flax.nnx import graphlib, transforms
    with jax.set_mesh(mesh):
        abs_model = transforms.eval_shape(init_fn)
        gdef, abs_state = graphlib.split(abs_model)
        abs_state = jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abs_state,
                                 get_named_sharding(abs_state, mesh))
    return gdef, abs_state


def _insert(fields, index, value):
    fields = list(fields)
    while len(fields) < index:
        fields.append(None)
    fields.insert(index, value)
    return tuple(fields)


def add_axis(tree, index, transform_metadata):
    axis_name = transform_metadata.get(PARTITION_NAME)

    def f(x):
        if isinstance(x, variablelib.Variable):
            key = _annotation_key(x.get_metadata())
            if x.get_metadata(key, None):
                x.set_metadata(key, _insert(x.get_metadata(key), index, axis_name))
        return x
    return jax.tree.map(f, tree, is_leaf=lambda x: isinstance(x, variablelib.Variable))


def _is_spec(x):
    return x is None or (isinstance(x, tuple) and all(isinstance(e, str) or e is None for e in x))


def _with_sharding_constraint(x, axis_resources, mesh=None):
    from flax.core import meta
    if mesh is None and not meta.global_mesh_defined():
        return x  # no mesh to place it on: Flax leaves the value as it is
    if mesh is not None and axis_resources is not None:
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, axis_resources))
    return jax.lax.with_sharding_constraint(x, axis_resources)


def with_sharding_constraint(x, axis_resources, mesh=None):
    """jax.lax.with_sharding_constraint over a tree (a State included) with a matching tree of specs."""
    if axis_resources is None:
        return x
    # Key arrays are leaves, as in JAX (the engine registers them as nodes).
    return jax.tree.map(functools.partial(_with_sharding_constraint, mesh=mesh), x, axis_resources,
                        is_leaf=lambda v: _is_spec(v) or variablelib.is_key_array(v))
