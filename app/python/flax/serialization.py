# flax.serialization: state dicts of Flax objects and their msgpack encoding, byte-compatible with real Flax's files.
import dataclasses
import enum
import threading
from contextlib import contextmanager

import numpy as np

import jax
from flax import _msgpack
from flax.core.frozen_dict import FrozenDict

_STATE_DICT_REGISTRY = {}


class _ErrorContext(threading.local):
    def __init__(self):
        self.path = []


_error_context = _ErrorContext()


@contextmanager
def _record_path(name):
    try:
        _error_context.path.append(name)
        yield
    finally:
        _error_context.path.pop()


def current_path():
    """The state-dict path being restored, for error messages."""
    return '/'.join(_error_context.path)


class _NamedTuple:
    """Registry key standing for every namedtuple class."""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, '_fields')


def _register_flax_dataclass(ty):
    # Real Flax registers each flax.struct dataclass when it is decorated; shardscope's struct module has no hook
    # into this one, so the same handlers are made on first use, for exactly the classes flax.struct decorated.
    data_fields = [f.name for f in dataclasses.fields(ty) if f.init and f.metadata.get('pytree_node', True)]

    def ty_to_state_dict(x):
        return {name: to_state_dict(getattr(x, name)) for name in data_fields}

    def ty_from_state_dict(x, state):
        state = state.copy()  # fields are popped as they are restored; what remains is unknown
        updates = {}
        for name in data_fields:
            if name not in state:
                raise ValueError(f'Missing field {name} in state dict while restoring an instance of {ty.__name__},'
                                 f' at path {current_path()}')
            updates[name] = from_state_dict(getattr(x, name), state.pop(name), name=name)
        if state:
            names = ','.join(state.keys())
            raise ValueError(f'Unknown field(s) "{names}" in state dict while restoring an instance of'
                             f' {ty.__name__} at path {current_path()}')
        return x.replace(**updates)

    _STATE_DICT_REGISTRY[ty] = (ty_to_state_dict, ty_from_state_dict)


def _handlers(ty):
    if ty not in _STATE_DICT_REGISTRY and '_flax_dataclass' in getattr(ty, '__dict__', {}):
        _register_flax_dataclass(ty)
    return _STATE_DICT_REGISTRY.get(ty)


def _registry_key(target):
    return _NamedTuple if _is_namedtuple(target) else type(target)


def from_state_dict(target, state, name='.'):
    """A copy of `target` with its state replaced by `state` (a dict from to_state_dict of a like object).

    Only the target's structure is used; leaves of unregistered types are replaced by the state's values."""
    handlers = _handlers(_registry_key(target))
    if handlers is None:
        return state
    with _record_path(name):
        return handlers[1](target, state)


def to_state_dict(target):
    """The state of `target` as nested dicts with string keys; leaves of unregistered types are returned as is."""
    handlers = _handlers(_registry_key(target))
    if handlers is None:
        return target
    state_dict = handlers[0](target)
    if isinstance(state_dict, dict):
        for key in state_dict.keys():
            assert isinstance(key, str), 'A state dict must only have string keys.'
    return state_dict


def is_serializable(target):
    if not isinstance(target, type):
        target = type(target)
    return _handlers(target) is not None


def register_serialization_state(ty, ty_to_state_dict, ty_from_state_dict, override=False):
    """Registers how instances of `ty` become state dicts and are restored from them."""
    if _handlers(ty) is not None and not override:
        raise ValueError(f'a serialization handler for "{ty.__name__}" is already registered')
    _STATE_DICT_REGISTRY[ty] = (ty_to_state_dict, ty_from_state_dict)


def _list_state_dict(xs):
    return {str(i): to_state_dict(x) for i, x in enumerate(xs)}


def _restore_list(xs, state_dict):
    if len(state_dict) != len(xs):
        raise ValueError('The size of the list and the state dict do not match,'
                         f' got {len(xs)} and {len(state_dict)} at path {current_path()}')
    return [from_state_dict(xs[i], state_dict[str(i)], name=str(i)) for i in range(len(state_dict))]


def _dict_state_dict(xs):
    str_keys = {str(k) for k in xs.keys()}
    if len(str_keys) != len(xs):
        raise ValueError(f'Dict keys do not have a unique string representation: {str_keys} vs given: {xs}')
    return {str(key): to_state_dict(value) for key, value in xs.items()}


def _restore_dict(xs, states):
    diff = set(map(str, xs.keys())).difference(states.keys())
    if diff:
        raise ValueError('The target dict keys and state dict keys do not match, target dict contains keys'
                         f' {diff} which are not present in state dict at path {current_path()}')
    return {key: from_state_dict(value, states[str(key)], name=str(key)) for key, value in xs.items()}


def _restore_frozen_dict(xs, states):
    diff = set(map(str, xs.keys())).difference(map(str, states.keys()))
    if diff:
        raise ValueError('The target dict keys and state dict keys do not match, target dict contains keys'
                         f' {diff} which are not present in state dict at path {current_path()}')
    return FrozenDict({key: from_state_dict(value, states[str(key)], name=key) for key, value in xs.items()})


def _namedtuple_state_dict(nt):
    return {key: to_state_dict(getattr(nt, key)) for key in nt._fields}


def _restore_namedtuple(xs, state_dict):
    if set(state_dict.keys()) == {'name', 'fields', 'values'}:
        # The layout Flax wrote for namedtuples before 2021; Flax still reads it.
        state_dict = {state_dict['fields'][str(i)]: state_dict['values'][str(i)]
                      for i in range(len(state_dict['fields']))}
    sd_keys = set(state_dict.keys())
    nt_keys = set(xs._fields)
    if sd_keys != nt_keys:
        raise ValueError('The field names of the state dict and the named tuple do not match,'
                         f' got {sd_keys} and {nt_keys} at path {current_path()}')
    fields = {k: from_state_dict(getattr(xs, k), v, name=k) for k, v in state_dict.items()}
    return type(xs)(**fields)


register_serialization_state(dict, _dict_state_dict, _restore_dict)
register_serialization_state(list, _list_state_dict, _restore_list)
register_serialization_state(tuple, _list_state_dict, lambda xs, state_dict: tuple(_restore_list(list(xs), state_dict)))
register_serialization_state(_NamedTuple, _namedtuple_state_dict, _restore_namedtuple)
# Real Flax registers FrozenDict from flax/core/frozen_dict.py, with the dict handlers' messages.
register_serialization_state(FrozenDict, _dict_state_dict, _restore_frozen_dict)


# The file format. An array is ext type 1 holding msgpack of (shape, dtype name, C-order bytes); a numpy scalar is
# the same payload as ext type 3; a Python complex is ext type 2 holding msgpack of (real, imag).

class _MsgpackExtType(enum.IntEnum):
    ndarray = 1
    native_complex = 2
    npscalar = 3


class _BFloat16Bits(np.ndarray):
    """uint16 bit patterns standing for a bfloat16 array: numpy has no bfloat16 without ml_dtypes, which the
    embedded interpreter lacks, yet Flax files name the dtype 'bfloat16' and hold two bytes per element."""


def _is_jax_array(x):
    return isinstance(x, jax.Array)


def _bfloat16_dtype():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def _host_array(x):
    """A jax array as numpy, keeping bfloat16 (which shardscope's arrays show to numpy as float32) as bfloat16."""
    if getattr(x, '_dtype_name', None) == 'bfloat16':
        as_float = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
        # Truncation is exact: these float32 values are widened bfloat16 values.
        return (as_float.view(np.uint32) >> 16).astype(np.uint16).view(_BFloat16Bits)
    return np.array(x)


def _ndarray_to_bytes(arr):
    if _is_jax_array(arr):
        arr = _host_array(arr)
    if arr.dtype.hasobject or arr.dtype.isalignedstruct:
        raise ValueError('Object and structured dtypes not supported for serialization of ndarrays.')
    dtype_name = 'bfloat16' if isinstance(arr, _BFloat16Bits) else arr.dtype.name
    return _msgpack.packb((arr.shape, dtype_name, np.asarray(arr).tobytes('C')), use_bin_type=True)


def _ndarray_from_bytes(data):
    shape, dtype_name, buffer = _msgpack.unpackb(data, raw=True)
    if dtype_name == b'bfloat16' and _bfloat16_dtype() is None:
        return np.frombuffer(buffer, dtype=np.uint16).reshape(shape, order='C').view(_BFloat16Bits)
    dtype = _bfloat16_dtype() if dtype_name == b'bfloat16' else np.dtype(dtype_name.decode())
    return np.frombuffer(buffer, dtype=dtype, count=-1, offset=0).reshape(shape, order='C')


def _public_bfloat16(bits):
    """What a restored bfloat16 array becomes without ml_dtypes: a jax bfloat16 array, so its dtype survives."""
    widened = (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)
    import jax.numpy as jnp
    return jnp.asarray(widened, dtype=jnp.bfloat16)


def _msgpack_ext_pack(x):
    if isinstance(x, np.ndarray) or _is_jax_array(x):
        return _msgpack.ExtType(_MsgpackExtType.ndarray, _ndarray_to_bytes(x))
    if isinstance(x, np.generic):
        return _msgpack.ExtType(_MsgpackExtType.npscalar, _ndarray_to_bytes(np.asarray(x)))
    elif isinstance(x, complex):
        return _msgpack.ExtType(_MsgpackExtType.native_complex, _msgpack.packb((x.real, x.imag)))
    return x


def _msgpack_ext_unpack(code, data):
    if code == _MsgpackExtType.ndarray:
        return _ndarray_from_bytes(data)
    elif code == _MsgpackExtType.native_complex:
        complex_tuple = _msgpack.unpackb(data)
        return complex(complex_tuple[0], complex_tuple[1])
    elif code == _MsgpackExtType.npscalar:
        ar = _ndarray_from_bytes(data)
        # A bfloat16 scalar can only be a 0-d jax array here; it is made one when the tree is finished.
        return ar if isinstance(ar, _BFloat16Bits) else ar[()]
    return _msgpack.ExtType(code, data)


# msgpack holds at most 2**31 - 1 bytes in one object, so bigger arrays are written as a dict of flat chunks of at
# most MAX_CHUNK_SIZE bytes (Flax's margin below the limit).
MAX_CHUNK_SIZE = 2**30


def _np_convert_in_place(d):
    if isinstance(d, dict):
        for k, v in d.items():
            if _is_jax_array(v):
                d[k] = _host_array(v)
            elif isinstance(v, dict):
                _np_convert_in_place(v)
    elif _is_jax_array(d):
        return _host_array(d)
    return d


def _tuple_to_dict(tpl):
    return {str(x): y for x, y in enumerate(tpl)}


def _dict_to_tuple(dct):
    return tuple(dct[str(i)] for i in range(len(dct)))


def _chunk(arr):
    chunksize = max(1, int(MAX_CHUNK_SIZE / arr.dtype.itemsize))
    data = {'__msgpack_chunked_array__': True, 'shape': _tuple_to_dict(arr.shape)}
    flatarr = arr.reshape(-1)
    chunks = [flatarr[i:i + chunksize] for i in range(0, flatarr.size, chunksize)]
    data['chunks'] = _tuple_to_dict(chunks)
    return data


def _unchunk(data):
    assert '__msgpack_chunked_array__' in data
    shape = _dict_to_tuple(data['shape'])
    chunks = _dict_to_tuple(data['chunks'])
    flatarr = np.concatenate([np.asarray(chunk) for chunk in chunks])
    if chunks and isinstance(chunks[0], _BFloat16Bits):
        flatarr = flatarr.view(_BFloat16Bits)
    return flatarr.reshape(shape)


def _chunk_array_leaves_in_place(d):
    if isinstance(d, dict):
        for k, v in d.items():
            if isinstance(v, np.ndarray):
                if v.size * v.dtype.itemsize > MAX_CHUNK_SIZE:
                    d[k] = _chunk(v)
            elif isinstance(v, dict):
                _chunk_array_leaves_in_place(v)
    elif isinstance(d, np.ndarray):
        if d.size * d.dtype.itemsize > MAX_CHUNK_SIZE:
            return _chunk(d)
    return d


def _unchunk_array_leaves_in_place(d):
    if isinstance(d, dict):
        if '__msgpack_chunked_array__' in d:
            return _unchunk(d)
        for k, v in d.items():
            if isinstance(v, dict) and '__msgpack_chunked_array__' in v:
                d[k] = _unchunk(v)
            elif isinstance(v, dict):
                _unchunk_array_leaves_in_place(v)
    return d


def _publish_bfloat16_in_place(d):
    if isinstance(d, _BFloat16Bits):
        return _public_bfloat16(d)
    if isinstance(d, (dict, list)):
        items = d.items() if isinstance(d, dict) else enumerate(d)
        for k, v in list(items):
            d[k] = _publish_bfloat16_in_place(v)
    return d


def msgpack_serialize(pytree, in_place=False):
    """The msgpack bytes of a tree of dicts and lists with Python scalars, strings and arrays as leaves.

    Arrays above MAX_CHUNK_SIZE bytes are split into chunks. For other objects use to_bytes."""
    if not in_place:
        # Flax copies through tree_map, which also sorts the keys of the copied dicts.
        pytree = jax.tree_util.tree_map(lambda x: x, pytree)
    pytree = _np_convert_in_place(pytree)
    pytree = _chunk_array_leaves_in_place(pytree)
    return _msgpack.packb(pytree, default=_msgpack_ext_pack, strict_types=True)


def msgpack_restore(encoded_pytree):
    """The tree msgpack_serialize encoded, with numpy arrays as array leaves (bfloat16 ones as jax arrays unless
    ml_dtypes is installed)."""
    state_dict = _msgpack.unpackb(encoded_pytree, ext_hook=_msgpack_ext_unpack, raw=False, strict_map_key=False)
    return _publish_bfloat16_in_place(_unchunk_array_leaves_in_place(state_dict))


def from_bytes(target, encoded_bytes):
    """`target` restored from msgpack bytes that to_bytes made of an object of the same structure."""
    state_dict = msgpack_restore(encoded_bytes)
    return from_state_dict(target, state_dict)


def to_bytes(target):
    """The msgpack bytes of `target`'s state dict."""
    state_dict = to_state_dict(target)
    return msgpack_serialize(state_dict, in_place=True)
