# jax.tree: the short names.
from jax._src.tree import tree_flatten as flatten, tree_unflatten as unflatten, tree_leaves as leaves  # noqa: F401
from jax._src.tree import tree_structure as structure, tree_map as map  # noqa: F401
