# flax.nnx.State: the nested mapping of a graph's Variables that split/state return, a pytree of its leaves.
import jax

from flax.nnx import reprlib


class NestedStateRepr(reprlib.Representable):
    def __init__(self, state):
        self.state = state

    def __nnx_repr__(self):
        yield reprlib.Object('', kv_sep=': ', start='{', end='}')
        for r in self.state.__nnx_repr__():
            if isinstance(r, reprlib.Object):
                continue
            yield r


class State(reprlib.Representable):
    def __init__(self, mapping=(), /, *, _copy=True):
        object.__setattr__(self, '_mapping', dict(mapping) if _copy else mapping)

    @property
    def raw_mapping(self):
        return self._mapping

    def __contains__(self, key):
        return key in self._mapping

    def __getitem__(self, key):
        value = self._mapping[key]
        if isinstance(value, dict):
            return State(value, _copy=False)
        return value

    def __getattr__(self, key):
        mapping = vars(self).get('_mapping')
        if mapping is None or key not in mapping:
            raise AttributeError(f"No attribute '{key}' in State")
        return self[key]

    def __setitem__(self, key, value):
        self._mapping[key] = value._mapping if isinstance(value, State) else value

    __setattr__ = __setitem__

    def __delitem__(self, key):
        del self._mapping[key]

    def __iter__(self):
        return iter(self._mapping)

    def __len__(self):
        return len(self._mapping)

    def keys(self):
        return self._mapping.keys()

    def items(self):
        return ((k, self[k]) for k in self._mapping)

    def values(self):
        return (self[k] for k in self._mapping)

    def get(self, key, default=None):
        return self[key] if key in self._mapping else default

    def __eq__(self, other):
        return isinstance(other, State) and self._mapping == other._mapping

    def __nnx_repr__(self):
        yield reprlib.Object(type(self), kv_sep=': ', start='({', end='})')
        for k, v in self.items():
            if isinstance(v, State):
                v = NestedStateRepr(v)
            yield reprlib.Attr(repr(k), v)

    def flat_state(self):
        return to_flat_state(self)

    def to_pure_dict(self):
        from flax.nnx.variablelib import Variable
        return jax.tree.map(lambda x: x.get_value() if isinstance(x, Variable) else x, _to_dict(self._mapping),
                            is_leaf=lambda x: isinstance(x, Variable))

    def filter(self, *filters):
        from flax.nnx import filterlib
        flat = to_flat_state(self)
        out = []
        for f in filters:
            pred = filterlib.to_predicate(f)
            out.append(from_flat_state([(p, v) for p, v in flat if pred(p, v)]))
        return out[0] if len(out) == 1 else tuple(out)

    def split(self, *filters):
        return self.filter(*filters)

    @staticmethod
    def merge(state, *states):
        flat = []
        for s in (state, *states):
            flat.extend(to_flat_state(s))
        return from_flat_state(flat)


def _to_dict(mapping):
    return {k: _to_dict(v) if isinstance(v, dict) else v for k, v in mapping.items()}


def to_flat_state(state):
    mapping = state.raw_mapping if isinstance(state, State) else state
    flat = []

    def walk(m, path):
        for key, value in m.items():
            if isinstance(value, State):
                value = value.raw_mapping
            if isinstance(value, dict):
                walk(value, path + (key,))
            else:
                flat.append((path + (key,), value))

    walk(mapping, ())
    return flat


def from_flat_state(flat):
    root = {}
    for path, value in sorted(flat, key=lambda pv: tuple((isinstance(k, str), k) for k in pv[0])):
        node = root
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return State(root, _copy=False)


def _flatten_with_keys(x):
    items = sorted(x._mapping.items(), key=lambda kv: (isinstance(kv[0], str), kv[0]))
    return tuple((jax.tree_util.DictKey(k), State(v, _copy=False) if isinstance(v, dict) else v)
                 for k, v in items), tuple(k for k, _ in items)


def _flatten(x):
    children, keys = _flatten_with_keys(x)
    return tuple(c for _, c in children), keys


def _unflatten(keys, children):
    return State({k: (c._mapping if isinstance(c, State) else c) for k, c in zip(keys, children)}, _copy=False)


jax.tree_util.register_pytree_with_keys(State, _flatten_with_keys, _unflatten, _flatten)
