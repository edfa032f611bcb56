# jax.ShapeDtypeStruct, jax.device_get and the array constructors from per-device data
# (make_array_from_callback, make_array_from_single_device_arrays).
import math

import numpy as np

import _shardscope
from jax._src import tree as _tree


def _is_sharding(x):
    from jax._src.positional_sharding import PositionalSharding
    return isinstance(x, (_shardscope.NamedSharding, _shardscope.SingleDeviceSharding, PositionalSharding)) or \
        hasattr(x, 'shard_shape')


class ShapeDtypeStruct:
    __slots__ = ['shape', 'dtype', '_sharding', 'weak_type', 'manual_axis_type', 'is_ref']

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False, manual_axis_type=None, is_ref=False,
                 vma=None):
        from jax import dtypes
        shape = tuple(shape)
        if any(s is None for s in shape):
            raise ValueError(f'`shape` passed to `ShapeDtypeStruct` cannot have None in it. Got {shape=}')
        object.__setattr__(self, 'shape', shape)
        if dtype is None:
            raise ValueError('ShapeDtypeStruct: dtype must be specified.')
        object.__setattr__(self, 'dtype', dtypes.dtype(dtype))
        if sharding is not None and not (_is_sharding(sharding) or isinstance(sharding, _shardscope.PartitionSpec)):
            raise ValueError('sharding should be an instance of `jax.sharding.Sharding`, `jax.sharding.PartitionSpec` '
                             f'or `jax.experimental.layout.Format`. Got {sharding} of type {type(sharding)}.')
        spec = getattr(sharding, 'spec', sharding if isinstance(sharding, _shardscope.PartitionSpec) else None)
        if spec is not None and len(spec) > len(shape):
            raise ValueError(f'Sharding {sharding} is only valid for values of rank at least {len(spec)}, but was '
                             f'applied to a value of rank {len(shape)}')
        object.__setattr__(self, '_sharding', sharding)
        object.__setattr__(self, 'weak_type', weak_type)
        object.__setattr__(self, 'manual_axis_type', manual_axis_type)
        object.__setattr__(self, 'is_ref', is_ref)

    def __setattr__(self, name, value):
        # Immutable from JAX 0.6.1; before, attributes could be reassigned.
        if _shardscope.jax_version_info() >= (0, 6, 1) and getattr(self, name, None) != value:
            raise RuntimeError(f'Cannot reassign attributes ({name}) of immutable ShapeDtypeStruct objects')
        object.__setattr__(self, name, value)

    size = property(lambda self: math.prod(self.shape))
    ndim = property(lambda self: len(self.shape))

    @property
    def sharding(self):
        if isinstance(self._sharding, _shardscope.PartitionSpec):
            mesh = _shardscope.get_concrete_mesh()
            if mesh is None:
                raise TypeError('When specifying PartitionSpec to `ShapeDtypeStruct`, the context mesh cannot be '
                                'empty. Please use `jax.set_mesh` to set the mesh context.')
            return _shardscope.NamedSharding(mesh, self._sharding)
        return self._sharding

    @classmethod
    def like(cls, x):
        # A tracer has no concrete sharding to copy (reading it raises): its struct has none.
        sharding = None if getattr(x, '_is_tracer', False) else getattr(x, 'sharding', None)
        return cls(np.shape(x), getattr(x, 'dtype', None) or np.result_type(x),
                   sharding=sharding, weak_type=bool(getattr(x, 'weak_type', False)))

    def __len__(self):
        try:
            return self.shape[0]
        except IndexError as e:
            raise TypeError('len() of unsized object') from e

    def __repr__(self):
        sharding = f', sharding={self.sharding}' if self.sharding is not None else ''
        weak = f', weak_type={self.weak_type}' if self.weak_type else ''
        mat = f', manual_axis_type={self.manual_axis_type}' if self.manual_axis_type else ''
        ref = f', is_ref={self.is_ref}' if self.is_ref else ''
        return f'{type(self).__name__}(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak}{mat}{ref})'

    __str__ = __repr__

    def _key(self):
        return (self.shape, self.dtype, self.sharding, self.weak_type, self.manual_axis_type, self.is_ref)

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def update(self, **kwargs):
        fields = dict(shape=self.shape, dtype=self.dtype, sharding=self._sharding, weak_type=self.weak_type,
                      manual_axis_type=self.manual_axis_type, is_ref=self.is_ref)
        fields.update(kwargs)
        return ShapeDtypeStruct(fields.pop('shape'), fields.pop('dtype'), **fields)


ShapeDtypeStruct.__module__ = 'jax'


def device_get(x):
    """Host copies of every jax Array leaf (numpy arrays); other leaves, tracers included, pass through."""
    def fetch(leaf):
        if getattr(leaf, '_is_tracer', False):
            return leaf
        to_array = getattr(leaf, '__array__', None)
        return leaf if to_array is None else to_array()
    return _tree.tree_map(fetch, x)


def _engine(sharding, ndim):
    from jax._src.positional_sharding import to_engine_sharding
    return to_engine_sharding(sharding, ndim)


def _canonical_block(value):
    # Callback results are canonicalized like any host value: float64 becomes float32 without x64.
    if getattr(value, '_is_tracer', False):
        raise _unexpected_tracer()
    if isinstance(value, _shardscope.ArrayImpl):
        return value
    from jax import dtypes
    array = np.asarray(value)
    return array.astype(dtypes.canonicalize_dtype(array.dtype)) if array.dtype.kind != 'V' else array


class UnexpectedTracerError(Exception):
    pass


UnexpectedTracerError.__module__ = 'jax.errors'


def _unexpected_tracer():
    return UnexpectedTracerError('jax.make_array_from_callback cannot be called within a traced context.')


def _dtype_of(blocks, dtype, fname):
    from jax import dtypes
    if dtype is None:
        if not blocks:
            raise ValueError('If the Array has no addressable shards, `dtype` must be provided via the `dtype` '
                             f'argument to `jax.{fname}`.')
        return blocks[0].dtype
    dtype = dtypes.canonicalize_dtype(dtype)
    if blocks and blocks[0].dtype != dtype:
        raise ValueError(f'If `dtype` is provided to `jax.{fname}`, it must match the dtype of the addressable '
                         f'shards. Got dtype={dtype} and shard dtype={blocks[0].dtype}`.')
    return dtype


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    if not _is_sharding(sharding):
        raise TypeError(f'sharding should be an instance of `jax.sharding`. Got {sharding} of type {type(sharding)}')
    shape = tuple(shape)
    engine = _engine(sharding, len(shape))
    devices = engine._device_assignment
    if engine.is_fully_replicated:
        # One call for the whole value, shared by every device.
        value = _canonical_block(data_callback((slice(None),) * len(shape)))
        blocks = [value] * len(devices)
    else:
        # One call per device, with that device's index (as JAX 0.11 does; replicas are not deduplicated).
        index_map = engine.devices_indices_map(shape)
        blocks = [_canonical_block(data_callback(index_map[device])) for device in devices]
    dtype = _dtype_of(blocks, dtype, 'make_array_from_callback')
    return _shardscope.array_from_device_blocks(shape, dtype, engine, list(zip(devices, blocks)))


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    if not isinstance(arrays, (list, tuple)):
        raise TypeError('jax.make_array_from_single_device_arrays `arrays` argument must be a list or tuple, but '
                        f'got {type(arrays)}.')
    if any(getattr(a, '_is_tracer', False) for a in arrays):
        raise ValueError('jax.make_array_from_single_device_arrays requires a list of concrete arrays as input, but '
                         f'got types {set(map(type, arrays))}')
    shape = tuple(shape)
    engine = _engine(sharding, len(shape))
    dtype = _dtype_of(list(arrays), dtype, 'make_array_from_single_device_arrays')
    blocks = []
    for a in arrays:
        held = list(a.devices())
        if len(held) != 1:
            raise ValueError('When making an array from single-device arrays the input arrays must have one shard '
                             f'each. An argument array had {len(held)} shard(s).')
        blocks.append((held[0], a))
    ids = [d.id for d, _ in blocks]
    if len(set(ids)) != len(ids):
        raise ValueError('When making an array from single-device arrays, the input arrays must be from distinct '
                         f'devices, but got device IDs {ids}')
    wanted = {d.id for d in engine._addressable_device_assignment}
    if set(ids) != wanted:
        message = 'Addressable devices and per-device arrays devices do not match.'
        if wanted - set(ids):
            message += f' Sharding contains devices {wanted - set(ids)} that are not present in per-device arrays.'
        if set(ids) - wanted:
            message += f' Per-device arrays contain devices {set(ids) - wanted} that are not present in the sharding.'
        raise ValueError(message)
    return _shardscope.array_from_device_blocks(shape, dtype, engine, blocks)
