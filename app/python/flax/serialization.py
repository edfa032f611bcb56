# flax.serialization: Flax objects as nested state dicts, and those dicts as the msgpack bytes real Flax reads.
import dataclasses
import threading

import numpy as np

import jax
from flax import _msgpack
from flax.core import FrozenDict

# --- State dicts -------------------------------------------------------------------------------------------------

# type -> (to_state, from_state). Namedtuple classes are recognised by shape, so they share the key _AnyNamedTuple.
_codecs = {}
# Names from the root of the object being restored down to the node in hand; per thread, like the restores.
_restoring = threading.local()


class _AnyNamedTuple:
    """The one registry key under which all namedtuple classes share their handlers."""


def _open_path():
    names = getattr(_restoring, 'names', None)
    if names is None:
        names = _restoring.names = []
    return names


def current_path():
    """The '/'-joined names leading to the part of the target being restored (the root is '.')."""
    return '/'.join(_open_path())


def _struct_codec(cls):
    """Handlers for one flax.struct dataclass: a dict of its pytree fields; static fields stay the target's."""
    wanted = [field.name for field in dataclasses.fields(cls)
              if field.init and field.metadata.get('pytree_node', True)]

    def dump(obj):
        return {name: to_state_dict(getattr(obj, name)) for name in wanted}

    def load(obj, state):
        unclaimed = state.copy()  # entries are taken out as fields claim them; leftovers are unknown fields
        restored = {}
        for name in wanted:
            if name not in unclaimed:
                raise ValueError(f'Missing field {name} in state dict while restoring an instance of {cls.__name__},'
                                 f' at path {current_path()}')
            restored[name] = from_state_dict(getattr(obj, name), unclaimed.pop(name), name=name)
        if unclaimed:
            extra = ','.join(unclaimed)
            raise ValueError(f'Unknown field(s) "{extra}" in state dict while restoring an instance of'
                             f' {cls.__name__} at path {current_path()}')
        return obj.replace(**restored)

    return dump, load


def _codec_for(cls):
    codec = _codecs.get(cls)
    # flax.struct cannot import this module, so its dataclasses get handlers when first met here. The marker must
    # be the class's own: it is set on each class the decorator made, never merely inherited.
    if codec is None and '_flax_dataclass' in getattr(cls, '__dict__', {}):
        codec = _codecs[cls] = _struct_codec(cls)
    return codec


def _codec_of(value):
    shaped_like_namedtuple = isinstance(value, tuple) and hasattr(value, '_fields')
    return _codec_for(_AnyNamedTuple if shaped_like_namedtuple else type(value))


def to_state_dict(target):
    """Nested dicts keyed by str holding what `target` holds. Objects no handler knows are their own state."""
    codec = _codec_of(target)
    if codec is None:
        return target
    state = codec[0](target)
    if isinstance(state, dict):
        assert all(isinstance(key, str) for key in state), 'A state dict must only have string keys.'
    return state


def from_state_dict(target, state, name='.'):
    """A copy of `target` holding `state`, a state dict shaped like to_state_dict(target).

    `target` supplies only the structure: where it has a value of an unregistered type, `state`'s value is used."""
    codec = _codec_of(target)
    if codec is None:
        return state
    names = _open_path()
    names.append(name)
    try:
        return codec[1](target, state)
    finally:
        names.pop()


def register_serialization_state(ty, ty_to_state_dict, ty_from_state_dict, override=False):
    """Makes instances of `ty` serializable: `ty_to_state_dict(x)` gives the state, `ty_from_state_dict(x, state)`
    a copy of `x` holding it."""
    if _codec_for(ty) is not None and not override:
        raise ValueError(f'a serialization handler for "{ty.__name__}" is already registered')
    _codecs[ty] = (ty_to_state_dict, ty_from_state_dict)


def is_serializable(target):
    return _codec_for(target if isinstance(target, type) else type(target)) is not None


def _sequence_state(items):
    return {str(index): to_state_dict(item) for index, item in enumerate(items)}


def _restore_sequence(items, state):
    if len(state) != len(items):
        raise ValueError('The size of the list and the state dict do not match,'
                         f' got {len(items)} and {len(state)} at path {current_path()}')
    return [from_state_dict(item, state[str(index)], name=str(index)) for index, item in enumerate(items)]


def _mapping_state(mapping):
    as_text = {str(key) for key in mapping.keys()}
    if len(as_text) != len(mapping):
        raise ValueError(f'Dict keys do not have a unique string representation: {as_text} vs given: {mapping}')
    return {str(key): to_state_dict(value) for key, value in mapping.items()}


def _require_keys(target, present):
    absent = set(map(str, target.keys())).difference(present)
    if absent:
        raise ValueError('The target dict keys and state dict keys do not match, target dict contains keys'
                         f' {absent} which are not present in state dict at path {current_path()}')


def _restore_dict(target, state):
    _require_keys(target, state.keys())
    return {key: from_state_dict(value, state[str(key)], name=str(key)) for key, value in target.items()}


def _restore_frozen(target, state):
    _require_keys(target, map(str, state.keys()))
    return FrozenDict({key: from_state_dict(value, state[str(key)], name=key) for key, value in target.items()})


def _namedtuple_state(value):
    return {field: to_state_dict(getattr(value, field)) for field in value._fields}


def _restore_namedtuple(value, state):
    if set(state.keys()) == {'name', 'fields', 'values'}:
        # Files from before 2021 hold a namedtuple as parallel numbered maps of field names and values.
        names, values = state['fields'], state['values']
        state = {names[str(index)]: values[str(index)] for index in range(len(names))}
    got, expected = set(state.keys()), set(value._fields)
    if got != expected:
        raise ValueError('The field names of the state dict and the named tuple do not match,'
                         f' got {got} and {expected} at path {current_path()}')
    restored = {field: from_state_dict(getattr(value, field), sub, name=field) for field, sub in state.items()}
    return type(value)(**restored)


register_serialization_state(dict, _mapping_state, _restore_dict)
register_serialization_state(FrozenDict, _mapping_state, _restore_frozen)
register_serialization_state(list, _sequence_state, _restore_sequence)
register_serialization_state(tuple, _sequence_state, lambda items, state: tuple(_restore_sequence(items, state)))
register_serialization_state(_AnyNamedTuple, _namedtuple_state, _restore_namedtuple)

# --- msgpack -----------------------------------------------------------------------------------------------------
# Flax's ext types: 1 an array as msgpack of (shape, dtype name, C-order bytes), 2 a Python complex as msgpack of
# (real, imag), 3 a numpy scalar with the array payload.
_EXT_ARRAY = 1
_EXT_COMPLEX = 2
_EXT_SCALAR = 3

# One msgpack object holds under 2**31 bytes, so larger arrays go to disk as a dict of flat chunks of at most this.
MAX_CHUNK_SIZE = 2**30
_CHUNKED = '__msgpack_chunked_array__'


class _Bf16Words(np.ndarray):
    """uint16 words that are really bfloat16 numbers. Files say 'bfloat16' and give each element two bytes, but
    numpy only knows that type through ml_dtypes, which the embedded interpreter does not ship."""


def _ml_bfloat16():
    try:
        from ml_dtypes import bfloat16
    except ImportError:
        return None
    return np.dtype(bfloat16)


def _to_host(array):
    if getattr(array, '_dtype_name', None) != 'bfloat16':
        return np.array(array)
    # shardscope hands bfloat16 to numpy as float32 holding bfloat16 values exactly, so the high half is the value.
    # np.array copies into C order and, unlike np.ascontiguousarray, leaves a 0-d array 0-d.
    high = np.array(array, dtype=np.float32).view(np.uint32) >> np.uint32(16)
    return np.asarray(high, dtype=np.uint16).view(_Bf16Words)


def _bf16_to_jax(words):
    widened = np.asarray(np.asarray(words, dtype=np.uint32) << np.uint32(16))
    return jax.numpy.asarray(widened.view(np.float32), dtype=jax.numpy.bfloat16)


def _array_payload(array):
    if isinstance(array, jax.Array):
        array = _to_host(array)
    if array.dtype.hasobject or array.dtype.isalignedstruct:
        raise ValueError('Object and structured dtypes not supported for serialization of ndarrays.')
    dtype_name = 'bfloat16' if isinstance(array, _Bf16Words) else array.dtype.name
    # Through np.asarray so that subclasses such as masked arrays give their underlying data.
    return _msgpack.packb((array.shape, dtype_name, np.asarray(array).tobytes('C')))


def _array_from_payload(payload):
    shape, dtype_name, raw = _msgpack.unpackb(payload, raw=True)
    if dtype_name != b'bfloat16':
        dtype = np.dtype(dtype_name.decode())
    else:
        dtype = _ml_bfloat16()
        if dtype is None:
            return np.frombuffer(raw, dtype=np.uint16).reshape(shape, order='C').view(_Bf16Words)
    return np.frombuffer(raw, dtype=dtype).reshape(shape, order='C')


def _encode_ext(value):
    if isinstance(value, (np.ndarray, jax.Array)):
        return _msgpack.ExtType(_EXT_ARRAY, _array_payload(value))
    if isinstance(value, np.generic):
        return _msgpack.ExtType(_EXT_SCALAR, _array_payload(np.asarray(value)))
    if isinstance(value, complex):
        return _msgpack.ExtType(_EXT_COMPLEX, _msgpack.packb((value.real, value.imag)))
    return value  # unchanged, so the packer reports the type it cannot encode


def _scalar_from_payload(payload):
    scalar = _array_from_payload(payload)
    # numpy has no bfloat16 scalar here; the 0-d words become a jax array once the tree is read.
    return scalar if isinstance(scalar, _Bf16Words) else scalar[()]


def _complex_from_payload(payload):
    parts = _msgpack.unpackb(payload)
    return complex(parts[0], parts[1])


_EXT_READERS = {_EXT_ARRAY: _array_from_payload, _EXT_SCALAR: _scalar_from_payload, _EXT_COMPLEX: _complex_from_payload}


def _decode_ext(code, data):
    read = _EXT_READERS.get(code)
    # Ext types of other applications pass through untouched.
    return _msgpack.ExtType(code, data) if read is None else read(data)


def _numbered(items):
    return {str(index): item for index, item in enumerate(items)}


def _unnumbered(numbered):
    return tuple(numbered[str(index)] for index in range(len(numbered)))


def _split(array):
    per_chunk = max(1, MAX_CHUNK_SIZE // array.dtype.itemsize)
    flat = array.reshape(-1)
    pieces = [flat[start:start + per_chunk] for start in range(0, flat.size, per_chunk)]
    return {_CHUNKED: True, 'shape': _numbered(array.shape), 'chunks': _numbered(pieces)}


def _join(chunked):
    pieces = _unnumbered(chunked['chunks'])
    flat = np.concatenate([np.asarray(piece) for piece in pieces])
    if isinstance(pieces[0], _Bf16Words):
        flat = flat.view(_Bf16Words)
    return flat.reshape(_unnumbered(chunked['shape']))


def _for_wire(node):
    """`node` with jax arrays copied to the host and oversized arrays split, editing dicts in place.

    Only dicts are walked: arrays inside lists are left to _encode_ext, whole (so never chunked)."""
    if isinstance(node, dict):
        for key, value in node.items():
            node[key] = _for_wire(value)
        return node
    if isinstance(node, jax.Array):
        node = _to_host(node)
    if isinstance(node, np.ndarray) and node.nbytes > MAX_CHUNK_SIZE:
        return _split(node)
    return node


def _from_wire(node, may_join=True):
    """The read tree with chunked arrays joined (in dicts not under a list, the only places they are written) and
    bfloat16 words turned into jax arrays, editing containers in place."""
    if may_join and isinstance(node, dict) and _CHUNKED in node:
        node = _join(node)
    if isinstance(node, _Bf16Words):
        return _bf16_to_jax(node)
    if isinstance(node, dict):
        for key, value in node.items():
            node[key] = _from_wire(value, may_join)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            node[index] = _from_wire(value, False)
    return node


def msgpack_serialize(pytree, in_place=False):
    """msgpack bytes of a tree of dicts and lists whose leaves are Python scalars, strings, bytes or arrays.

    Arrays over MAX_CHUNK_SIZE bytes inside dicts are written in chunks. Other objects go through to_bytes."""
    if not in_place:
        # An identity tree_map, as in Flax; its side effect of sorting dict keys decides the bytes, so it stays.
        pytree = jax.tree_util.tree_map(lambda leaf: leaf, pytree)
    return _msgpack.packb(_for_wire(pytree), default=_encode_ext, strict_types=True)


def msgpack_restore(encoded_pytree):
    """The tree msgpack_serialize encoded, arrays as numpy arrays (bfloat16 ones as jax arrays without ml_dtypes)."""
    tree = _msgpack.unpackb(encoded_pytree, ext_hook=_decode_ext, raw=False, strict_map_key=False)
    return _from_wire(tree)


def from_bytes(target, encoded_bytes):
    """Inverse of to_bytes: the bytes' state poured into `target`, which must be built like the saved object."""
    return from_state_dict(target, msgpack_restore(encoded_bytes))


def to_bytes(target):
    """Encodes to_state_dict(target) in Flax's msgpack format."""
    # Not copied first (unlike msgpack_serialize's default), so the file keeps the state dict's own key order.
    return msgpack_serialize(to_state_dict(target), in_place=True)
