# ml_collections.config_dict.config_dict for shardscope: ConfigDict and its fill and path helpers; the public module.

# Written afresh to behave as ml_collections 1.1.0 does (values, key order, YAML text, exception types and messages).
# FieldReference and the type helpers live in field_reference.py, FrozenConfigDict, the JSON encoders and the helper
# functions in frozen_config_dict.py; this module still offers every one of their names, and all the classes keep
# this module's path in __module__ so that pickles and YAML tags name the same classes as the library's. ConfigDict
# keeps the library's instance attributes (_fields, _locked, _type_safe, ...) because repr() and to_yaml() print them.
import abc
import collections
import collections.abc
import contextlib
import dataclasses  # noqa: F401 (unused here; an attribute of this module before the split, so kept)
import difflib
import functools
import inspect  # noqa: F401 (unused here; an attribute of this module before the split, so kept)
import json
import operator  # noqa: F401 (unused here; an attribute of this module before the split, so kept)
import re

try:
    import yaml
    from yaml import representer as _yaml_representer
except ImportError:  # str() and repr() then fall back to the dict's own text
    yaml = None
    _yaml_representer = None

if _yaml_representer is not None:
    # Importing the library teaches PyYAML to write classes whose metaclass is ABCMeta by name (PyYAML would
    # otherwise try to reduce the class as an instance); tutorials then print such values the same way.
    _yaml_representer.Representer.add_representer(abc.ABCMeta, _yaml_representer.Representer.represent_name)

# Re-exported: the public path has always offered these names (pickles name _Op and FieldReference by it).
from .field_reference import _breaks_type_safety  # noqa: F401
from .field_reference import _coerce
from .field_reference import _NoneType
from .field_reference import _Op  # noqa: F401
from .field_reference import _PUBLIC_MODULE
from .field_reference import _resolve
from .field_reference import _type_defines_call  # noqa: F401
from .field_reference import FieldReference
from .field_reference import JSONDecodeError
from .field_reference import MutabilityError  # noqa: F401
from .field_reference import RequiredValueError  # noqa: F401

# Names a ConfigDict field may not take: every attribute of Python's `super` proxy (the library checks a new
# attribute against dir(super(ConfigDict, self)), which is the same list for any instance).
_PROXY_NAMES = frozenset(dir(super(object, object())))


_INDEXED_NAME = re.compile(r'(.*)\[([0-9]+)\]')


def _first_component(path):
    """('name', index) for the first dotted component of `path`, index None unless it reads `name[3]`."""
    head = path.split('.')[0]
    indexed = _INDEXED_NAME.match(head)
    if indexed is None:
        return head, None
    return indexed.group(1), int(indexed.group(2))


def _fill_configdict(target, source, converted=None):
    """Copies `source` (a dict or ConfigDict) into the empty ConfigDict `target`.

    Nested dicts become ConfigDicts (when `target` converts dicts), as do dicts held by dict-typed references;
    `converted` maps the id of each mapping already turned into a ConfigDict to that ConfigDict, so shared and
    self-referencing mappings stay shared and the walk ends.
    """
    from .frozen_config_dict import FrozenConfigDict  # not at the top: that module imports this one

    converted = converted or {}
    converted[id(source)] = target
    if isinstance(source, ConfigDict):
        entries = source.iteritems(preserve_field_references=True)
    else:
        entries = source.items()

    def child_for(mapping):
        child = ConfigDict(type_safe=target.is_type_safe, allow_dotted_keys=target.allow_dotted_keys)
        _fill_configdict(child, mapping, converted)
        return child

    for key, value in entries:
        if id(value) in converted:
            value = converted[id(value)]
        elif isinstance(value, FieldReference) and value.get_type() is dict and target.convert_dict:
            if not value.empty():  # an empty required reference must not be read
                held = value.get()
                value.set(converted[id(held)] if id(held) in converted else child_for(held), False)
        elif isinstance(value, dict) and target.convert_dict:
            value = child_for(value)
        elif isinstance(value, FrozenConfigDict):
            value = ConfigDict(value, allow_dotted_keys=target.allow_dotted_keys)
        target.__setattr__(key, value)


def _is_path(config, key):
    """Whether `key` is a dotted path into `config`'s nested ConfigDicts rather than a key of its own."""
    return not config.allow_dotted_keys and not isinstance(key, (int, float)) and '.' in key


def _reference_keeps_type(old_value, new_value):
    """Whether assigning `new_value` over `old_value` skips the type check: a reference of the old value's type or
    of type object."""
    return isinstance(new_value, FieldReference) and new_value.get_type() in (type(old_value), object)


class ConfigDict:
    """A configuration: a mapping whose entries are also attributes.

    Fields keep their type once set (unless the dict is made with type_safe=False or inside ignore_type()), dicts
    stored in it become ConfigDicts, and iteration, keys(), values() and items() follow sorted key order unless
    sort_keys=False. lock() stops new fields from being added; FieldReferences tie fields together. str() and
    repr() print YAML.

        cfg = ConfigDict({'model': {'width': 512}, 'learning_rate': 1e-3})
        cfg.model.width = 1024
        cfg['batch_size'] = 64
    """

    __module__ = _PUBLIC_MODULE  # the public path (this module's), one string shared with the other classes

    _HAS_DYNAMIC_ATTRIBUTES = True  # tells static checkers that attributes come and go

    _allow_dotted_keys: bool
    _sort_keys: bool

    def __init__(self, initial_dictionary=None, type_safe=True, convert_dict=True, *, allow_dotted_keys=False,
                 sort_keys=True):
        from .frozen_config_dict import FrozenConfigDict  # not at the top: that module imports this one

        if isinstance(initial_dictionary, FrozenConfigDict):
            initial_dictionary = initial_dictionary.as_configdict()
        store = functools.partial(object.__setattr__, self)
        store('_fields', {})
        store('_locked', False)
        store('_type_safe', type_safe)
        store('_convert_dict', convert_dict)
        store('_allow_dotted_keys', allow_dotted_keys)
        store('_sort_keys', sort_keys)
        if initial_dictionary is not None:
            _fill_configdict(self, initial_dictionary)
        if isinstance(initial_dictionary, ConfigDict):
            # A ConfigDict built from another shares its fields and takes over its lock and type safety.
            store('_locked', initial_dictionary.is_locked)
            store('_type_safe', initial_dictionary.is_type_safe)

    @property
    def is_type_safe(self):
        """Whether a field keeps the type of its first value."""
        return self._type_safe

    @property
    def allow_dotted_keys(self):
        """Whether keys may contain '.' (otherwise a dot walks into nested ConfigDicts)."""
        return self._allow_dotted_keys

    @property
    def convert_dict(self):
        """Whether dicts stored in this ConfigDict are turned into ConfigDicts."""
        return self._convert_dict

    @property
    def is_locked(self):
        """Whether adding new fields is refused."""
        return self._locked

    def lock(self):
        """Refuses new fields from now on, here and in every nested ConfigDict; returns self."""
        if self.is_locked:
            return self
        object.__setattr__(self, '_locked', True)
        for key in self._fields:
            nested = _resolve(self._fields[key])
            if isinstance(nested, ConfigDict):
                nested.lock()
        return self

    def unlock(self):
        """Allows new fields again, here and in every nested ConfigDict; returns self."""
        object.__setattr__(self, '_locked', False)
        for field in self._fields.values():
            nested = _resolve(field)
            if isinstance(nested, ConfigDict) and nested.is_locked:
                nested.unlock()
        return self

    def get(self, key, default=None):
        """The value under `key`, or `default` when there is none."""
        try:
            return self[key]
        except KeyError:
            return default

    def get_ref(self, key):
        """A FieldReference standing for the field `key`; the field itself becomes that reference, so setting
        either changes both."""
        field = self._fields[key]
        if field is None:
            raise ValueError('Cannot create reference to a field whose value is None')
        if not isinstance(field, FieldReference):
            field = FieldReference(field)
            with self.ignore_type():
                self[key] = field
        return field

    def get_oneway_ref(self, key):
        """A reference that follows the field `key` but, when set, leaves that field alone."""
        return self.get_ref(key).identity()

    @property
    def _ordered_fields(self):
        if self._sort_keys:
            return collections.OrderedDict(sorted(self._fields.items()))
        return self._fields

    def items(self, preserve_field_references=False):
        """The (key, value) pairs in key order, references resolved unless `preserve_field_references`."""
        if preserve_field_references:
            return self._ordered_fields.items()
        return [(key, self[key]) for key in self._ordered_fields]

    def iteritems(self, preserve_field_references=False):
        """items(), one pair at a time."""
        for key in self._ordered_fields:
            yield key, (self._fields[key] if preserve_field_references else self[key])

    def keys(self):
        """The keys, as a list in key order."""
        return list(self._ordered_fields.keys())

    def iterkeys(self):
        return self._ordered_fields.keys()

    def values(self, preserve_field_references=False):
        """The values in key order, references resolved unless `preserve_field_references`."""
        if preserve_field_references:
            return list(self._ordered_fields.values())
        return [self[key] for key in self._ordered_fields]

    def itervalues(self, preserve_field_references=False):
        for key in self._ordered_fields:
            yield self._fields[key] if preserve_field_references else self[key]

    def _ensure_mutability(self, attribute):
        if attribute in _PROXY_NAMES:
            raise KeyError(f'{attribute} cannot be overridden.')

    def __setattr__(self, attribute, value):
        try:
            self._ensure_mutability(attribute)
            self[attribute] = value
        except KeyError as error:
            raise AttributeError(error)

    def __delattr__(self, attribute):
        try:
            self._ensure_mutability(attribute)
            del self[attribute]
        except KeyError as error:
            raise AttributeError(error)

    def __getattr__(self, attribute):
        try:
            return self[attribute]
        except KeyError as error:
            raise AttributeError(error)

    def __setitem__(self, key, value):
        if _is_path(self, key):
            raise ValueError('ConfigDict does not accept dots in field names (when `allow_dotted_keys=False`), but '
                             f'the key {key} contains one.')
        if self.is_locked and key not in self._fields:
            message = (f'Key "{key}" does not exist and cannot be added since the config is locked. Other fields '
                       f'present: "{self._fields}"')
            raise KeyError(self._generate_did_you_mean_message(key, message))
        if key in self._fields:
            current = self._fields[key]
            try:
                if isinstance(current, FieldReference):
                    current.set(value, self._type_safe)  # every field holding the reference sees the new value
                    return
                if not _reference_keeps_type(current, value):
                    if isinstance(value, dict) and self._convert_dict:
                        value = type(self)(value, type_safe=self._type_safe)
                    value = _coerce(value, type(current), self._type_safe)
            except TypeError as error:
                raise TypeError(f"Could not override field '{key}' (reference). {error}") from None
        if self._convert_dict:
            if isinstance(value, dict):
                value = ConfigDict(value, self._type_safe)
            elif isinstance(value, FieldReference):
                from .frozen_config_dict import FrozenConfigDict  # not at the top: that module imports this one

                held_type = _NoneType if value.empty() else type(value.get())
                if held_type is dict or held_type is FrozenConfigDict:
                    value.set(ConfigDict(value.get(), self._type_safe), False)
        self._fields[key] = value

    def _generate_did_you_mean_message(self, request, message=''):
        if isinstance(request, (int, float)):
            return message
        known = tuple(str(key) for key in self.keys())
        closest = difflib.get_close_matches(request, known, 1, 0.75)
        if closest:
            message = (message + '\n' if message else message) + f'Did you mean "{closest[0]}" instead of "{request}"?'
        return message

    def __delitem__(self, key):
        if self.is_locked:
            raise KeyError('This ConfigDict is locked, you have to unlock it before trying to delete a field.')
        if _is_path(self, key):
            head, rest = key.split('.', 1)
            del self[head][rest]
            return
        try:
            del self._fields[key]
        except KeyError as error:
            raise KeyError(self._generate_did_you_mean_message(key, str(error)))

    def __getitem__(self, key):
        if _is_path(self, key):
            head, rest = key.split('.', 1)
            return self[head][rest]
        try:
            field = self._fields[key]
        except KeyError as error:
            raise KeyError(self._generate_did_you_mean_message(key, str(error)))
        return field.get() if isinstance(field, FieldReference) else field

    def __contains__(self, key):
        return key in self._fields

    def __repr__(self):
        # YAML keeping the references (and their types); never fails, whatever the values are.
        try:
            return yaml.dump(self.to_dict(preserve_field_references=True), default_flow_style=False)
        except Exception:  # noqa: BLE001
            return repr(self.to_dict())

    def __str__(self):
        try:
            return yaml.dump(self.to_dict())
        except Exception:  # noqa: BLE001
            return str(self.to_dict())

    def __dir__(self):
        return self.keys() + dir(ConfigDict)

    def __len__(self):
        return len(self._ordered_fields)

    def __iter__(self):
        return iter(self._ordered_fields)

    def __eq__(self, other):
        if not isinstance(other, self.__class__):
            return False
        return (self._fields == other._fields) & (self._locked == other.is_locked) & (
            self._type_safe == other.is_type_safe)

    def __ne__(self, other):
        return not self.__eq__(other)

    def eq_as_configdict(self, other):
        """Equality that does not tell FrozenConfigDict from ConfigDict."""
        if not isinstance(other, ConfigDict):
            return False
        return ConfigDict(self) == ConfigDict(other)

    __hash__ = None

    def to_yaml(self, **kwargs):
        """The ConfigDict as YAML with Python tags (read it back with yaml.UnsafeLoader)."""
        return yaml.dump(self, **kwargs)

    def _json_dumps_wrapper(self, **kwargs):
        try:
            return json.dumps(self, **kwargs)
        except UnicodeDecodeError as error:
            raise JSONDecodeError(
                'Decoding error. Make sure all strings in your ConfigDict use ASCII-compatible encodings. See '
                'https://docs.python.org/2.7/howto/unicode.html#the-unicode-type for details. Original error '
                f'message: {error}')

    def to_json(self, json_encoder_cls=None, **kwargs):
        """The ConfigDict as JSON; a TypeError for values JSON cannot hold."""
        from .frozen_config_dict import CustomJSONEncoder  # not at the top: that module imports this one

        return self._json_dumps_wrapper(cls=json_encoder_cls or CustomJSONEncoder, **kwargs)

    def to_json_best_effort(self, **kwargs):
        """The ConfigDict as JSON, writing values JSON cannot hold as the best description it finds."""
        from .frozen_config_dict import _BestEffortCustomJSONEncoder  # not at the top: that module imports this one

        return self._json_dumps_wrapper(cls=_BestEffortCustomJSONEncoder, **kwargs)

    def to_dict(self, visit_map=None, preserve_field_references=False):
        """A plain dict (nested ConfigDicts as dicts), shared entries still shared.

        References are resolved, or with `preserve_field_references` replaced by fresh references holding the
        current value (one fresh reference per original, so ties between fields remain).
        """
        done = visit_map or {}
        result = {}
        done[id(self)] = result
        for key in self:
            field = self._fields[key]
            if isinstance(field, FieldReference) and preserve_field_references:
                value, entry = field.get(), field
            else:
                value = self[key]
                entry = value
            if id(entry) in done:
                result[key] = done[id(entry)]
            elif isinstance(value, ConfigDict):
                if isinstance(entry, FieldReference):
                    replacement = FieldReference({}, dict)
                    done[id(entry)] = replacement
                    replacement.set(value.to_dict(done, preserve_field_references))
                    result[key] = replacement
                else:
                    result[key] = value.to_dict(done, preserve_field_references)
            elif isinstance(entry, FieldReference):
                # The copy has the reference's type and current value (set without the type check, as the value
                # may have been stored under ignore_type()), not its operations.
                replacement = FieldReference(None, entry.get_type())
                replacement.set(entry.get(), type_safe=False)
                done[id(entry)] = replacement
                result[key] = replacement
            else:
                result[key] = entry
        return result

    def copy_and_resolve_references(self, visit_map=None):
        """A copy of the same class with every FieldReference replaced by its value, nested ConfigDicts copied."""
        from .frozen_config_dict import FrozenConfigDict  # not at the top: that module imports this one

        done = visit_map or {}
        duplicate = self.__class__()
        object.__setattr__(duplicate, '_convert_dict', self.convert_dict)
        object.__setattr__(duplicate, '_allow_dotted_keys', self.allow_dotted_keys)
        done[id(self)] = duplicate
        for key, value in self._fields.items():
            value = _resolve(value)
            if id(value) in done:
                value = done[id(value)]
            elif isinstance(value, ConfigDict):
                value = value.copy_and_resolve_references(done)
            if isinstance(self, FrozenConfigDict):
                duplicate._frozen_setattr(key, value)
            else:
                duplicate[key] = value
        object.__setattr__(duplicate, '_locked', self.is_locked)
        object.__setattr__(duplicate, '_type_safe', self.is_type_safe)
        return duplicate

    def __setstate__(self, state):
        # Pickle and deepcopy rebuild from the instance dict; sort_keys is not among what they restore.
        self.__init__()
        object.__setattr__(self, '_type_safe', state['_type_safe'])
        object.__setattr__(self, '_convert_dict', state.get('_convert_dict', True))
        object.__setattr__(self, '_allow_dotted_keys', state.get('_allow_dotted_keys', False))
        for key in state['_fields']:
            self[key] = state['_fields'][key]
        if state['_locked']:
            # Only this level: the nested ConfigDicts restore their own lock (and may not be restored yet).
            object.__setattr__(self, '_locked', True)

    @contextlib.contextmanager
    def unlocked(self):
        """Within the block the ConfigDict accepts new fields; a locked one is locked again afterwards."""
        relock = self._locked
        if relock:
            self.unlock()
        try:
            yield self
        finally:
            if relock:
                self.lock()

    @contextlib.contextmanager
    def ignore_type(self):
        """Within the block fields accept values of any type, here and in the ConfigDicts nested in it (also
        those inside lists, tuples, sets and mappings)."""
        saved = self._type_safe
        nested = []
        visited = {}  # id -> object, kept alive so that no id is reused during the walk
        pending = list(self._fields.items())
        while pending:
            item = pending.pop()
            if id(item) in visited:
                continue
            visited[id(item)] = item
            if isinstance(item, ConfigDict):
                nested.append(item.ignore_type)
            elif isinstance(item, collections.abc.Mapping):
                pending.extend(item.items())
            elif isinstance(item, (collections.abc.Sequence, collections.abc.Set)):
                pending.extend(item)
        object.__setattr__(self, '_type_safe', False)
        try:
            with contextlib.ExitStack() as stack:
                for context in nested:
                    stack.enter_context(context())
                yield self
        finally:
            object.__setattr__(self, '_type_safe', saved)

    def get_type(self, key):
        """The field's type: a reference's declared type, otherwise the type of the value."""
        value = self.__getattr__(key)  # the AttributeError (with its suggestion) for a missing key
        field = self._fields[key]
        return field.get_type() if isinstance(field, FieldReference) else type(value)

    def update(self, *other, **kwargs):
        """Like dict.update, but nested ConfigDicts are updated rather than replaced and type safety holds."""
        if len(other) > 1:
            raise TypeError(f'update expected at most 1 arguments, got {len(other)}')
        for source in other + (kwargs,):
            if isinstance(source, ConfigDict):
                pairs = source.items(preserve_field_references=True)
            else:
                pairs = source.items()
            for key, value in pairs:
                if key not in self:
                    self[key] = value
                elif isinstance(self._fields[key], ConfigDict):
                    self[key].update(source[key])
                elif isinstance(self._fields[key], FieldReference) and isinstance(value, FieldReference):
                    # Which of the two reference graphs should win is ambiguous, so the library refuses.
                    raise TypeError(f'Cannot update a FieldReference from another FieldReference: {key!r}')
                else:
                    self[key] = value

    def _update_value(self, key, index, value):
        if index is None:
            self[key] = value
        elif isinstance(self[key], list):
            self[key][index] = value
        elif isinstance(self[key], tuple):
            replaced = list(self[key])
            replaced[index] = value
            self[key] = tuple(replaced)

    def update_from_flattened_dict(self, flattened_dict, strip_prefix=''):
        """Sets fields from {'dotted.path': value} entries ('name[2]' indexes a list or tuple field); with
        `strip_prefix`, only the entries under that prefix, the prefix removed. Leaves may be added."""
        if strip_prefix:
            selected = {path: value for path, value in flattened_dict.items() if path.startswith(strip_prefix)}
        else:
            selected = flattened_dict
        children = {}  # 'name' or 'name[i]' -> the nested ConfigDict, each updated once below
        for full_key, value in selected.items():
            key = full_key[len(strip_prefix):] if strip_prefix else full_key
            component = key.split('.')[0]
            name, index = _first_component(component)
            if '.' not in key and index is None:
                self[name] = value
                continue
            if name not in self:
                raise KeyError(f'Key "{full_key}" cannot be set as "{strip_prefix + name}" was not found.')
            if index is not None and not isinstance(self[name], (list, tuple)):
                raise KeyError(f'Key "{full_key}" cannot be set as "{strip_prefix + name}" is not a tuple/list.')
            if '.' in key:
                child = self[name] if index is None else self[name][index]
                if not isinstance(child, ConfigDict):
                    raise KeyError(f'Key "{full_key}" cannot be updated as "{strip_prefix + component}" is not a '
                                   f'ConfigDict ({type(child)}).')
                children[component] = child
            else:
                self._update_value(name, index, value)
        for component, child in children.items():
            child.update_from_flattened_dict(selected, f'{strip_prefix}{component}.')


# Names defined in frozen_config_dict.py, which imports this module (FrozenConfigDict subclasses ConfigDict): a
# top-level import of them here would be a cycle, so the module __getattr__ (PEP 562) fetches them on first use and
# `from ml_collections.config_dict.config_dict import FrozenConfigDict` (pickles, YAML tags) keeps working.
_FROM_FROZEN_CONFIG_DICT = frozenset({
    '_BestEffortCustomJSONEncoder', '_check_freezable', '_fill_frozen', '_freeze', '_freeze_tuple', 'create',
    'CustomJSONEncoder', 'FrozenConfigDict', 'placeholder', 'recursive_rename', 'required_placeholder'})


def __getattr__(name):
    if name in _FROM_FROZEN_CONFIG_DICT:
        from . import frozen_config_dict
        value = getattr(frozen_config_dict, name)
        globals()[name] = value  # later lookups find it without coming here
        return value
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
    return sorted(set(globals()) | _FROM_FROZEN_CONFIG_DICT)
