# ml_collections.config_dict's FieldReference, its _Op steps, the package's error classes and the type helpers.

# Split out of config_dict.py (the public module, which re-exports every name here); written afresh to behave as
# ml_collections 1.1.0 does. The classes keep the public module path in __module__ and their instance attributes
# (_value, _field_type, _ops, _required) because pickles, repr() and to_yaml() print them.
import collections
import functools
import operator

# The public module path: pickles, YAML tags in repr() and to_yaml(), and tracebacks name the package's classes by
# it. Every class (ConfigDict's too) holds this one string object, since pickle memoizes it by identity and so
# writes it once per pickle, as it did when one module defined them all.
_PUBLIC_MODULE = 'ml_collections.config_dict.config_dict'


class RequiredValueError(Exception):
    """A required placeholder was read while it still held no value."""

    __module__ = _PUBLIC_MODULE  # the public path, which pickles and tracebacks name


class MutabilityError(Exception):
    """A reference was pointed at something that, in turn, points back at it."""

    __module__ = _PUBLIC_MODULE  # the public path, which pickles and tracebacks name


class JSONDecodeError(Exception):
    """to_json met a string it could not encode."""

    __module__ = _PUBLIC_MODULE  # the public path, which pickles and tracebacks name


_NoneType = type(None)


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


# module=: the generated namedtuple base reports the public path too (in _Op.__mro__), as it did before the split.
class _Op(collections.namedtuple('_Op', ['fn', 'args'], module=_PUBLIC_MODULE)):
    """One deferred step of a derived FieldReference: `fn(value, *args)`, the args resolved when it runs."""

    __module__ = _PUBLIC_MODULE  # the public path, which pickles and to_yaml() tags name


@functools.total_ordering
class FieldReference:
    """A typed, shareable slot for a config value.

    Storing one reference under several keys of a ConfigDict ties them together: setting any of them sets the
    reference. Arithmetic on a reference builds a new reference whose value is computed when read, so
    `ref * 2` follows later changes of `ref`. `field_type` defaults to the default value's type; with
    `required`, reading the reference while it is None raises RequiredValueError.
    """

    __module__ = _PUBLIC_MODULE  # the public path, which pickles and YAML tags in repr() name

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
