# Pytrees as jax.tree_util defines them: tuples, lists, dicts (sorted keys), None, namedtuples, registered nodes.
import collections

_registry = {}


class PyTreeDef:
    def __init__(self, kind, aux, children):
        self.kind = kind          # 'leaf', 'none', 'tuple', 'list', 'dict', 'namedtuple' or a registered type
        self.aux = aux
        self.children_defs = children  # child PyTreeDefs

    @property
    def num_leaves(self):
        if self.kind == 'leaf':
            return 1
        return sum(child.num_leaves for child in self.children_defs)

    @property
    def num_nodes(self):
        return 1 + sum(child.num_nodes for child in self.children_defs)

    def children(self):
        return list(self.children_defs)

    def node_data(self):
        if self.kind in ('leaf', 'none'):
            return None
        if self.kind in ('tuple', 'list'):
            return (tuple if self.kind == 'tuple' else list, None)
        if self.kind == 'dict':
            return (dict, list(self.aux))
        if self.kind == 'namedtuple':
            return (self.aux, None)
        return (self.kind, self.aux)

    def __eq__(self, other):
        return (isinstance(other, PyTreeDef) and self.kind == other.kind and self.aux == other.aux
                and self.children_defs == other.children_defs)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((str(self.kind), len(self.children_defs)))

    def _text(self):
        # jaxlib's spelling: custom nodes show their type's __name__ and str() of their aux data.
        if self.kind == 'leaf':
            return '*'
        if self.kind == 'none':
            return 'None'
        inner = [child._text() for child in self.children_defs]
        if self.kind == 'tuple':
            return '(' + ', '.join(inner) + (',)' if len(inner) == 1 else ')')
        if self.kind == 'list':
            return '[' + ', '.join(inner) + ']'
        if self.kind == 'dict':
            return '{' + ', '.join(f'{key!r}: {text}' for key, text in zip(self.aux, inner)) + '}'
        if self.kind == 'namedtuple':
            return f'CustomNode(namedtuple[{self.aux.__name__}], [' + ', '.join(inner) + '])'
        name = getattr(self.kind, '__name__', str(self.kind))
        return f'CustomNode({name}[{self.aux}], [' + ', '.join(inner) + '])'

    def __repr__(self):
        return f'PyTreeDef({self._text()})'

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree):
        return flatten_up_to(self, tree)

    def compose(self, inner):
        """This structure with `inner`'s structure at each of its leaves."""
        if self.kind == 'leaf':
            return inner
        return PyTreeDef(self.kind, self.aux, [child.compose(inner) for child in self.children_defs])

    def from_iterable_tree(self, tree):
        """Builds this structure from nested iterables: each node's children are the items of an iterable."""
        if self.kind == 'leaf':
            return tree
        items = list(tree)
        if len(items) != len(self.children_defs):
            raise ValueError(f'Too few elements for TreeDef node.' if len(items) < len(self.children_defs)
                             else 'Too many elements for TreeDef node.')
        return _build_node(self, [child.from_iterable_tree(item) for child, item in zip(self.children_defs, items)])


_key_registry = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = (flatten_func, unflatten_func)
    if flatten_with_keys_func is not None:
        _key_registry[nodetype] = flatten_with_keys_func


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """A node whose children carry key-path entries: flatten_with_keys returns ((key, child), ...), aux."""
    if flatten_func is None:
        def flatten_func(tree):
            pairs, aux = flatten_with_keys(tree)
            return [child for _, child in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func)
    _key_registry[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls):
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              (lambda x: x.tree_flatten()) if hasattr(cls, 'tree_flatten') else None)
    return cls


def register_pytree_node_class(cls):
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, '_fields')


def _sorted_keys(mapping):
    """A dict's keys in order, as pytrees flatten them; keys that do not compare are JAX's ValueError."""
    try:
        return sorted(mapping)
    except TypeError as e:
        raise ValueError('Comparator raised exception while sorting pytree dictionary keys.') from None


# Types a transformation flattens into their data (a typed PRNG key into its key words) that users see as leaves:
# JAX's key arrays are jax.Array leaves to every jax.tree / jax.tree_util function, while jit, vmap and grad reach
# their data through this registry. jax._src.tree_user gives the users' view.
_user_leaf_types = set()


def register_user_leaf(kind):
    _user_leaf_types.add(kind)


def as_user_is_leaf(is_leaf):
    """`is_leaf` extended to the types users see as leaves."""
    if is_leaf is None:
        return _is_user_leaf
    return lambda x: type(x) in _user_leaf_types or is_leaf(x)


def _is_user_leaf(x):
    return type(x) in _user_leaf_types


def _flatten(tree, is_leaf, leaves):
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return PyTreeDef('leaf', None, [])
    if tree is None:
        return PyTreeDef('none', None, [])
    # Like jaxlib, only the exact builtin container types are nodes: a subclass of dict or list is a leaf
    # unless it is registered (namedtuples excepted).
    kind = type(tree)
    if kind in _registry:
        children, aux = _registry[kind][0](tree)
        return PyTreeDef(kind, aux, [_flatten(child, is_leaf, leaves) for child in children])
    if kind is tuple:
        return PyTreeDef('tuple', None, [_flatten(child, is_leaf, leaves) for child in tree])
    if kind is list:
        return PyTreeDef('list', None, [_flatten(child, is_leaf, leaves) for child in tree])
    if kind is dict:
        keys = _sorted_keys(tree)
        return PyTreeDef('dict', tuple(keys), [_flatten(tree[key], is_leaf, leaves) for key in keys])
    if _is_namedtuple(tree):
        return PyTreeDef('namedtuple', kind, [_flatten(child, is_leaf, leaves) for child in tree])
    leaves.append(tree)
    return PyTreeDef('leaf', None, [])


def tree_flatten(tree, is_leaf=None):
    leaves = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


def _build_node(node, children):
    if node.kind == 'none':
        return None
    if node.kind == 'tuple':
        return tuple(children)
    if node.kind == 'list':
        return list(children)
    if node.kind == 'dict':
        return dict(zip(node.aux, children))
    if node.kind == 'namedtuple':
        return node.aux(*children)
    return _registry[node.kind][1](node.aux, children)


def tree_unflatten(treedef, leaves):
    iterator = iter(leaves)

    def build(node):
        if node.kind == 'leaf':
            try:
                return next(iterator)
            except StopIteration:
                raise ValueError(f'Too few leaves for PyTreeDef; expected {treedef.num_leaves}.') from None
        return _build_node(node, [build(child) for child in node.children_defs])

    result = build(treedef)
    if next(iterator, _END) is not _END:
        raise ValueError(f'Too many leaves for PyTreeDef; expected {treedef.num_leaves}.')
    return result


_END = object()


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def _flatten_rest(treedef, tree, rest, is_leaf, name):
    """Each of `rest` flattened up to `tree`'s structure; a mismatch raises JAX's prefix error for `name`."""
    others = []
    for other in rest:
        try:
            others.append(flatten_up_to(treedef, other))
        except ValueError as err:
            from jax._src.tree_prefix import structure_error
            better = structure_error(name, tree, other, is_leaf)
            raise (better if better is not None else err) from None
    return others


def tree_map(f, tree, *rest, is_leaf=None):
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = _flatten_rest(treedef, tree, rest, is_leaf, 'tree_map tree')
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def flatten_up_to(treedef, tree):
    """The subtrees of `tree` at the leaves of `treedef` (tree must have treedef's structure as a prefix);
    a mismatch raises ValueError with jaxlib's wording."""
    out = []

    def walk(node, value):
        if node.kind == 'leaf':
            out.append(value)
            return
        if node.kind == 'none':
            if value is not None:
                raise ValueError(f'Expected None, got {value!r}.')
            return
        if node.kind == 'dict':
            if type(value) is not dict:
                raise ValueError(f'Expected dict, got {value!r}.')
            if sorted(value) != list(node.aux):
                raise ValueError(f'Dict key mismatch; expected keys: {list(node.aux)!r}; '
                                 f'present keys: {sorted(value)!r}.')
            children = [value[key] for key in node.aux]
        elif node.kind in ('tuple', 'list'):
            if type(value) is not (tuple if node.kind == 'tuple' else list):
                raise ValueError(f'Expected {node.kind}, got {value!r}.')
            children = list(value)
            if len(children) != len(node.children_defs):
                label = node.kind.capitalize()
                raise ValueError(f'{label} arity mismatch: {len(children)} != {len(node.children_defs)}; '
                                 f'{node.kind}: {value!r}.')
        elif node.kind == 'namedtuple':
            if not _is_namedtuple(value):
                raise ValueError(f'Expected named tuple, got {value!r}.')
            if type(value) is not node.aux:
                raise ValueError(f'Named tuple type mismatch: expected type: {node.aux!r}, tuple: {value!r}.')
            children = list(value)
        else:
            if type(value) is not node.kind:
                raise ValueError(f'Custom node type mismatch: expected type: {node.kind!r}, value: {value!r}.')
            children = list(_registry[node.kind][0](value)[0])
            if len(children) != len(node.children_defs):
                raise ValueError(f'Custom type arity mismatch: {len(children)} != {len(node.children_defs)}; '
                                 f'value: {value!r}.')
        for child_node, child in zip(node.children_defs, children):
            walk(child_node, child)

    walk(treedef, tree)
    return out


def broadcast_prefix(prefix, tree, is_leaf=None):
    """Each leaf of `tree` paired with the value of `prefix` at or above it (vmap's in_axes rule)."""
    result = []
    prefix_leaves, prefix_def = tree_flatten(prefix, is_leaf=lambda x: x is None or (is_leaf and is_leaf(x)))
    subtrees = flatten_up_to(prefix_def, tree)
    for value, subtree in zip(prefix_leaves, subtrees):
        result.extend([value] * len(tree_leaves(subtree)))
    return result


def broadcast_target(target, tree):
    """One placement per leaf of `tree`: a tuple, list, dict or registered pytree node (a Flax State of
    specs) of targets is a prefix of `tree`, anything else (a sharding, a device, a spec) applies to every
    leaf (device_put's and reshard's rule)."""
    if isinstance(target, (tuple, list, dict)) or type(target) in _registry:
        return broadcast_prefix(target, tree)
    return [target] * len(tree_leaves(tree))


class _KeyEntry:
    """One step of a key path; subclasses name their single field and how the step prints."""
    __slots__ = ()
    _field = ''

    def __init__(self, *args, **kwargs):
        (value,) = args or (kwargs[self._field],)
        object.__setattr__(self, self._field, value)

    def _value(self):
        return getattr(self, self._field)

    def __repr__(self):
        return f'{type(self).__name__}({self._field}={self._value()!r})'

    def __eq__(self, other):
        return type(other) is type(self) and self._value() == other._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))


class DictKey(_KeyEntry):
    __slots__ = ('key',)
    __match_args__ = ('key',)
    _field = 'key'

    def __str__(self):
        return f'[{self.key!r}]'


class SequenceKey(_KeyEntry):
    __slots__ = ('idx',)
    __match_args__ = ('idx',)
    _field = 'idx'

    def __str__(self):
        return f'[{self.idx!r}]'


class GetAttrKey(_KeyEntry):
    __slots__ = ('name',)
    __match_args__ = ('name',)
    _field = 'name'

    def __str__(self):
        return f'.{self.name}'


class FlattenedIndexKey(_KeyEntry):
    __slots__ = ('key',)
    __match_args__ = ('key',)
    _field = 'key'

    def __str__(self):
        return f'[<flat index {self.key}>]'


def _keyed_children(tree):
    """The children of a non-leaf node with their key-path entries, in flattening order."""
    kind = type(tree)
    if kind in _key_registry:
        return list(_key_registry[kind](tree)[0])
    if kind in _registry:
        children = _registry[kind][0](tree)[0]
        return [(FlattenedIndexKey(i), child) for i, child in enumerate(children)]
    if type(tree) in (tuple, list):
        return [(SequenceKey(i), child) for i, child in enumerate(tree)]
    if _is_namedtuple(tree):
        return [(GetAttrKey(name), child) for name, child in zip(tree._fields, tree)]
    return [(DictKey(key), tree[key]) for key in _sorted_keys(tree)]


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], treedef): each leaf with the keys that lead to it from the root."""
    pairs = []

    def walk(node, path):
        if is_leaf is not None and is_leaf(node):
            pairs.append((path, node))
        elif node is None:
            return
        elif type(node) in _user_leaf_types:
            # Users see it as one leaf: its data (one array) keeps the node's own path.
            for child in _registry[type(node)][0](node)[0]:
                walk(child, path)
        elif type(node) in _registry or type(node) in (tuple, list, dict) or _is_namedtuple(node):
            for key, child in _keyed_children(node):
                walk(child, path + (key,))
        else:
            pairs.append((path, node))

    walk(tree, ())
    return pairs, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = _flatten_rest(treedef, tree, rest, is_leaf, 'tree_map_with_path tree')
    return tree_unflatten(treedef, [f(path, leaf, *xs) for (path, leaf), *xs in zip(pairs, *others)])


def keystr(keys, *, simple=False, separator=''):
    if not simple:
        return ''.join(str(key) for key in keys)

    def plain(key):
        for field in ('key', 'idx', 'name'):
            if hasattr(key, field):
                return str(getattr(key, field))
        return str(key)
    return separator.join(plain(key) for key in keys)


