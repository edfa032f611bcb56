# JAX's pytree prefix errors (tree_util.prefix_errors) and the flatten_axes message built from them.
from jax._src import tree as tree_util


class PytreeLeaf:
    """The placeholder JAX puts at each leaf of the full tree when it explains a prefix mismatch."""
    def __repr__(self):
        return 'pytree leaf'


PytreeLeaf.__module__ = 'jax._src.api_util'


def _is_strict_leaf(tree, is_leaf):
    leaves, treedef = tree_util.tree_flatten(tree, is_leaf)
    return treedef.kind == 'leaf'


def _prefix_error(key_path, prefix_tree, full_tree, is_leaf):
    if _is_strict_leaf(prefix_tree, is_leaf):
        return
    where = tree_util.keystr(key_path)
    if type(prefix_tree) is not type(full_tree):
        yield lambda name: ValueError(
            "pytree structure error: different types at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            f"but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full_tree)}.")
        return
    prefix_children = tree_util._keyed_children(prefix_tree)
    full_children = tree_util._keyed_children(full_tree)
    if isinstance(prefix_tree, (list, tuple)):
        if len(prefix_tree) != len(full_tree):
            ty = type(prefix_tree).__name__
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {ty} at key path\n"
                f"    {name}{where}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type "
                f"{ty} of length {len(prefix_tree)}, but the full pytree "
                f"has a subtree of the same type but of length {len(full_tree)}.")
            return
    else:
        prefix_keys = [k for k, _ in prefix_children]
        full_keys = [k for k, _ in full_children]
        if len(prefix_children) != len(full_children):
            diff = set(prefix_keys).symmetric_difference(set(full_keys))
            yield lambda name: ValueError(
                "pytree structure error: different numbers of pytree children at key path\n"
                f"    {name}{where}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type\n"
                f"    {type(prefix_tree)}\n"
                f"with {len(prefix_children)} child keys\n"
                f"    {' '.join(str(k) for k in prefix_keys)}\n"
                f"but at the same key path the full pytree has a subtree of the same "
                f"type but with {len(full_children)} child keys\n"
                f"    {' '.join(str(k) for k in full_keys)}\n"
                f"so the symmetric difference on key sets is\n"
                f"    {' '.join(str(k) for k in diff)}")
            return
    prefix_meta, full_meta = _metadata(prefix_tree), _metadata(full_tree)
    if prefix_meta != full_meta:
        import difflib
        import textwrap
        prefix_text, full_text = str(prefix_meta), str(full_meta)
        diff_text = textwrap.indent("\n".join(difflib.ndiff(prefix_text.splitlines(), full_text.splitlines())),
                                    prefix="    ")
        yield lambda name: ValueError(
            "pytree structure error: different pytree metadata at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            f"with metadata\n"
            f"    {prefix_text}\n"
            f"but at the same key path the full pytree has a subtree of the same "
            f"type but with metadata\n"
            f"    {full_text}\n"
            f"so the diff in the metadata at these pytree nodes is\n"
            f"{diff_text}")
        return
    for (key, t1), (_, t2) in zip(prefix_children, full_children):
        yield from _prefix_error((*key_path, key), t1, t2, is_leaf)


def _metadata(node):
    """The node data jaxlib's pytree keeps for a dict: its sorted keys (an OrderedDict keeps its order)."""
    import collections
    if isinstance(node, collections.OrderedDict):
        return list(node.keys())
    if isinstance(node, dict):
        return sorted(node.keys())
    return None


def structure_error(name, tree, other, is_leaf=None):
    """tree_map's error where `other` does not have `tree`'s structure: the first prefix error, named."""
    found = next(_prefix_error((), tree, other, is_leaf), None)
    return None if found is None else found(name)


def prefix_errors(prefix_tree, full_tree, is_leaf=None):
    """One error factory (name -> ValueError) per place where `prefix_tree` is not a prefix of `full_tree`."""
    return list(_prefix_error((), prefix_tree, full_tree, is_leaf))


def flatten_axes_error(name, tree, axis_tree):
    """api_util.flatten_axes's ValueError: `axis_tree` (None is a leaf) is not a tree prefix of `tree`."""
    leaves, treedef = tree_util.tree_flatten(tree)
    dummy = tree_util.tree_unflatten(treedef, [PytreeLeaf()] * len(leaves))
    errors = prefix_errors(axis_tree, dummy)
    details = "\n  ".join(e(name).args[0] for e in errors)
    return ValueError(f"{name} specification must be a tree prefix of the corresponding value; "
                      f"\n  Mismatch details ({len(errors)} found):\n  {details}")


def _equality_errors(path, t1, t2):
    """tree_util._equality_errors: (key path, first thing, second thing, explanation) where two trees differ."""
    is_leaf1 = tree_util.tree_flatten(t1)[1].kind == 'leaf'
    is_leaf2 = tree_util.tree_flatten(t2)[1].kind == 'leaf'
    if is_leaf1 and is_leaf2:
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), 'their Python types differ'
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f'{type(t1).__name__} of length {len(t1)}', f'{type(t2).__name__} of length {len(t2)}',
               'the lengths do not match')
        return
    if t1 is None:
        return
    children1, children2 = tree_util._keyed_children(t1), tree_util._keyed_children(t2)
    if len(children1) != len(children2):
        keys1 = {getattr(k, 'key', k) for k, _ in children1}
        keys2 = {getattr(k, 'key', k) for k, _ in children2}
        diff = ' '.join(repr(k) for k in keys1.symmetric_difference(keys2))
        plural = lambda n: 'ren' if n > 1 else ''  # noqa: E731
        yield (path, f'{type(t1)} with {len(children1)} child{plural(len(children1))}',
               f'{type(t2)} with {len(children2)} child{plural(len(children2))}',
               'the numbers of children do not match' +
               (diff and f', with the symmetric difference of key sets: {{{diff}}}'))
        return
    meta1, meta2 = _metadata(t1), _metadata(t2)
    if meta1 != meta2:
        yield (path, f'{type(t1)} with pytree metadata {meta1}', f'{type(t2)} with pytree metadata {meta2}',
               'the pytree node metadata does not match')
        return
    for (key, c1), (_, c2) in zip(children1, children2):
        yield from _equality_errors((*path, key), c1, c2)


def equality_errors_pytreedef(tree1, tree2):
    """tree_util.equality_errors_pytreedef: the differences between two tree structures, leaves as 'pytree leaf'."""
    return list(_equality_errors((), tree_util.tree_unflatten(tree1, [PytreeLeaf()] * tree1.num_leaves),
                                 tree_util.tree_unflatten(tree2, [PytreeLeaf()] * tree2.num_leaves)))
