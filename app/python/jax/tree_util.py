# jax.tree_util.
from jax._src.tree import (tree_unflatten, register_pytree_node, register_pytree_node_class, PyTreeDef,  # noqa: F401
                           keystr, register_pytree_with_keys, register_pytree_with_keys_class, DictKey, SequenceKey,
                           GetAttrKey, FlattenedIndexKey)
from jax._src.tree_user import (tree_flatten, tree_leaves, tree_structure, tree_map,  # noqa: F401
                                tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path, tree_all,
                                tree_reduce, tree_reduce_associative, tree_broadcast, all_leaves, flatten_one_level,
                                is_tree_node)
from jax._src.tree_extras import (tree_transpose, treedef_is_leaf, treedef_children, treedef_tuple,  # noqa: F401
                                  Partial, register_dataclass, register_static)

import typing as _typing

KeyEntry = _typing.TypeVar('KeyEntry', bound=_typing.Any)
KeyPath = tuple[KeyEntry, ...]


def flatten_one_level_with_keys(tree):
    """tree's children with their keys, [(key, child), ...], and the node's auxiliary data (one level only)."""
    children, aux = flatten_one_level(tree)
    # Everything below the root counts as a leaf, so each path is one key long (None children included).
    pairs, _ = tree_flatten_with_path(tree, is_leaf=lambda node: node is not tree)
    if len(pairs) != len(children):
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return [(path[0], child) for (path, _), child in zip(pairs, children)], aux


def __getattr__(name):
    import sys
    # build_tree: deprecated in 0.6.0, an AttributeError naming the removal in 0.7.x, then gone (0.8.0).
    if name == 'build_tree':
        from jax._src.deprecations import deprecated_attribute

        def build_tree():
            from jax._src.tree_extras import build_tree as function
            return function
        return deprecated_attribute(
            __name__, name, build_tree, 'jax.tree_util.build_tree is deprecated. Use jax.tree.unflatten instead.',
            warned_from=(0, 6, 0), removed_in=(0, 7, 0), gone_from=(0, 8, 0),
            removed_message='jax.tree_util.build_tree was deprecated in JAX v0.6.0 and removed in JAX v0.7.0. Use '
                            'jax.tree.unflatten instead.')
    if name == 'default_registry':
        raise NotImplementedError('jax.tree_util.default_registry is not supported by shardscope')
    raise AttributeError(f"module 'jax.tree_util' has no attribute '{name}'", name=name, obj=sys.modules[__name__])
