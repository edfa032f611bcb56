# flax.traverse_util: nested dicts to and from flat {path: value} dicts.


def _is_mapping(x):
    from flax.core.frozen_dict import FrozenDict
    return isinstance(x, (dict, FrozenDict))


def flatten_dict(xs, keep_empty_nodes=False, is_leaf=None, sep=None):
    def key(path):
        return sep.join(path) if sep is not None else path

    def walk(x, prefix):
        if not _is_mapping(x) or (is_leaf is not None and is_leaf(prefix, x)):
            return {key(prefix): x}
        if not x:
            return {key(prefix): empty_node} if keep_empty_nodes and prefix else {}
        out = {}
        for k, v in x.items():
            out.update(walk(v, prefix + (k,)))
        return out

    if not _is_mapping(xs):
        raise TypeError(f'expected (frozen)dict; got {type(xs)}')
    return walk(xs, ())


def unflatten_dict(xs, sep=None):
    out = {}
    for path, value in xs.items():
        if sep is not None:
            path = tuple(path.split(sep))
        node = out
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = {} if value is empty_node else value
    return out


class _EmptyNode:
    def __repr__(self):
        return 'empty_node'


empty_node = _EmptyNode()
