# flax.nnx graph functions: a Module graph flattened into a GraphDef (node, variable and attribute defs, shared
# references by index) and a State of its Variables, and merged or updated back, following Flax 0.12's layout.
import dataclasses
import typing as tp

import jax
import numpy as np

from flax.nnx import reprlib
from flax.nnx.variablelib import Variable, is_key_array
from flax.nnx import statelib, filterlib


class HashableMapping(dict):
    """Flax's immutable mapping of attribute names to data/static flags; prints as the dict it holds."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))

    def update(self, other):  # returns a new mapping, as Flax's does
        return HashableMapping({**self, **dict(other)})


@dataclasses.dataclass(frozen=True, repr=False)
class NodeRef(reprlib.Representable):
    index: int

    def __nnx_repr__(self):
        yield reprlib.Object(type=type(self))
        yield reprlib.Attr('index', self.index)


@dataclasses.dataclass(frozen=True, repr=False)
class VariableDef(reprlib.Representable):
    type: tp.Any
    index: int
    outer_index: tp.Any
    metadata: tp.Any

    def __nnx_repr__(self):
        yield reprlib.Object(type=type(self))
        yield reprlib.Attr('type', self.type.__name__)
        yield reprlib.Attr('index', self.index)
        yield reprlib.Attr('outer_index', self.outer_index)
        yield reprlib.Attr('metadata', reprlib.PrettyMapping(self.metadata))


@dataclasses.dataclass(frozen=True, repr=False)
class NodeDef(reprlib.Representable):
    type: tp.Any
    index: tp.Any
    outer_index: tp.Any
    num_attributes: int
    metadata: tp.Any

    def __nnx_repr__(self):
        yield reprlib.Object(type=type(self))
        yield reprlib.Attr('type', self.type.__name__)
        yield reprlib.Attr('index', self.index)
        yield reprlib.Attr('outer_index', self.outer_index)
        yield reprlib.Attr('num_attributes', self.num_attributes)
        yield reprlib.Attr('metadata', self.metadata)


@dataclasses.dataclass(frozen=True)
class NodeAttr:
    pass


@dataclasses.dataclass(frozen=True)
class LeafAttr:
    pass


@dataclasses.dataclass(frozen=True)
class Static:
    value: tp.Any


@dataclasses.dataclass(frozen=True)
class GraphDef:
    nodes: list
    attributes: list
    num_leaves: int

    def __hash__(self):
        return hash((tuple(self.nodes), tuple((k, id(v)) for k, v in self.attributes)))

    def __eq__(self, other):
        return self is other or (isinstance(other, GraphDef) and repr(self) == repr(other))


jax.tree_util.register_static(GraphDef)


class GenericPytree:
    pass


class IndexesPytreeDef(tp.NamedTuple):
    key_index: tp.Any
    treedef: tp.Any


@dataclasses.dataclass(frozen=True)
class DataElem:
    value: tp.Any


@dataclasses.dataclass(frozen=True)
class StaticElem:
    value: tp.Any


@dataclasses.dataclass(frozen=True)
class GraphNodeImpl:
    type: tp.Any
    flatten: tp.Callable
    set_key: tp.Callable
    create_empty: tp.Callable
    clear: tp.Callable

    def node_dict(self, node):
        nodes, _ = self.flatten(node)
        return {k: v.value if isinstance(v, (DataElem, StaticElem)) else v for k, v in nodes}


@dataclasses.dataclass(frozen=True)
class PytreeNodeImpl:
    type: tp.Any
    flatten: tp.Callable
    unflatten: tp.Callable

    def node_dict(self, node):
        nodes, _ = self.flatten(node)
        return dict(nodes)


GRAPH_REGISTRY: dict = {}
PYTREE_REGISTRY: dict = {}


def register_graph_node_type(type, flatten, set_key, create_empty, clear):
    GRAPH_REGISTRY[type] = GraphNodeImpl(type, flatten, set_key, create_empty, clear)


def _jax_registry():
    from jax._src.tree import _registry
    return _registry


def _key_of(entry):
    for attr in ('idx', 'key', 'name'):
        if hasattr(entry, attr):
            return getattr(entry, attr)
    return str(entry)


def _flatten_pytree(pytree):
    leaves, treedef = jax.tree_util.tree_flatten_with_path(pytree, is_leaf=lambda x: x is not pytree)
    nodes = [(_key_of(path[0]), value) for path, value in leaves]
    key_index = HashableMapping({key: i for i, (key, _) in enumerate(nodes)})
    nodes.sort(key=lambda kv: kv[0])
    return nodes, IndexesPytreeDef(key_index, treedef)


def _unflatten_pytree(nodes, metadata):
    ordered = sorted(nodes, key=lambda kv: metadata.key_index[kv[0]])
    return metadata.treedef.unflatten([value for _, value in ordered])


PYTREE_NODE_IMPL = PytreeNodeImpl(GenericPytree, _flatten_pytree, _unflatten_pytree)
PYTREE_REGISTRY[list] = PytreeNodeImpl(list, lambda x: (list(enumerate(x)), None),
                                       lambda nodes, _: [v for _, v in nodes])
PYTREE_REGISTRY[tuple] = PytreeNodeImpl(tuple, lambda x: (list(enumerate(x)), None),
                                        lambda nodes, _: tuple(v for _, v in nodes))
PYTREE_REGISTRY[dict] = PytreeNodeImpl(dict, lambda x: (sorted(x.items()), None), lambda nodes, _: dict(nodes))
PYTREE_REGISTRY[type(None)] = PytreeNodeImpl(type(None), lambda x: ([], None), lambda nodes, _: None)


def is_graph_node(x):
    return type(x) in GRAPH_REGISTRY or isinstance(x, Variable)


def is_node(x):
    if isinstance(x, Variable) or is_key_array(x):
        return False
    return type(x) in GRAPH_REGISTRY or type(x) in PYTREE_REGISTRY or type(x) in _jax_registry() or \
        isinstance(x, tuple)


def get_node_impl(x):
    if isinstance(x, Variable) or is_key_array(x):
        return None
    t = type(x)
    if t in GRAPH_REGISTRY:
        return GRAPH_REGISTRY[t]
    if t in PYTREE_REGISTRY:
        return PYTREE_REGISTRY[t]
    if t in _jax_registry() or issubclass(t, tuple):
        return PYTREE_NODE_IMPL
    return None


def _node_impl_for_type(t):
    if t is GenericPytree:
        return PYTREE_NODE_IMPL
    return PYTREE_REGISTRY.get(t) or GRAPH_REGISTRY.get(t)


def _graph_flatten(node, impl, path, ref_index, nodes, attributes, leaves, paths):
    is_pytree = isinstance(impl, PytreeNodeImpl)
    if not is_pytree and id(node) in ref_index:
        nodes.append(NodeRef(ref_index[id(node)][0]))
        return
    index = None
    if isinstance(impl, GraphNodeImpl) or isinstance(node, Variable):
        index = len(ref_index)
        ref_index[id(node)] = (index, node)
    if isinstance(node, Variable):
        leaves.append(node)
        paths.append(tuple(path))
        nodes.append(VariableDef(node.var_type, index, None, HashableMapping(node.get_metadata())))
        return
    values, metadata = impl.flatten(node)
    nodes.append(NodeDef(impl.type, index, None, len(values), metadata))
    for key, value in values:
        is_data = None
        if isinstance(value, DataElem):
            value, is_data = value.value, True
        elif isinstance(value, StaticElem):
            value, is_data = value.value, False
        if is_data is False:
            attributes.append((key, Static(value)))
            continue
        value_impl = get_node_impl(value)
        path.append(key)
        if value_impl is not None or isinstance(value, Variable):
            attributes.append((key, NodeAttr()))
            _graph_flatten(value, value_impl, path, ref_index, nodes, attributes, leaves, paths)
        elif isinstance(value, (jax.Array, np.ndarray, jax.ShapeDtypeStruct)) or is_key_array(value) or is_data:
            attributes.append((key, LeafAttr()))
            leaves.append(value)
            paths.append(tuple(path))
        else:
            attributes.append((key, Static(value)))
        path.pop()


def flatten(node):
    """(graphdef, [(path, leaf), ...]) with leaves in Flax's order: sorted attribute names, depth first."""
    nodes, attributes, leaves, paths = [], [], [], []
    _graph_flatten(node, get_node_impl(node), [], {}, nodes, attributes, leaves, paths)
    return GraphDef(nodes, attributes, len(leaves)), list(zip(paths, leaves))


def unflatten(graphdef, leaves, index_ref=None):
    node_iter = iter(graphdef.nodes)
    attr_iter = iter(graphdef.attributes)
    leaf_iter = iter(leaves)
    index_ref = {} if index_ref is None else index_ref

    def build(nodedef):
        if isinstance(nodedef, NodeRef):
            return index_ref[nodedef.index]
        if isinstance(nodedef, VariableDef):
            leaf = next(leaf_iter)
            if isinstance(leaf, Variable):
                variable = nodedef.type.from_metadata(leaf.get_raw_value(), leaf.get_metadata())
            else:
                variable = nodedef.type.from_metadata(leaf, dict(nodedef.metadata))
            index_ref[nodedef.index] = variable
            return variable
        impl = _node_impl_for_type(nodedef.type)
        node = None
        if isinstance(impl, GraphNodeImpl):
            node = impl.create_empty(nodedef.type)
            index_ref[nodedef.index] = node
        children = []
        for _ in range(nodedef.num_attributes):
            key, attr = next(attr_iter)
            if isinstance(attr, Static):
                children.append((key, attr.value))
            elif isinstance(attr, LeafAttr):
                children.append((key, next(leaf_iter)))
            else:
                children.append((key, build(next(node_iter))))
        if node is None:
            return impl.unflatten(children, nodedef.metadata)
        for key, value in children:
            object.__setattr__(node, key, value)
        return node

    return build(next(node_iter))


def split(node, *filters):
    graphdef, flat = flatten(node)
    states = _split_flat(flat, filters)
    return (graphdef, *states)


def _split_flat(flat, filters):
    if not filters:
        return [statelib.from_flat_state(flat)]
    predicates = [filterlib.to_predicate(f) for f in filters]
    buckets = [[] for _ in predicates]
    rest = []
    for path, leaf in flat:
        for i, predicate in enumerate(predicates):
            if predicate(path, leaf):
                buckets[i].append((path, leaf))
                break
        else:
            rest.append((path, leaf))
    if rest and filters:
        raise ValueError(f'Non-exhaustive filters, got a non-empty remainder: {rest}.\n'
                         'Use `...` to match all remaining elements.')
    return [statelib.from_flat_state(b) for b in buckets]


def state(node, *filters):
    _, flat = flatten(node)
    if len(filters) <= 1:
        if not filters:
            return statelib.from_flat_state(flat)
        predicate = filterlib.to_predicate(filters[0])
        return statelib.from_flat_state([(p, v) for p, v in flat if predicate(p, v)])
    predicates = [filterlib.to_predicate(f) for f in filters]
    return tuple(statelib.from_flat_state([(p, v) for p, v in flat if pred(p, v)]) for pred in predicates)


def graphdef(node):
    return flatten(node)[0]


def merge(graphdef, state, *states):
    flat = {}
    for s in (state, *states):
        for path, leaf in statelib.to_flat_state(s):
            flat[path] = leaf
    _, def_flat = _paths_of(graphdef)
    leaves = [flat[path] for path in def_flat]
    return unflatten(graphdef, leaves)


def _paths_of(graphdef):
    # The leaf paths a GraphDef implies, in its own order (used to line a State's leaves up with it).
    node_iter = iter(graphdef.nodes)
    attr_iter = iter(graphdef.attributes)
    paths = []

    def walk(nodedef, path):
        if isinstance(nodedef, NodeRef):
            return
        if isinstance(nodedef, VariableDef):
            paths.append(tuple(path))
            return
        for _ in range(nodedef.num_attributes):
            key, attr = next(attr_iter)
            if isinstance(attr, LeafAttr):
                paths.append(tuple(path) + (key,))
            elif isinstance(attr, NodeAttr):
                walk(next(node_iter), path + [key])

    walk(next(node_iter), [])
    return graphdef, paths


def update(node, state, *states):
    for s in (state, *states):
        _update(node, s.raw_mapping if isinstance(s, statelib.State) else s)


def _update(node, mapping):
    impl = get_node_impl(node)
    for key, value in mapping.items():
        current = impl.node_dict(node).get(key) if impl is not None else None
        if isinstance(value, statelib.State):
            value = value.raw_mapping
        if isinstance(current, Variable) and isinstance(value, Variable):
            current.update_from_state(value)
        elif isinstance(current, Variable):
            current.set_value(value)
        elif isinstance(value, dict) and current is not None and get_node_impl(current) is not None:
            _update(current, value)
        elif isinstance(impl, GraphNodeImpl):
            impl.set_key(node, key, value)
        else:
            node[key] = value


def reorder(node, seen=None):
    """Re-inserts every graph node's attributes in sorted order, as a Flax transform's merge leaves them."""
    seen = set() if seen is None else seen
    if id(node) in seen or type(node) not in GRAPH_REGISTRY:
        return
    seen.add(id(node))
    items = sorted(vars(node).items())
    vars(node).clear()
    vars(node).update(items)
    for _, value in items:
        for leaf in jax.tree.leaves(value, is_leaf=lambda x: type(x) in GRAPH_REGISTRY):
            reorder(leaf, seen)


def clone(node):
    graphdef, state = split(node)
    return merge(graphdef, jax.tree.map(lambda x: x, state))


def iter_graph(node):
    seen = set()

    def walk(n, path):
        if isinstance(n, Variable):
            if id(n) not in seen:
                seen.add(id(n))
                yield path, n
            return
        impl = get_node_impl(n)
        if impl is None:
            yield path, n
            return
        if type(n) in GRAPH_REGISTRY:
            if id(n) in seen:
                return
            seen.add(id(n))
        for key, value in sorted(impl.node_dict(n).items(), key=lambda kv: str(kv[0])):
            yield from walk(value, path + (key,))
        yield path, n

    yield from walk(node, ())
