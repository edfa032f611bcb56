# jax.tree: the short names.
from jax._src.tree import tree_flatten as flatten, tree_unflatten as unflatten, tree_leaves as leaves  # noqa: F401
from jax._src.tree import tree_structure as structure, tree_map as map  # noqa: F401
from jax._src.tree import (tree_flatten_with_path as flatten_with_path,  # noqa: F401
                           tree_leaves_with_path as leaves_with_path, tree_map_with_path as map_with_path)
from jax._src.tree_extras import (tree_all as all, tree_reduce as reduce,  # noqa: F401
                                  tree_reduce_associative as reduce_associative, tree_transpose as transpose,
                                  tree_broadcast as broadcast, static)
