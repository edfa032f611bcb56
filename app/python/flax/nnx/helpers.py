# flax.nnx.List and nnx.Dict: containers whose items are graph attributes (data when they hold Variables, arrays
# or modules), so layers kept in a list are part of the model's state.
from flax.nnx.pytreelib import Pytree


class List(Pytree):
    def __init__(self, items=()):
        for i, item in enumerate(items):
            setattr(self, str(i), item)

    def _keys(self):
        return sorted((int(k) for k in vars(self) if k.isdigit()))

    def __len__(self):
        return len(self._keys())

    def __getitem__(self, index):
        keys = self._keys()
        if isinstance(index, slice):
            return [getattr(self, str(k)) for k in keys[index]]
        return getattr(self, str(keys[index]))

    def __setitem__(self, index, value):
        setattr(self, str(self._keys()[index]), value)

    def __iter__(self):
        return (getattr(self, str(k)) for k in self._keys())

    def append(self, value):
        setattr(self, str(len(self)), value)


class Dict(Pytree):
    def __init__(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            setattr(self, key, value)

    def _items(self):
        return [(k, v) for k, v in vars(self).items() if not k.startswith('_pytree__')]

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        setattr(self, key, value)

    def __iter__(self):
        return (k for k, _ in self._items())

    def __len__(self):
        return len(self._items())

    def items(self):
        return iter(self._items())

    def keys(self):
        return [k for k, _ in self._items()]

    def values(self):
        return [v for _, v in self._items()]
