# flax._msgpack: a pure-Python MessagePack codec with msgpack-python's packb/unpackb behaviour, for flax.serialization.
# The embedded interpreter has no msgpack package; Flax checkpoints must stay byte-compatible with the files real
# Flax writes, so this follows msgpack-python (use_bin_type=True, float64, smallest int width) exactly.
import collections
import struct

DEFAULT_RECURSE_LIMIT = 511
_BIN_TYPE_LIMIT = 2**32 - 1


class FormatError(ValueError):
    """Invalid msgpack format."""


class StackError(ValueError):
    """Too nested."""


class ExtraData(ValueError):
    def __init__(self, unpacked, extra):
        super().__init__(unpacked, extra)
        self.unpacked = unpacked
        self.extra = extra

    def __str__(self):
        return 'unpack(b) received extra data.'


class ExtType(collections.namedtuple('ExtType', 'code data')):
    """An application-defined ext value: a type code 0..127 and its payload bytes."""

    def __new__(cls, code, data):
        if not isinstance(code, int):
            raise TypeError('code must be int')
        if not isinstance(data, bytes):
            raise TypeError('data must be bytes')
        if not 0 <= code <= 127:
            raise ValueError('code must be 0~127')
        return super().__new__(cls, code, data)


def _pack_int(out, value):
    # The narrowest encoding that holds the value, as msgpack-c's pack_template chooses it.
    if 0 <= value < 0x80:
        out.append(value)
    elif -0x20 <= value < 0:
        out.append(value & 0xff)
    elif value >= 0:
        if value <= 0xff:
            out += b'\xcc' + struct.pack('>B', value)
        elif value <= 0xffff:
            out += b'\xcd' + struct.pack('>H', value)
        elif value <= 0xffffffff:
            out += b'\xce' + struct.pack('>I', value)
        elif value <= 0xffffffffffffffff:
            out += b'\xcf' + struct.pack('>Q', value)
        else:
            return False
    else:
        if value >= -0x80:
            out += b'\xd0' + struct.pack('>b', value)
        elif value >= -0x8000:
            out += b'\xd1' + struct.pack('>h', value)
        elif value >= -0x80000000:
            out += b'\xd2' + struct.pack('>i', value)
        elif value >= -0x8000000000000000:
            out += b'\xd3' + struct.pack('>q', value)
        else:
            return False
    return True


def _pack_length(out, length, fix_base, fix_limit, codes):
    """Header of a str/bin/array/map/ext: fixed form when it fits, then the 8/16/32-bit length forms."""
    if fix_base is not None and length < fix_limit:
        out.append(fix_base | length)
        return
    for code, fmt, limit in codes:
        if code is not None and length <= limit:
            out += bytes([code]) + struct.pack(fmt, length)
            return
    raise ValueError('object is too large')


_STR_CODES = ((0xd9, '>B', 0xff), (0xda, '>H', 0xffff), (0xdb, '>I', _BIN_TYPE_LIMIT))
_BIN_CODES = ((0xc4, '>B', 0xff), (0xc5, '>H', 0xffff), (0xc6, '>I', _BIN_TYPE_LIMIT))
_ARRAY_CODES = ((None, '', 0), (0xdc, '>H', 0xffff), (0xdd, '>I', _BIN_TYPE_LIMIT))
_MAP_CODES = ((None, '', 0), (0xde, '>H', 0xffff), (0xdf, '>I', _BIN_TYPE_LIMIT))
_FIXEXT = {1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8}


def _pack_ext(out, code, data):
    length = len(data)
    if length in _FIXEXT:
        out.append(_FIXEXT[length])
    elif length <= 0xff:
        out += b'\xc7' + struct.pack('>B', length)
    elif length <= 0xffff:
        out += b'\xc8' + struct.pack('>H', length)
    elif length <= _BIN_TYPE_LIMIT:
        out += b'\xc9' + struct.pack('>I', length)
    else:
        raise ValueError('EXT data is too large')
    out += struct.pack('>b', code)
    out += data


class _Packer:
    def __init__(self, default, strict_types):
        self.default = default
        self.strict = strict_types
        self.out = bytearray()

    def _is(self, value, kind):
        return type(value) is kind if self.strict else isinstance(value, kind)

    def pack(self, value, nest_limit):
        if nest_limit < 0:
            raise ValueError('recursion limit exceeded.')
        nest_limit -= 1
        # Like msgpack-python: one try as is, then (once) whatever `default` turns an unsupported value into.
        if self.default is not None and self._pack_inner(value, True, nest_limit) is not None:
            return
        if self.default is not None:
            value = self.default(value)
        self._pack_inner(value, False, nest_limit)

    def _pack_inner(self, o, will_default, nest_limit):
        out = self.out
        if o is None:
            out.append(0xc0)
        elif o is True:
            out.append(0xc3)
        elif o is False:
            out.append(0xc2)
        elif self._is(o, int):
            if not _pack_int(out, int(o)):
                if will_default:
                    return None
                raise OverflowError('Integer value out of range')
        elif self._is(o, float):
            out += b'\xcb' + struct.pack('>d', float(o))
        elif (type(o) in (bytes, bytearray)) if self.strict else isinstance(o, (bytes, bytearray)):
            _pack_length(out, len(o), None, 0, _BIN_CODES)
            out += o
        elif self._is(o, str):
            data = o.encode('utf-8')
            _pack_length(out, len(data), 0xa0, 32, _STR_CODES)
            out += data
        elif self._is(o, dict):
            _pack_length(out, len(o), 0x80, 16, _MAP_CODES)
            for key, value in o.items():
                self.pack(key, nest_limit)
                self.pack(value, nest_limit)
        elif self._is(o, ExtType):
            # Before the tuple case: ExtType is a namedtuple.
            _pack_ext(out, o.code, o.data)
        elif (type(o) is list) if self.strict else isinstance(o, (list, tuple)):
            _pack_length(out, len(o), 0x90, 16, _ARRAY_CODES)
            for value in o:
                self.pack(value, nest_limit)
        elif isinstance(o, memoryview):
            data = o.tobytes()
            _pack_length(out, len(data), None, 0, _BIN_CODES)
            out += data
        elif will_default:
            return None
        else:
            raise TypeError(f"can not serialize '{type(o).__name__}' object")
        return True


def packb(o, default=None, strict_types=False, use_bin_type=True):
    """Encodes `o` as msgpack-python's packb(o, use_bin_type=True) does; only the binary-type mode is offered."""
    if not use_bin_type:
        raise NotImplementedError('flax._msgpack writes str and bin types only (use_bin_type=True)')
    packer = _Packer(default, strict_types)
    packer.pack(o, DEFAULT_RECURSE_LIMIT)
    return bytes(packer.out)


class _Incomplete(Exception):
    pass


_CONSTANTS = {0xc0: None, 0xc2: False, 0xc3: True}
_NUMBERS = {0xca: ('>f', 4), 0xcb: ('>d', 8), 0xcc: ('>B', 1), 0xcd: ('>H', 2), 0xce: ('>I', 4), 0xcf: ('>Q', 8),
            0xd0: ('>b', 1), 0xd1: ('>h', 2), 0xd2: ('>i', 4), 0xd3: ('>q', 8)}
# The length field of bin, ext, str, array and map (8-, 16- and 32-bit forms).
_LENGTHS = {0xc4: ('>B', 1), 0xc5: ('>H', 2), 0xc6: ('>I', 4), 0xc7: ('>B', 1), 0xc8: ('>H', 2), 0xc9: ('>I', 4),
            0xd9: ('>B', 1), 0xda: ('>H', 2), 0xdb: ('>I', 4), 0xdc: ('>H', 2), 0xdd: ('>I', 4), 0xde: ('>H', 2),
            0xdf: ('>I', 4)}


class _Unpacker:
    def __init__(self, data, ext_hook, raw):
        self.view = memoryview(data).cast('B')
        self.pos = 0
        self.ext_hook = ext_hook
        self.raw = raw

    def take(self, count):
        end = self.pos + count
        if end > len(self.view):
            raise _Incomplete
        chunk = self.view[self.pos:end]
        self.pos = end
        return chunk

    def number(self, fmt, size):
        return struct.unpack(fmt, self.take(size))[0]

    def text(self, length):
        data = bytes(self.take(length))
        return data if self.raw else data.decode('utf-8')

    def ext(self, length):
        code = self.number('>b', 1)
        data = bytes(self.take(length))
        return ExtType(code, data) if self.ext_hook is None else self.ext_hook(code, data)

    def array(self, length, depth):
        return [self.value(depth) for _ in range(length)]

    def map(self, length, depth):
        result = {}
        for _ in range(length):
            key = self.value(depth)
            result[key] = self.value(depth)
        return result

    def value(self, depth):
        if depth <= 0:
            raise StackError
        depth -= 1
        byte = self.number('>B', 1)
        if byte <= 0x7f:
            return byte
        if byte >= 0xe0:
            return byte - 0x100
        if 0x80 <= byte <= 0x8f:
            return self.map(byte & 0x0f, depth)
        if 0x90 <= byte <= 0x9f:
            return self.array(byte & 0x0f, depth)
        if 0xa0 <= byte <= 0xbf:
            return self.text(byte & 0x1f)
        if byte in _CONSTANTS:
            return _CONSTANTS[byte]
        if byte in _NUMBERS:
            return self.number(*_NUMBERS[byte])
        if byte in _LENGTHS:
            length = self.number(*_LENGTHS[byte])
            if byte <= 0xc6:
                return bytes(self.take(length))
            if byte <= 0xc9:
                return self.ext(length)
            if byte <= 0xdb:
                return self.text(length)
            if byte <= 0xdd:
                return self.array(length, depth)
            return self.map(length, depth)
        if 0xd4 <= byte <= 0xd8:
            return self.ext(1 << (byte - 0xd4))
        raise FormatError(f'Unpack failed: invalid msgpack type byte 0x{byte:02x}')


def unpackb(packed, ext_hook=None, raw=False, strict_map_key=False):
    """Decodes one msgpack object as msgpack-python's unpackb does: arrays as lists, ext values through ext_hook.

    Keys of any type are accepted (strict_map_key=False is what Flax passes); trailing bytes raise ExtraData."""
    del strict_map_key
    unpacker = _Unpacker(packed, ext_hook, raw)
    try:
        result = unpacker.value(DEFAULT_RECURSE_LIMIT + 1)
    except _Incomplete:
        raise ValueError('Unpack failed: incomplete input') from None
    if unpacker.pos < len(unpacker.view):
        raise ExtraData(result, bytes(unpacker.view[unpacker.pos:]))
    return result
