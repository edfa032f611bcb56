# The bridge's variable conversion: a Linen collection is an NNX Variable type (params <-> Param, others by
# name, registered on first use), metadata rides in boxes (NNXMeta, or the Linen box the variable came from).
import collections
import dataclasses
import typing as tp

import jax

from flax import traverse_util
from flax.core import meta
from flax.nnx import graphlib, spmd, variablelib


@dataclasses.dataclass(frozen=True)
class NNXMeta(meta.AxisMetadata):
    """An nnx Variable inside Linen variables: its type and metadata ride along with the value."""
    var_type: type
    value: tp.Any
    metadata: dict

    def unbox(self, apply_constraint=True):
        return self.value

    def replace_boxed(self, val):
        return dataclasses.replace(self, value=val)

    def add_axis(self, index, params):
        return self

    def remove_axis(self, index, params):
        return self

    def get_partition_spec(self):
        return spmd.get_partition_spec(self.to_nnx_variable()).get_raw_value()

    def to_nnx_variable(self):
        return self.var_type(self.value, **self.metadata)


jax.tree_util.register_pytree_with_keys(
    NNXMeta,
    lambda x: (((jax.tree_util.GetAttrKey('value'), x.value),), (x.var_type, tuple(x.metadata.items()))),
    lambda aux, children: NNXMeta(aux[0], children[0], dict(aux[1])),
    lambda x: ((x.value,), (x.var_type, tuple(x.metadata.items()))))


def _hooks_and_required(key, value):
    # Metadata every Variable carries (Flax 0.12's hijax/ref/eager_sharding, empty hooks) says nothing.
    return key in getattr(variablelib.Variable, 'required_metadata', ()) or (key.endswith('_hooks') and value == ())


def is_vanilla_variable(vs):
    """True when the variable has no metadata beyond what every Variable carries."""
    return all(_hooks_and_required(key, value) for key, value in vs.get_metadata().items())


def to_linen_var(vs):
    """A Variable's Linen form: its Linen box again, the bare value, or an NNXMeta keeping its metadata."""
    metadata = vs.get_metadata()
    if 'linen_meta_type' in metadata:
        linen_type = metadata['linen_meta_type']
        if hasattr(linen_type, 'from_nnx_metadata'):
            return linen_type.from_nnx_metadata({'value': vs.get_value(), **metadata})
        return linen_type(vs.get_value(), **metadata)
    if is_vanilla_variable(vs):
        return vs.get_value()
    return NNXMeta(type(vs), vs.get_value(), metadata)


def _key_name(entry):
    for attr in ('key', 'name', 'idx'):
        if hasattr(entry, attr):
            return getattr(entry, attr)
    return entry


def to_nnx_var(col, x):
    """Linen value `x` of collection `col` as the collection's Variable type."""
    vtype = variablelib.variable_type_from_name(col, allow_register=True)
    if isinstance(x, NNXMeta):
        assert vtype == x.var_type, (f'Type stored in NNXMeta {x.var_type} != type inferred from collection name '
                                     f'{vtype}')
        return x.to_nnx_variable()
    if isinstance(x, meta.AxisMetadata):
        x_metadata = x.to_nnx_metadata() if hasattr(x, 'to_nnx_metadata') else dict(vars(x))
        value = x_metadata.pop('value')
        return vtype(value, **x_metadata, linen_meta_type=type(x))
    return vtype(x)


def _recursive_merge(dict1, dict2):
    flat = traverse_util.flatten_dict(dict1)
    flat.update(traverse_util.flatten_dict(dict2))
    return traverse_util.unflatten_dict(flat)


def linen_vars_to_nnx_attrs(variables):
    """Linen variables ({collection: {name: value or sub-layer dict}}) as NNX attributes: a Variable per value,
    sub-layers merged across collections. From Flax 0.12 anything that is not a dict is one value (a sown tuple
    becomes one Intermediate), and a path two collections both hold is an error."""
    from flax import _versions
    if _versions.flax_version() < (0, 12, 0):
        nnx_vars = jax.tree_util.tree_map_with_path(lambda kp, x: to_nnx_var(str(_key_name(kp[0])), x),
                                                    dict(variables),
                                                    is_leaf=lambda x: isinstance(x, meta.AxisMetadata))
        nnx_attrs = collections.defaultdict(dict)
        for _, col_tree in nnx_vars.items():
            for attr_name, value in col_tree.items():
                if isinstance(value, tp.Mapping):  # a sub-layer
                    nnx_attrs[attr_name] = _recursive_merge(nnx_attrs[attr_name], dict(value))
                else:
                    nnx_attrs[attr_name] = value
        return dict(nnx_attrs)
    nnx_vars = jax.tree_util.tree_map_with_path(lambda kp, x: to_nnx_var(str(_key_name(kp[0])), x), dict(variables),
                                                is_leaf=lambda x: not isinstance(x, dict))
    flat_paths = {}
    for col_tree in nnx_vars.values():
        for path, variable in _flatten_attrs(dict(col_tree)).items():
            if path in flat_paths:
                raise ValueError(f'Found duplicate variable path {path} with variables {flat_paths[path]} and '
                                 f'{variable}. This is not allowed in NNX.')
            flat_paths[path] = variable
    return traverse_util.unflatten_dict(flat_paths)


def _flatten_attrs(tree, prefix=()):
    # Paths through nested attribute dicts (Flax's traversals.flatten_mapping): anything else is a leaf.
    if not isinstance(tree, tp.Mapping):
        return {prefix: tree}
    flat = {}
    for key, value in tree.items():
        flat.update(_flatten_attrs(value, prefix + (key,)))
    return flat


def nnx_attrs_to_linen_vars(nnx_attrs):
    """NNX attributes back as Linen variables, each Variable under its type's collection."""
    linen_structured = {}
    for kp, v in _flatten_attrs(nnx_attrs).items():
        if isinstance(v, variablelib.Variable):
            col_name = variablelib.variable_name_from_type(type(v))
            v = to_linen_var(v)
        elif isinstance(v, graphlib.GraphDef):
            col_name = 'nnx'  # the GraphDef of a ToLinen submodule
        else:
            raise ValueError(f'Cannot infer collection name from value: {v}')
        linen_structured[(col_name, *kp)] = v
    return traverse_util.unflatten_dict(linen_structured)


def with_partitioning(fn, names, mesh=None):
    """nnx.with_partitioning whose Variables turn back into Linen Partitioned boxes."""
    return spmd.with_partitioning(fn, names, mesh, linen_meta_type=meta.Partitioned)
