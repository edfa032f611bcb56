# jax.tree_util beyond flatten/unflatten: reductions, transposition, Partial, dataclass and static nodes,
# and the builtin registrations (OrderedDict, defaultdict) jaxlib adds.
import collections
import dataclasses
import functools

from jax._src.tree import (tree_flatten, tree_unflatten, tree_leaves, tree_structure, flatten_up_to,
                           broadcast_prefix, register_pytree_node, register_pytree_with_keys, PyTreeDef,
                           DictKey, GetAttrKey)


class _Unspecified:
    pass


def tree_all(tree, *, is_leaf=None):
    return all(tree_leaves(tree, is_leaf=is_leaf))


def tree_reduce(function, tree, initializer=_Unspecified(), is_leaf=None):
    if isinstance(initializer, _Unspecified):
        return functools.reduce(function, tree_leaves(tree, is_leaf=is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf=is_leaf), initializer)


def _halving_reduce(sequence, operation, identity):
    # Splits in halves so an associative operation sees a balanced tree of calls, as JAX's does.
    if not sequence:
        if isinstance(identity, _Unspecified):
            raise TypeError('Must specify identity for parallel reduction of empty sequence.')
        return identity
    if len(sequence) == 1:
        return sequence[0]
    middle = len(sequence) // 2
    return operation(_halving_reduce(sequence[:middle], operation, identity),
                     _halving_reduce(sequence[middle:], operation, identity))


def tree_reduce_associative(operation, tree, *, identity=_Unspecified(), is_leaf=None):
    return _halving_reduce(tree_leaves(tree, is_leaf=is_leaf), operation, identity)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(flatten_up_to(outer_treedef, pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise TypeError(f'Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}')
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    columns = [tree_unflatten(outer_treedef, list(column)) for column in zip(*rows)]
    return tree_unflatten(inner_treedef, columns)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    return tree_unflatten(tree_structure(full_tree), broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf))


def treedef_is_leaf(treedef):
    return treedef.num_nodes == 1


def treedef_children(treedef):
    return treedef.children()


def treedef_tuple(treedefs):
    return PyTreeDef('tuple', None, list(treedefs))


def all_leaves(iterable, is_leaf=None):
    if is_leaf is None:
        return all(tree_structure(x).kind == 'leaf' for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(item is leaf for item, leaf in zip(items, leaves))


def build_tree(treedef, xs):
    return treedef.from_iterable_tree(xs)


def flatten_one_level(tree):
    from jax._src import tree as _tree
    kind = type(tree)
    if kind in _tree._registry:
        children, aux = _tree._registry[kind][0](tree)
        return list(children), aux
    if tree is None:
        return [], None
    if kind in (tuple, list) or _tree._is_namedtuple(tree):
        return list(tree), None
    if kind is dict:
        keys = sorted(tree)
        return [tree[key] for key in keys], keys
    raise ValueError(f"can't tree-flatten type: {kind}")


def is_tree_node(typ):
    from jax._src import tree as _tree
    return typ in _tree._registry or typ in (tuple, list, dict, type(None))


class _HashableCallableShim:
    """Wraps a functools.partial so Partial keeps it as its function instead of merging its arguments."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f'_HashableCallableShim({self.fun!r})'


class Partial(functools.partial):
    """functools.partial as a pytree: the bound arguments are leaves, the function is static."""

    def __new__(klass, func, *args, **kw):
        if isinstance(func, functools.partial):
            original = func
            func = _HashableCallableShim(original)
            out = super().__new__(klass, func, *args, **kw)
            func.func, func.args, func.keywords = original.func, original.args, original.keywords
            return out
        return super().__new__(klass, func, *args, **kw)


Partial.__module__ = 'jax.tree_util'

register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError('register_dataclass: data_fields and meta_fields must both be specified'
                            f' when either is specified. Got {data_fields=} {meta_fields=}.')
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError('register_dataclass: data_fields and meta_fields are required when'
                            f' nodetype is not a dataclass. Got {nodetype=}.')
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get('static', False)]
        meta_fields = [f.name for f in fields if f.metadata.get('static', False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        if {*meta_fields, *data_fields} != init_fields:
            msg = 'data_fields and meta_fields must include all dataclass fields with ``init=True`` and only them.'
            missing = init_fields - {*meta_fields, *data_fields}
            if missing:
                msg += f' Missing fields: {missing}. Add them to drop_fields to suppress this error.'
            unexpected = {*meta_fields, *data_fields} - init_fields
            if unexpected:
                msg += f' Unexpected fields: {unexpected}.'
            raise ValueError(msg)
    overlap = set(data_fields) & set(meta_fields)
    if overlap:
        raise ValueError(f'data_fields and meta_fields must not overlap. Overlapping fields: {overlap}.')

    def flatten_with_keys(x):
        return (tuple((GetAttrKey(name), getattr(x, name)) for name in data_fields),
                tuple(getattr(x, name) for name in meta_fields))

    def flatten(x):
        return tuple(getattr(x, name) for name in data_fields), tuple(getattr(x, name) for name in meta_fields)

    def unflatten(meta, data):
        return nodetype(**dict(tuple(zip(meta_fields, meta)) + tuple(zip(data_fields, data))))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten, flatten)
    return nodetype


def static(**kwargs):
    """A dataclasses.field marked static, for register_dataclass (jax.tree.static)."""
    metadata = {'static': True, **(kwargs.pop('metadata', {}) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def register_static(cls):
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _children: obj)
    return cls


register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: (tuple((DictKey(k), x[k]) for k in x.keys()), tuple(x.keys())),
    lambda keys, values: collections.OrderedDict(zip(keys, values)))


def _defaultdict_with_keys(d):
    keys = tuple(sorted(d))
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


register_pytree_with_keys(collections.defaultdict, _defaultdict_with_keys,
                          lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)))
