# ml_collections.config_dict's FrozenConfigDict, the JSON encoders and the module-level helper functions.

# Split out of config_dict.py (the public module, which re-exports every name here on first use): FrozenConfigDict
# subclasses ConfigDict, so this module imports config_dict.py and config_dict.py only imports this one lazily.
import dataclasses
import inspect
import json

from .config_dict import ConfigDict
from .field_reference import _PUBLIC_MODULE
from .field_reference import FieldReference


def _check_freezable(value, ancestors=None):
    """ValueError unless `value` (a ConfigDict at first) can be frozen: no cycle, and no dict, ConfigDict or
    FieldReference inside a list or tuple."""
    ancestors = ancestors or []
    if id(value) in ancestors:
        raise ValueError('Bad FrozenConfigDict initialization: Cannot contain a cycle in its reference structure.')
    ancestors.append(id(value))
    if isinstance(value, ConfigDict):
        for item in value.values():
            _check_freezable(item, ancestors)
    elif isinstance(value, FieldReference):
        _check_freezable(value.get(), ancestors)
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, (dict, ConfigDict, FieldReference)):
                raise ValueError('Bad FrozenConfigDict initialization: Cannot contain a dict, ConfigDict, or '
                                 'FieldReference within a list or tuple.')
            _check_freezable(item, ancestors)
    ancestors.pop()


def _freeze_tuple(value, frozen):
    """(tuple, unchanged): `value` with its lists and sets frozen, the tuple itself when nothing changed."""
    parts = []
    unchanged = True
    for item in value:
        if isinstance(item, (list, tuple, set)):
            item, item_unchanged = _freeze(item, frozen)
            unchanged = unchanged and item_unchanged
        parts.append(item)
    return (value, True) if unchanged else (tuple(parts), False)


def _freeze(value, frozen):
    """(immutable version, unchanged) of a list, tuple or set: lists become tuples, sets frozensets. `frozen` maps
    ids already converted to their result (a repeated one counts as unchanged)."""
    if id(value) in frozen:
        return frozen[id(value)], True
    unchanged = False
    if isinstance(value, set):
        result = frozenset(value)
    elif isinstance(value, tuple):
        result, unchanged = _freeze_tuple(value, frozen)
    else:
        result, _ = _freeze_tuple(tuple(value), frozen)
    frozen[id(value)] = result
    return result, unchanged


def _fill_frozen(target, source, converted=None):
    """Fills the empty FrozenConfigDict `target` from the ConfigDict `source` (kept as its _configdict), nested
    ConfigDicts frozen once each."""
    object.__setattr__(target, '_configdict', source)
    converted = converted or {}
    converted[id(source)] = target
    for key, value in source.items():
        if id(value) in converted:
            value = converted[id(value)]
        elif isinstance(value, ConfigDict) and not isinstance(value, FrozenConfigDict):
            child = FrozenConfigDict(type_safe=value.is_type_safe)
            _fill_frozen(child, value, converted)
            value = child
        target._frozen_setattr(key, value, converted)


class FrozenConfigDict(ConfigDict):
    """A ConfigDict that cannot change and can be hashed.

    It is built from a dict, ConfigDict or FrozenConfigDict: nested ones are frozen too, lists become tuples and
    sets frozensets, and references are replaced by their values. Lists or tuples holding dicts, ConfigDicts or
    references, and cycles, are refused.
    """

    __module__ = _PUBLIC_MODULE  # the public path, which pickles and YAML tags in repr() name

    def __init__(self, initial_dictionary=None, type_safe=True):
        super().__init__()
        source = ConfigDict(initial_dictionary=initial_dictionary, type_safe=type_safe)
        _check_freezable(source)
        _fill_frozen(self, source)
        object.__setattr__(self, '_locked', source.is_locked)
        object.__setattr__(self, '_type_safe', source.is_type_safe)

    def _frozen_setattr(self, key, value, visit_map=None):
        converted = visit_map or {}
        self._ensure_mutability(key)
        assert '.' not in key
        if key in self._fields:
            raise ValueError('Cannot redefine attribute of FrozenConfigDict.')
        if isinstance(value, (list, tuple, set)):
            value, _ = _freeze(value, converted)
        self._fields[key] = value
        return converted

    def __setstate__(self, state):
        self.__init__(state['_configdict'])

    def __setattr__(self, attribute, value):
        raise AttributeError('FrozenConfigDict is immutable. Cannot call __setattr__().')

    def __delattr__(self, attribute):
        raise AttributeError('FrozenConfigDict is immutable. Cannot call __delattr__().')

    def __setitem__(self, attribute, value):
        raise AttributeError('FrozenConfigDict is immutable. Cannot call __setitem__().')

    def __delitem__(self, attribute):
        raise AttributeError('FrozenConfigDict is immutable. Cannot call __delitem__().')

    def lock(self):
        raise AttributeError('FrozenConfigDict is immutable. Cannot call lock().')

    def unlock(self):
        raise AttributeError('FrozenConfigDict is immutable. Cannot call unlock().')

    def __hash__(self):
        # Hashes the values as they were given (the _configdict's lists and sets, not the frozen tuples), so a
        # FrozenConfigDict made from [1] and one made from (1,) differ, as they do under ==.
        def value_hash(value):
            if isinstance(value, set):
                return hash((hash(frozenset(value)), 1))
            if isinstance(value, (list, tuple)):
                return hash(tuple([isinstance(value, list)] + [value_hash(item) for item in value]))
            if isinstance(value, FieldReference):
                return value_hash(value.get())
            try:
                return hash(value)
            except TypeError:
                raise TypeError(f'FrozenConfigDict contains unhashable type {type(value)}')

        total = 0
        for key, value in self._fields.items():
            if isinstance(value, FrozenConfigDict):
                total += hash((hash(key), hash(value)))
            else:
                total += hash((hash(key), value_hash(self._configdict._fields[key])))
        return hash((total, self.is_locked, self.is_type_safe))

    def __eq__(self, other):
        if not isinstance(other, FrozenConfigDict):
            return False
        return ConfigDict(self) == ConfigDict(other)

    def as_configdict(self):
        """The ConfigDict this one was frozen from."""
        return self._configdict


class CustomJSONEncoder(json.JSONEncoder):
    """to_json's encoder: ConfigDicts as objects, references as their values, classes as their str(); anything
    else JSON cannot hold is a TypeError."""

    __module__ = _PUBLIC_MODULE  # the public path, where the library defines it

    def default(self, obj):
        if isinstance(obj, FieldReference):
            return obj.get()
        if isinstance(obj, ConfigDict):
            return obj._fields
        if isinstance(obj, type):
            return str(obj)
        raise TypeError(f'{type(obj)} is not JSON serializable. Instead use ConfigDict.to_json_best_effort()')


class _BestEffortCustomJSONEncoder(CustomJSONEncoder):
    """to_json_best_effort's encoder: writes something for every value instead of failing."""

    __module__ = _PUBLIC_MODULE  # the public path, where the library defines it

    def default(self, obj):
        try:
            return super().default(obj)
        except TypeError:
            if isinstance(obj, set):
                return sorted(list(obj))
            if inspect.isfunction(obj):
                return f'function {obj.__name__}'
            if dataclasses.is_dataclass(obj):
                return dataclasses.asdict(obj)
            if hasattr(obj, '__dict__') and obj.__dict__ and not inspect.isclass(obj):
                return dict(obj.__dict__)
            if hasattr(obj, '__str__'):
                return f'unserializable object: {obj}'
            return f'unserializable object of type: {type(obj)}'


def create(**kwargs):
    """A ConfigDict of the keyword arguments: `create(x=1, y=2).x == 1`."""
    return ConfigDict(initial_dictionary=kwargs)


def placeholder(field_type, required=False):
    """A FieldReference of `field_type` holding None, to be given a value later; with `required`, reading it
    before then raises RequiredValueError."""
    return FieldReference(None, field_type=field_type, required=required)


def required_placeholder(field_type):
    """placeholder(field_type, required=True)."""
    return placeholder(field_type, required=True)


def recursive_rename(conf, old_name, new_name):
    """A new ConfigDict like `conf` with every field named `old_name`, at any depth, named `new_name`."""
    renamed = ConfigDict()
    for name, value in conf.items():
        if isinstance(value, ConfigDict):
            value = recursive_rename(value, old_name, new_name)
        setattr(renamed, new_name if name == old_name else name, value)
    return renamed


# Pickles and YAML `!!python/name:` tags name these functions by the public path, as they do the classes.
for _function in (create, placeholder, required_placeholder, recursive_rename):
    _function.__module__ = _PUBLIC_MODULE
del _function
