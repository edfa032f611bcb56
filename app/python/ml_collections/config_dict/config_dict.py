# ml_collections.config_dict.config_dict for shardscope: ConfigDict, FrozenConfigDict, FieldReference and helpers.

# Written afresh to behave as ml_collections 1.1.0 does (values, key order, YAML text, exception types and messages).
# The module keeps the library's module path so that pickles and YAML tags name the same classes, and its instance
# attributes (_fields, _locked, _type_safe, ... / _value, _field_type, _ops, _required) because repr() and to_yaml()
# print them.
import abc
import collections
import collections.abc
import contextlib
import dataclasses
import difflib
import functools
import inspect
import json
import operator
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


class RequiredValueError(Exception):
    """A required placeholder was read while it still held no value."""


class MutabilityError(Exception):
    """A reference was pointed at something that, in turn, points back at it."""


class JSONDecodeError(Exception):
    """to_json met a string it could not encode."""


_NoneType = type(None)

# Names a ConfigDict field may not take: every attribute of Python's `super` proxy (the library checks a new
# attribute against dir(super(ConfigDict, self)), which is the same list for any instance).
_PROXY_NAMES = frozenset(dir(super(object, object())))


def _type_defines_call(candidate):
    """Whether instances of `candidate` (a type, or a tuple of them) are callable."""
    if isinstance(candidate, tuple):
        return any(_type_defines_call(member) for member in candidate)
    return any('__call__' in vars(klass) for klass in candidate.__mro__)


def _breaks_type_safety(value, field_type):
    """True when storing `value` in a field typed `field_type` must be refused."""
    if value is None or field_type == _NoneType:
        return False  # None replaces, and is replaced by, anything
    if isinstance(value, field_type):
        return False
    # One callable may stand in for another (a function where a class was, and so on).
    return not (callable(value) and _type_defines_call(field_type))


def _coerce(value, field_type, type_safe=False):
    """`value` converted for a field of `field_type` where the library converts (int to float, list and tuple
    into each other); with `type_safe`, a TypeError when it still does not fit."""
    if isinstance(value, int) and field_type is float:
        return float(value)
    if isinstance(value, str) and field_type is str:
        return str(value)
    if field_type is list and isinstance(value, tuple):
        return list(value)
    if field_type is tuple and isinstance(value, list):
        return tuple(value)
    if field_type is int and isinstance(value, int):
        return value
    if type_safe and _breaks_type_safety(value, field_type):
        raise TypeError(f'{value} is of original type {type(value)} and cannot be casted to type {field_type}')
    return value


def _resolve(value):
    """A FieldReference's current value; anything else as it is."""
    return value.get() if isinstance(value, FieldReference) else value


_INDEXED_NAME = re.compile(r'(.*)\[([0-9]+)\]')


def _first_component(path):
    """('name', index) for the first dotted component of `path`, index None unless it reads `name[3]`."""
    head = path.split('.')[0]
    indexed = _INDEXED_NAME.match(head)
    if indexed is None:
        return head, None
    return indexed.group(1), int(indexed.group(2))


class _Op(collections.namedtuple('_Op', ['fn', 'args'])):
    """One deferred step of a derived FieldReference: `fn(value, *args)`, the args resolved when it runs."""


@functools.total_ordering
class FieldReference:
    """A typed, shareable slot for a config value.

    Storing one reference under several keys of a ConfigDict ties them together: setting any of them sets the
    reference. Arithmetic on a reference builds a new reference whose value is computed when read, so
    `ref * 2` follows later changes of `ref`. `field_type` defaults to the default value's type; with
    `required`, reading the reference while it is None raises RequiredValueError.
    """

    def __init__(self, default, field_type=None, op=None, required=False):
        if field_type is None:
            if default is None:
                raise ValueError('Default value cannot be None if field_type is None')
            field_type = default.get_type() if isinstance(default, FieldReference) else type(default)
        else:
            try:
                isinstance(None, field_type)  # accepts exactly what isinstance accepts as a class spec
            except TypeError:
                raise TypeError(f'field_type should be a type, not {type(field_type)}')
        self._field_type = field_type
        self.set(default)
        if required and op is not None:
            raise ValueError('Cannot set required to True if op is not None')
        self._required = required
        self._ops = [] if op is None else [op]

    def has_cycle(self, visited=None):
        """True when following this reference's value and operands comes back to a reference already on the path."""
        on_path = visited or set()
        if id(self) in on_path:
            return True
        on_path.add(id(self))
        linked = [self._value]
        for step in self._ops:
            linked.extend(step.args)
        return any(isinstance(item, FieldReference) and item.has_cycle(set(on_path)) for item in linked)

    def set(self, value, type_safe=True):
        """Replaces the value (dropping any deferred operations); with `type_safe`, refuses a value of another type."""
        self._ops = []
        if value is None:
            self._value = None
        elif isinstance(value, FieldReference):
            if type_safe and not issubclass(value.get_type(), self.get_type()):
                raise TypeError(f'Reference is of type {value.get_type()} but should be of type {self.get_type()}')
            previous = getattr(self, '_value', None)
            self._value = value
            if self.has_cycle():
                self._value = previous
                raise MutabilityError('Found cycle in reference graph.')
        else:
            self._value = _coerce(value, self._field_type, type_safe)

    def empty(self):
        """True while the reference holds None."""
        return self._value is None

    def get(self):
        """The value: the stored one (read through any reference it holds) with the deferred operations applied.
        An operation that meets None yields None."""
        if self._required and self._value is None:
            raise RequiredValueError('None value found in required reference')
        result = _resolve(self._value)
        for step in self._ops:
            operands = [_resolve(arg) for arg in step.args]
            result = None if result is None or None in operands else step.fn(result, *operands)
            result = _resolve(result)
        return result

    def get_type(self):
        return self._field_type

    def __eq__(self, other):
        return self.get() == (other.get() if isinstance(other, FieldReference) else other)

    def __le__(self, other):
        return self.get() <= (other.get() if isinstance(other, FieldReference) else other)

    __hash__ = None  # the value can change, so references are not hashable

    def _apply_op(self, fn, *args):
        operands = [_coerce(arg, self._field_type) for arg in args]
        return FieldReference(self, field_type=self._field_type, op=_Op(fn, operands))

    def _apply_cast_op(self, field_type):
        # The new reference's own value is a placeholder of the target type; the operation reads this one.
        return FieldReference(field_type(), field_type=field_type, op=_Op(lambda _, source: field_type(source), [self]))

    def identity(self):
        return self._apply_op(lambda x: x)

    def attr(self, attr_name):
        return self._apply_op(operator.attrgetter(attr_name))

    def __add__(self, other):
        return self._apply_op(operator.add, other)

    def __radd__(self, other):
        return self._apply_op(functools.partial(operator.add, other))

    def __sub__(self, other):
        return self._apply_op(operator.sub, other)

    def __rsub__(self, other):
        return self._apply_op(functools.partial(operator.sub, other))

    def __mul__(self, other):
        return self._apply_op(operator.mul, other)

    def __rmul__(self, other):
        return self._apply_op(functools.partial(operator.mul, other))

    def __div__(self, other):
        return self._apply_op(operator.truediv, other)

    def __rdiv__(self, other):
        return self._apply_op(functools.partial(operator.truediv, other))

    def __truediv__(self, other):
        return self._apply_op(operator.truediv, other)

    def __rtruediv__(self, other):
        return self._apply_op(functools.partial(operator.truediv, other))

    def __floordiv__(self, other):
        return self._apply_op(operator.floordiv, other)

    def __rfloordiv__(self, other):
        return self._apply_op(functools.partial(operator.floordiv, other))

    def __pow__(self, other):
        return self._apply_op(operator.pow, other)

    def __mod__(self, other):
        return self._apply_op(operator.mod, other)

    def __and__(self, other):
        return self._apply_op(operator.and_, other)

    def __or__(self, other):
        return self._apply_op(operator.or_, other)

    def __xor__(self, other):
        return self._apply_op(operator.xor, other)

    def __neg__(self):
        return self._apply_op(operator.neg)

    def __abs__(self):
        return self._apply_op(operator.abs)

    def to_int(self):
        return self._apply_cast_op(int)

    def to_float(self):
        return self._apply_cast_op(float)

    def to_str(self):
        return self._apply_cast_op(str)

    def __setstate__(self, state):
        self._value = state['_value']
        self._field_type = state['_field_type']
        self._ops = state['_ops']
        self._required = state.get('_required', False)

    def __bool__(self):
        raise NotImplementedError('FieldReference cannot be used for control flow. For boolean operations use "&" '
                                  '(logical "and") or "|" (logical "or").')

    __nonzero__ = __bool__


def _fill_configdict(target, source, converted=None):
    """Copies `source` (a dict or ConfigDict) into the empty ConfigDict `target`.

    Nested dicts become ConfigDicts (when `target` converts dicts), as do dicts held by dict-typed references;
    `converted` maps the id of each mapping already turned into a ConfigDict to that ConfigDict, so shared and
    self-referencing mappings stay shared and the walk ends.
    """
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

    _HAS_DYNAMIC_ATTRIBUTES = True  # tells static checkers that attributes come and go

    _allow_dotted_keys: bool
    _sort_keys: bool

    def __init__(self, initial_dictionary=None, type_safe=True, convert_dict=True, *, allow_dotted_keys=False,
                 sort_keys=True):
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
        return self._json_dumps_wrapper(cls=json_encoder_cls or CustomJSONEncoder, **kwargs)

    def to_json_best_effort(self, **kwargs):
        """The ConfigDict as JSON, writing values JSON cannot hold as the best description it finds."""
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
