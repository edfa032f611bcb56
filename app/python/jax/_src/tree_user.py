# jax.tree and jax.tree_util as users call them: the flattening functions with typed PRNG keys (and any other
# type registered with register_user_leaf) as leaves. Transformations use jax._src.tree, which reaches the key data.
import functools
import inspect

from jax._src import tree as _tree
from jax._src import tree_extras as _extras


def _keys_as_leaves(function):
    parameters = inspect.signature(function).parameters
    # Where is_leaf may come positionally (None when it is keyword-only, as after tree_map's *rest).
    position = (list(parameters).index('is_leaf')
                if parameters['is_leaf'].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD else None)

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if position is not None and len(args) > position:
            args = args[:position] + (_tree.as_user_is_leaf(args[position]),) + args[position + 1:]
        else:
            kwargs['is_leaf'] = _tree.as_user_is_leaf(kwargs.get('is_leaf'))
        return function(*args, **kwargs)
    return wrapper


tree_flatten = _keys_as_leaves(_tree.tree_flatten)
tree_leaves = _keys_as_leaves(_tree.tree_leaves)
tree_structure = _keys_as_leaves(_tree.tree_structure)
tree_map = _keys_as_leaves(_tree.tree_map)
tree_flatten_with_path = _keys_as_leaves(_tree.tree_flatten_with_path)
tree_leaves_with_path = _keys_as_leaves(_tree.tree_leaves_with_path)
tree_map_with_path = _keys_as_leaves(_tree.tree_map_with_path)
tree_all = _keys_as_leaves(_extras.tree_all)
tree_reduce = _keys_as_leaves(_extras.tree_reduce)
tree_reduce_associative = _keys_as_leaves(_extras.tree_reduce_associative)
all_leaves = _keys_as_leaves(_extras.all_leaves)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    leaves = _tree.broadcast_prefix(prefix_tree, full_tree, is_leaf=_tree.as_user_is_leaf(is_leaf))
    return _tree.tree_unflatten(_tree.tree_structure(full_tree, _tree.as_user_is_leaf(None)), leaves)


def flatten_one_level(tree):
    if _tree._is_user_leaf(tree):
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _extras.flatten_one_level(tree)


def is_tree_node(typ):
    return typ not in _tree._user_leaf_types and _extras.is_tree_node(typ)
