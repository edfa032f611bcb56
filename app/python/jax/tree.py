# jax.tree: the short names.
from jax._src.tree import tree_unflatten as unflatten  # noqa: F401
from jax._src.tree_user import (tree_flatten as flatten, tree_leaves as leaves,  # noqa: F401
                                tree_structure as structure, tree_map as map,
                                tree_flatten_with_path as flatten_with_path,
                                tree_leaves_with_path as leaves_with_path, tree_map_with_path as map_with_path,
                                tree_all as all, tree_reduce as reduce,
                                tree_reduce_associative as reduce_associative, tree_broadcast as broadcast)
from jax._src.tree_extras import tree_transpose as transpose, static  # noqa: F401
