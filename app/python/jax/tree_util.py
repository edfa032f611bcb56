# jax.tree_util.
from jax._src.tree import (tree_flatten, tree_unflatten, tree_leaves, tree_structure, tree_map,  # noqa: F401
                           register_pytree_node, register_pytree_node_class, PyTreeDef, Partial)
