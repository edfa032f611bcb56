# flax.core.FrozenDict: an immutable dict that is a pytree (sorted keys) and prints as an indented tree.
from jax._src import tree as _tree


def _indent(text, spaces):
    pad = ' ' * spaces
    lines = text.split('\n')
    return '\n'.join(pad + line for line in lines[:-1]) + '\n'


def _pretty(x, spaces):
    if not isinstance(x, (dict, FrozenDict)):
        return repr(x)
    body = ''.join(f'{key}: {_pretty(value, spaces)},\n' for key, value in x.items())
    return '{\n' + _indent(body, spaces) + '}' if body else '{}'


class FrozenDict:
    __slots__ = ('_dict', '_hash')

    def __init__(self, *args, **kwargs):
        self._dict = {key: _thaw_for_storage(value) for key, value in dict(*args, **kwargs).items()}
        self._hash = None

    def __getitem__(self, key):
        value = self._dict[key]
        return FrozenDict(value) if isinstance(value, dict) else value

    def __setitem__(self, key, value):
        raise ValueError('FrozenDict is immutable.')

    def __contains__(self, key):
        return key in self._dict

    def __iter__(self):
        return iter(self._dict)

    def __len__(self):
        return len(self._dict)

    def __eq__(self, other):
        if isinstance(other, FrozenDict):
            return self._dict == other._dict
        return self._dict == other if isinstance(other, dict) else NotImplemented

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(tuple((key, self[key]) for key in self._dict))
        return self._hash

    def __repr__(self):
        return self.pretty_repr()

    def pretty_repr(self, num_spaces=4):
        return f'FrozenDict({_pretty(self._dict, num_spaces)})'

    def get(self, key, default=None):
        return self[key] if key in self._dict else default

    def keys(self):
        return self._dict.keys()

    def values(self):
        return [self[key] for key in self._dict]

    def items(self):
        return [(key, self[key]) for key in self._dict]

    def copy(self, add_or_replace=None):
        return type(self)({**self._dict, **unfreeze(add_or_replace or {})})

    def pop(self, key):
        value = self[key]
        rest = {k: v for k, v in self._dict.items() if k != key}
        return type(self)(rest), value

    def unfreeze(self):
        return unfreeze(self)


def _thaw_for_storage(value):
    # Nested FrozenDicts are stored as plain dicts and re-wrapped on access, as Flax does.
    if isinstance(value, FrozenDict):
        return {key: _thaw_for_storage(v) for key, v in value._dict.items()}
    if isinstance(value, dict):
        return {key: _thaw_for_storage(v) for key, v in value.items()}
    return value


def _flatten(x):
    keys = tuple(sorted(x._dict))
    return [x[key] for key in keys], keys


def _unflatten(keys, children):
    return FrozenDict(dict(zip(keys, children)))


def _flatten_with_keys(x):
    keys = tuple(sorted(x._dict))
    return [(_tree.DictKey(key), x[key]) for key in keys], keys


_tree.register_pytree_with_keys(FrozenDict, _flatten_with_keys, _unflatten, _flatten)


def freeze(xs):
    return FrozenDict(xs)


def unfreeze(x):
    if isinstance(x, FrozenDict):
        return {key: unfreeze(value) for key, value in x._dict.items()}
    if isinstance(x, dict):
        return {key: unfreeze(value) for key, value in x.items()}
    return x


def copy(x, add_or_replace=None):
    if isinstance(x, FrozenDict):
        return x.copy(add_or_replace)
    return {**x, **(add_or_replace or {})}


def pop(x, key):
    if isinstance(x, FrozenDict):
        return x.pop(key)
    rest = dict(x)
    value = rest.pop(key)
    return rest, value


def pretty_repr(x, num_spaces=4):
    if isinstance(x, FrozenDict):
        return x.pretty_repr(num_spaces)
    return _pretty(x, num_spaces) if isinstance(x, dict) else repr(x)
