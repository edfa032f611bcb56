# jax.tree_util.
from jax._src.tree import (tree_flatten, tree_unflatten, tree_leaves, tree_structure, tree_map,  # noqa: F401
                           register_pytree_node, register_pytree_node_class, PyTreeDef, Partial)
from jax._src.tree import (tree_flatten_with_path, tree_leaves_with_path, tree_map_with_path, keystr,  # noqa: F401
                           register_pytree_with_keys, register_pytree_with_keys_class, DictKey, SequenceKey,
                           GetAttrKey, FlattenedIndexKey)
