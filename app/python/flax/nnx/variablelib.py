# flax.nnx Variables (Param, BatchStat, Cache, Intermediate): a value with metadata, eagerly sharded by its
# `out_sharding` annotation when created under a mesh, registered as a pytree whose leaf is the value.
import dataclasses
import functools
import typing as tp

import jax
import numpy as np

from flax.nnx import reprlib

_MISSING = object()
_EAGER_SHARDING = [True]  # flax_always_shard_variable defaults to True in Flax 0.12


class use_eager_sharding:
    """Sets eager sharding globally when called, or for a `with` block when used as a context manager."""

    def __init__(self, value: bool):
        self._previous = _EAGER_SHARDING[-1]
        _EAGER_SHARDING[-1] = bool(value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _EAGER_SHARDING[-1] = self._previous
        return False


def using_eager_sharding() -> bool:
    return _EAGER_SHARDING[-1]


@dataclasses.dataclass
class VariableMetadata:
    raw_value: tp.Any
    metadata: tp.Mapping[str, tp.Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class SizeBytes:
    size: int
    bytes: int

    @classmethod
    def from_array(cls, x):
        size = int(np.prod(x.shape))
        dtype = x.dtype if hasattr(x.dtype, 'itemsize') else np.dtype(x.dtype)
        return cls(size, size * dtype.itemsize)

    @classmethod
    def from_any(cls, x):
        total = cls(0, 0)
        for leaf in jax.tree.leaves(x, is_leaf=is_key_array):
            if hasattr(leaf, 'shape') and hasattr(leaf, 'dtype'):
                total += cls.from_array(leaf)
        return total

    def __add__(self, other):
        return SizeBytes(self.size + other.size, self.bytes + other.bytes)

    def __bool__(self):
        return bool(self.size)

    def __repr__(self):
        b = self.bytes
        if b > 1e9:
            text = f'{b / 1e9:,.1f} GB'
        elif b > 1e6:
            text = f'{b / 1e6:,.1f} MB'
        elif b > 1e3:
            text = f'{b / 1e3:,.1f} KB'
        else:
            text = f'{b:,} B'
        return f'{self.size:,} ({text})'


def is_key_array(x):
    # The engine's typed keys are pytrees over their key data; Flax counts and prints them as one array each.
    return type(x).__name__ == 'PRNGKeyArray'


def _remap_sharding_metadata(metadata):
    # Flax 0.12 renamed the `sharding` / `sharding_names` annotations to `out_sharding`.
    for old in ('sharding', 'sharding_names'):
        if old in metadata:
            metadata['out_sharding'] = metadata.pop(old)


class Variable(reprlib.Representable):
    """A value with metadata; subclasses name the collection it belongs to (Param, BatchStat, ...)."""
    __slots__ = ('_raw_value', '_var_metadata')
    required_metadata = frozenset(['hijax', 'ref', 'eager_sharding'])

    def __init__(self, value, *, hijax=None, ref=None, eager_sharding=None, **metadata):
        if isinstance(value, VariableMetadata):
            aux = dict(value.metadata)
            if 'eager_sharding' in aux:
                eager_sharding = aux['eager_sharding']
            metadata.update(aux)
            value = value.raw_value
        from flax import _versions
        if not _versions.nnx_variables_shard_eagerly():
            # Flax before 0.12 keeps the annotation as given and leaves placing the value to the user.
            object.__setattr__(self, '_var_metadata', metadata)
            object.__setattr__(self, '_raw_value', value)
            return
        if eager_sharding is None:
            eager_sharding = using_eager_sharding()
        metadata['hijax'] = bool(hijax) if hijax is not None else False
        metadata['ref'] = bool(ref) if ref is not None else False
        metadata['eager_sharding'] = eager_sharding
        _remap_sharding_metadata(metadata)
        object.__setattr__(self, '_var_metadata', metadata)
        if eager_sharding and metadata.get('out_sharding'):
            from flax.nnx import spmd
            value = spmd.shard_value(value, metadata['out_sharding'], metadata.get('sharding_rules'),
                                     metadata.get('mesh'))
        object.__setattr__(self, '_raw_value', value)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _register(cls)

    @classmethod
    def _new(cls, value, metadata):
        obj = object.__new__(cls)
        object.__setattr__(obj, '_var_metadata', metadata)
        object.__setattr__(obj, '_raw_value', value)
        return obj

    @classmethod
    def from_metadata(cls, value, attributes):
        return cls._new(value, dict(attributes))

    @property
    def var_type(self):
        return type(self)

    @property
    def type(self):
        return type(self)

    @property
    def shape(self):
        return self._raw_value.shape

    def __getattr__(self, name):
        metadata = object.__getattribute__(self, '_var_metadata')
        if name in metadata:
            return metadata[name]
        return getattr(object.__getattribute__(self, '_raw_value'), name)

    def __setattr__(self, name, value):
        from flax import _versions
        if name in ('value', '_raw_value', '_var_metadata'):
            object.__setattr__(self, name, value)
        elif not _versions.nnx_variables_shard_eagerly():
            self._var_metadata[name] = value  # a VariableState's attributes were its metadata before Flax 0.12
        else:
            raise AttributeError(
                f'Cannot set attribute {name}. To set Variable metadata use either:\n\n'
                f'  variable.set_metadata({name}=value)\n\nor\n\n  variable.set_metadata(\'{name}\', value)')

    def get_metadata(self, name=None, default=_MISSING, *, exclude_required=False):
        metadata = dict(self._var_metadata)
        if name is None:
            if exclude_required:
                for key in self.required_metadata:
                    metadata.pop(key, None)
            return metadata
        if name not in metadata and default is not _MISSING:
            return default
        return metadata[name]

    def set_metadata(self, *args, **kwargs):
        if len(args) == 2:
            kwargs[args[0]] = args[1]
        elif len(args) == 1:
            object.__setattr__(self, '_var_metadata', dict(args[0]))
        self._var_metadata.update(kwargs)

    def has_metadata(self, name):
        return name in self._var_metadata

    def del_metadata(self, name):
        del self._var_metadata[name]

    def get_raw_value(self):
        return self._raw_value

    def set_raw_value(self, value, **_):
        object.__setattr__(self, '_raw_value', value)

    raw_value = property(get_raw_value, set_raw_value)

    def get_value(self, *, index=_MISSING):
        value = self._raw_value
        if index is not _MISSING and not (index is Ellipsis and hasattr(value, 'shape')):
            value = value[index]
        return value

    def set_value(self, value, *, index=_MISSING):
        if isinstance(value, Variable):
            value = value.get_value()
        if index is _MISSING or (index is Ellipsis and getattr(value, 'shape', None) == self._raw_value.shape):
            object.__setattr__(self, '_raw_value', value)
        else:
            object.__setattr__(self, '_raw_value', self._raw_value.at[index].set(value))

    value = property(get_value, set_value)

    def create_value(self, value):
        return value

    def copy_from(self, other):
        object.__setattr__(self, '_raw_value', other._raw_value)
        self._var_metadata.clear()
        self._var_metadata.update(other.get_metadata())

    def update_from_state(self, variable_state):
        object.__setattr__(self, '_raw_value', variable_state._raw_value)
        if self._var_metadata != variable_state._var_metadata:
            object.__setattr__(self, '_var_metadata', variable_state.get_metadata())

    def copy(self, value=_MISSING, **updates):
        metadata = self.get_metadata() | updates
        if value is _MISSING:
            value = metadata.pop('value', self._raw_value)
        return type(self).from_metadata(value, metadata)

    replace = copy
    to_state = copy

    def add_axis(self, axis_index, axis_name):
        pass

    def remove_axis(self, axis_index, axis_name):
        pass

    def __nnx_repr__(self):
        stats = SizeBytes.from_any(self._raw_value)
        yield reprlib.Object(type=type(self).__name__, comment=f' # {stats}' if stats else '')
        yield reprlib.Attr('value', self.get_value())
        for name, value in self._var_metadata.items():
            if name in ('hijax', 'ref') and not value:
                continue
            if name == 'eager_sharding' and value:
                continue
            yield reprlib.Attr(name, value)

    def __jax_array__(self):
        return self.get_value()

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.get_value(), dtype=dtype)

    def __getitem__(self, key):
        return self.get_value(index=key)

    def __setitem__(self, key, value):
        self.set_value(value, index=key)

    def __call__(self, *args, **kwargs):
        return self.get_value()(*args, **kwargs)

    def __len__(self):
        return len(self.get_value())

    def __iter__(self):
        return iter(self.get_value())

    def __eq__(self, other):
        return type(self) is type(other) and self._raw_value is other._raw_value and \
            self._var_metadata == other._var_metadata

    __hash__ = object.__hash__

    def __neg__(self):
        return -self.get_value()

    def __pos__(self):
        return +self.get_value()

    def __abs__(self):
        return abs(self.get_value())

    def __bool__(self):
        return bool(self.get_value())


def _operator(name):
    def method(self, other):
        if isinstance(other, Variable):
            other = other.get_value()
        return getattr(self.get_value(), name)(other)
    method.__name__ = name
    return method


for _name in ('add', 'sub', 'mul', 'matmul', 'truediv', 'floordiv', 'mod', 'pow', 'lt', 'le', 'gt', 'ge', 'and',
              'or', 'xor', 'lshift', 'rshift'):
    setattr(Variable, f'__{_name}__', _operator(f'__{_name}__'))
    if _name not in ('lt', 'le', 'gt', 'ge'):
        setattr(Variable, f'__r{_name}__', _operator(f'__r{_name}__'))


def _inplace(name):
    def method(self, other):
        self.set_value(getattr(self.get_value(), name)(other.get_value() if isinstance(other, Variable) else other))
        return self
    return method


for _name in ('add', 'sub', 'mul', 'matmul', 'truediv', 'pow'):
    setattr(Variable, f'__i{_name}__', _inplace(f'__{_name}__'))


def _register(cls):
    def flatten_with_keys(x):
        return ((jax.tree_util.GetAttrKey('value'), x._raw_value),), tuple(sorted(x._var_metadata.items()))

    def flatten(x):
        return (x._raw_value,), tuple(sorted(x._var_metadata.items()))

    def unflatten(static, children):
        return cls._new(children[0], dict(static))

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)


_register(Variable)
VariableState = Variable


class Param(Variable):
    """The canonical learnable parameter."""


class BatchStat(Variable):
    """Running batch statistics (BatchNorm's mean and var)."""


class Cache(Variable):
    """Autoregressive caches."""


class Intermediate(Variable):
    """Values sown during a call."""


class Perturbation(Intermediate):
    pass


def with_metadata(initializer, **metadata):
    @functools.wraps(initializer)
    def wrapper(*args, **kwargs):
        return VariableMetadata(initializer(*args, **kwargs), metadata=metadata)
    return wrapper


# Linen collection names and the NNX Variable types that stand for them (the bridge's conversion table).
VariableTypeCache: dict = {}


def variable_type_from_name(name, /, *, base=Variable, allow_register=False):
    """The Variable type of Linen collection `name`; with allow_register, a new subclass named after it."""
    if name not in VariableTypeCache:
        if not allow_register:
            raise ValueError(f'Name {name} is not registered in the registry. To register a new name, use '
                             'register_variable_name() or set allow_register=True.')
        VariableTypeCache[name] = type(name, (base,), {})
    return VariableTypeCache[name]


def variable_name_from_type(typ, /, *, allow_register=False):
    """The Linen collection name of Variable type `typ`; with allow_register, its class name, registered."""
    for name, t in VariableTypeCache.items():
        if typ == t:
            return name
    if not allow_register:
        raise ValueError(f'Type {typ} is not registered in the registry. To register a new type, use '
                         'register_variable_name() or set allow_register=True.')
    name = typ.__name__
    if name in VariableTypeCache:
        raise ValueError(f'Name {name} is already registered in the registry as {VariableTypeCache[name]}. '
                         f'It cannot be linked with this type {typ}.')
    register_variable_name(name, typ)
    return name


_NO_TYPE = object()


def register_variable_name(name, typ=_NO_TYPE, *, overwrite=False):
    """Links Linen collection `name` with Variable type `typ`; without `typ`, a class decorator."""
    if typ is _NO_TYPE:
        return functools.partial(register_variable_name, name, overwrite=overwrite)
    if not overwrite and name in VariableTypeCache:
        raise ValueError(f'Name {name} already mapped to type {VariableTypeCache[name]}. To overwrite, call '
                         'register_variable_name() with `overwrite=True`.')
    VariableTypeCache[name] = typ
    return typ


register_variable_name('params', Param)
register_variable_name('batch_stats', BatchStat)
register_variable_name('cache', Cache)
register_variable_name('intermediates', Intermediate)
register_variable_name('perturbations', Perturbation)
