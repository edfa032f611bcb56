# jax.Array's Python surface: operators, methods, numpy interop and JAX's reprs, on the engine's value type.
import math

import numpy as np

import _shardscope
from jax import dtypes as _dtypes

ArrayImpl = _shardscope.ArrayImpl



def _iterate(self):
    """Iteration over the leading axis; a 0-d array has none (JAX's TypeError)."""
    if self.ndim == 0:
        raise TypeError('iteration over a 0-d array')
    return (self[i] for i in range(self.shape[0]))

def _jnp():
    import jax.numpy as jnp
    return jnp


def _tracer_repr(self, version):
    """How the profile's JAX shows a tracer: Traced<...>with<DynamicJaxprTrace> before 0.7, then the concise
    JitTracer<...>/VmapTracer<...> (0.7.0), then JitTracer(...) and VmapTracer(aval=..., batched=...) (0.8.2)."""
    blocks = self._per_device_blocks
    if blocks is not None:
        # An eager shard_map body's value: each device's block, as JAX's shard_map tracer shows it.
        names, items = blocks
        axis_names = f"({', '.join(names)},)"
        return '\n'.join(f"On {device} at mesh coordinates {axis_names} = {idx}:\n{block}\n"
                         for device, idx, block in items)
    aval = ('~' if self.weak_type else '') + self._aval_str
    differentiated = self._concrete_kind
    if differentiated:
        return _differentiated_tracer_repr(self, version, aval, differentiated)
    if version < (0, 7, 0):
        return f'Traced<{aval}>with<DynamicJaxprTrace>'
    size = self._vmap_axis_size
    if size is not None:
        if version < (0, 8, 2):
            return f'VmapTracer<{aval}>'
        dims = ','.join(str(d) for d in (size,) + tuple(self.shape))
        return f'VmapTracer(aval={aval}, batched={self._aval_str.split("[")[0]}[{dims}])'
    return f'JitTracer<{aval}>' if version < (0, 8, 2) else f'JitTracer({aval})'


def _differentiated_tracer_repr(self, version, aval, kind):
    """A grad's or jvp's tracer of concrete arguments: JAX's GradTracer/JVPTracer, which from 0.8.2 shows its
    primal value and its tangent's type."""
    name = 'GradTracer' if kind == 'grad' else 'JVPTracer'
    if version < (0, 7, 0):
        return f'Traced<{aval}>with<{"JVPTrace"}>'
    if version < (0, 8, 2):
        return f'{name}<{aval}>'
    primal = str(self._known_value)
    if kind == 'grad':
        return f'GradTracer(primal={primal}, typeof(tangent)={self._aval_short})'
    return f'JVPTracer(primal={primal}, tangent=JitTracer({self._aval_str}))'


# From 0.11.2 JAX's repr shows a big array's shape instead of fetching its values: its recordings show it for
# 10**6 elements (jnp.arange(10**6), a 1000x1000 product) and print the values of every smaller array they hold.
# str() and print show the same shape-only form (print(x) of an 8192x8192 array in the distributed-arrays recording).
_SHAPE_ONLY_REPR_SIZE = 1_000_000


def _shape_only(self, version):
    return version >= (0, 11, 2) and self.size >= _SHAPE_ONLY_REPR_SIZE


def _repr(self):
    version = _shardscope.jax_version_info()
    if self._is_tracer:
        return _tracer_repr(self, version)
    prefix = 'Array(' if version >= (0, 4, 1) else _legacy_prefix(self)
    dtype_str = f'dtype={self._dtype_name}'
    if self.weak_type:
        dtype_str += ', weak_type=True'
    if _unreduced(self):
        # Its devices hold partial values: JAX shows the layout rather than fetch them.
        return f'Array(shape={self.shape}, {dtype_str}, sharding={self.sharding})'
    if _shape_only(self, version):
        return f'{prefix}shape={self.shape}, {dtype_str})'
    line_width = np.get_printoptions()['linewidth']
    if self.size == 0:
        s = f'[], shape={self.shape}'
    else:
        s = np.array2string(self._value(), prefix=prefix, suffix=',', separator=', ', max_line_width=line_width,
                            formatter=_element_formatter(self))
    last_line_len = len(s) - s.rfind('\n') + 1
    sep = ' '
    if last_line_len + len(dtype_str) + 2 > line_width:
        sep = ' ' * len(prefix)
    return f'{prefix}{s},{sep}{dtype_str})'


def _legacy_prefix(self):
    return 'ShardedDeviceArray(' if getattr(self, '_from_pmap', False) else 'DeviceArray('


# Floating types numpy does not know natively (bfloat16 and the float8 family come from ml_dtypes): numpy prints each
# element as the scalar type's own repr, C's %g at six significant digits ("1", "0.100098"), without padding
# the elements to a common width as it does for its own floats.
_CUSTOM_FLOATS = ('bfloat16', 'float8_', 'float4_')


def _element_formatter(self):
    if not self._dtype_name.startswith(_CUSTOM_FLOATS):
        return None
    return {'float_kind': lambda x: '%g' % x}


def _unreduced(self):
    spec = getattr(getattr(self, 'sharding', None), 'spec', None)
    return spec is not None and bool(getattr(spec, 'unreduced', None))


def _str(self):
    if self._is_tracer or _unreduced(self) or _shape_only(self, _shardscope.jax_version_info()):
        return _repr(self)
    formatter = _element_formatter(self)
    if formatter is not None and self.size > 0:
        return np.array2string(self._value(), separator=' ', formatter=formatter)
    return str(self._value())


def _format(self, spec):
    if self._is_tracer:
        return _repr(self)
    value = self._value()
    return format(value if self.ndim else value[()], spec)


def _array(self, dtype=None, copy=None):
    if self._is_tracer:
        from jax.errors import TracerArrayConversionError
        raise TracerArrayConversionError(self)
    value = self._value()
    return value.astype(dtype) if dtype is not None else value


def _scalar(kind):
    """JAX's conversions: core.check_*_conversion on the shape first, then the tracer's concretization error."""
    from jax import errors
    name = getattr(kind, '__name__', str(kind))

    def convert(self):
        known = self._known_value if self._is_tracer else None
        if known is not None:
            # The primal a grad or jvp of concrete arguments carries converts as its value does.
            return convert(known)
        if kind is bool:
            if self.size == 0:
                raise ValueError('The truth value of an empty array is ambiguous. Use `array.size > 0` to check '
                                 'that an array is not empty.')
            if self.size > 1:
                raise ValueError('The truth value of an array with more than one element is ambiguous. '
                                 'Use a.any() or a.all()')
            if self._is_tracer:
                raise errors.TracerBoolConversionError(self)
        elif kind is _index:
            if self.shape != () or not self._dtype_name.startswith(('int', 'uint')):
                raise TypeError('Only integer scalar arrays can be converted to a scalar index.')
            if self._is_tracer:
                raise errors.TracerIntegerConversionError(self)
        else:
            if self.ndim > 0:
                raise TypeError(f'Only scalar arrays can be converted to Python scalars; got arr.ndim={self.ndim}')
            if self._is_tracer:
                raise errors.ConcretizationTypeError(
                    self, f'The problem arose with the `{name}` function. If trying to convert the data type of a '
                          f'value, try using `x.astype({name})` or `jnp.array(x, {name})` instead.')
        return kind(self._value().reshape(()))
    return convert


def _index(value):
    return int(value)


def _binary(name, swap=False):
    # jnp's function is looked up on first use (jax.numpy imports this module) and kept: operators are
    # the hottest path of eager code, and a module __getattr__ per call costs microseconds.
    fn = None

    def op(self, other):
        nonlocal fn
        if fn is None:
            fn = _operator_function(name)
        return fn(other, self) if swap else fn(self, other)
    op.__name__ = name
    return op


def _operator_function(name):
    """jnp's function for an operator; the by-reference binding when jnp's is the engine's own."""
    fn = getattr(_jnp(), name)
    engine = getattr(getattr(_shardscope, 'numpy', None), name, None)
    fast = getattr(_shardscope._operators, name, None)
    return fast if fast is not None and fn is engine else fn


def _method(name):
    fn = None

    def call(self, *args, **kwargs):
        nonlocal fn
        if fn is None:
            fn = getattr(_jnp(), name)
        return fn(self, *args, **kwargs)
    call.__name__ = name
    return call


def _setitem(self, index, value):
    raise TypeError('JAX arrays are immutable and do not support in-place item assignment. Instead of x[idx] = y, '
                    'use x = x.at[idx].set(y) or another .at[] method: '
                    'https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html')


class Shard:
    """One device's piece of an array (x.addressable_shards' entries): its device, index, replica id and data."""

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self._data = device, index, replica_id, data

    @property
    def data(self):
        return self._data  # a single-device jax Array on self.device

    def __repr__(self):
        return f'Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data})'


def _addressable_data(self, index):
    # A fully replicated array answers with its first buffer whatever the index, as jaxlib does.
    shards = self._shards()
    return shards[0 if self.sharding.is_fully_replicated else index][3]


# x.device_buffers / x.device_buffer: the per-device arrays (one device's for device_buffer), warned as deprecated in
# 0.4.22 to 0.4.26, then an AttributeError naming the replacement from 0.4.27.
_DEVICE_BUFFERS_WARNED_FROM = (0, 4, 22)
_DEVICE_BUFFERS_REMOVED_FROM = (0, 4, 27)


def _buffers_deprecation(name, advice):
    import warnings
    version = _shardscope.jax_version_info()
    if version >= _DEVICE_BUFFERS_REMOVED_FROM:
        raise AttributeError(f'arr.{name} has been deprecated. Use {advice}')
    if version >= _DEVICE_BUFFERS_WARNED_FROM:
        warnings.warn(f'arr.{name} is deprecated. Use {advice}', DeprecationWarning, stacklevel=3)


def _device_buffers(self):
    _buffers_deprecation('device_buffers', '[x.data for x in arr.addressable_shards]')
    return [shard[3] for shard in self._shards()]


def _device_buffer(self):
    _buffers_deprecation('device_buffer', 'arr.addressable_data(0)')
    shards = self._shards()
    if len(shards) == 1:
        return shards[0][3]
    raise ValueError('Length of buffers is greater than 1. Please use `.device_buffers` instead.')


def _on_device_size_in_bytes(self):
    """The bytes the array takes on all its devices together: one shard's size times the number of devices (a
    replicated array counts once per copy)."""
    shards = self._shards()
    return shards[0][3].nbytes * len(self.sharding.device_set) if shards else 0


def _unsafe_buffer_pointer(self):
    raise NotImplementedError('jax.Array.unsafe_buffer_pointer is not supported by shardscope (its buffers are '
                              'simulated)')


def _committed(self):
    """JAX's committed flag: set by device_put to a device or sharding; otherwise an array on one device was
    placed by default (created, or computed from such arrays), and one laid out over a mesh was placed on purpose."""
    flag = getattr(self, '_committed_flag', None)
    if flag is not None:
        return flag
    return not isinstance(self.sharding, _shardscope.SingleDeviceSharding)


def _getitem(self, index):
    # JAX's _expand_bool_indices: a boolean index must be concrete, since it decides the result's shape.
    for item in index if isinstance(index, tuple) else (index,):
        if isinstance(item, ArrayImpl) and item._is_tracer and item._dtype_name == 'bool':
            from jax.errors import NonConcreteBooleanIndexError
            # The aval as str() prints it: bare from 0.7, its repr before.
            modern = _shardscope.jax_version_info() >= (0, 7)
            raise NonConcreteBooleanIndexError(item._aval_str if modern else f'ShapedArray({item._aval_str})')
    return _jnp()._getitem(self, index)


def _install():
    A = ArrayImpl
    A.__repr__ = _repr
    A.__str__ = _str
    A.__format__ = _format
    A.__array__ = _array
    from jax._src.array import reduce_array
    A.__reduce__ = reduce_array
    A.__array_priority__ = 100
    A.__float__ = _scalar(float)
    A.__int__ = _scalar(int)
    A.__bool__ = _scalar(bool)
    A.__index__ = _scalar(_index)
    A.__complex__ = _scalar(complex)
    A.__len__ = lambda self: self.shape[0] if self.ndim else (_ for _ in ()).throw(TypeError('len() of unsized object'))
    A.__iter__ = _iterate
    A.__hash__ = None
    for dunder, name in [('add', 'add'), ('sub', 'subtract'), ('mul', 'multiply'), ('truediv', 'true_divide'),
                         ('floordiv', 'floor_divide'), ('mod', 'mod'), ('pow', 'power'), ('matmul', 'matmul'),
                         ('and', 'bitwise_and'), ('or', 'bitwise_or'), ('xor', 'bitwise_xor'),
                         ('lshift', 'left_shift'), ('rshift', 'right_shift')]:
        setattr(A, f'__{dunder}__', _binary(name))
        setattr(A, f'__r{dunder}__', _binary(name, swap=True))
    for dunder, name in [('eq', 'equal'), ('ne', 'not_equal'), ('lt', 'less'), ('le', 'less_equal'),
                         ('gt', 'greater'), ('ge', 'greater_equal')]:
        setattr(A, f'__{dunder}__', _binary(name))
    A.__neg__ = _method('negative')
    A.__pos__ = _method('positive')
    A.__abs__ = _method('abs')
    A.__invert__ = _method('invert')
    A.__getitem__ = _getitem
    A.__setitem__ = _setitem
    for name in ['sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'all', 'any', 'var', 'std', 'cumsum',
                 'cumprod', 'transpose', 'squeeze', 'ravel', 'flatten', 'dot', 'clip', 'round', 'conj', 'swapaxes',
                 'repeat', 'take', 'sort', 'argsort', 'diagonal']:
        setattr(A, name, _method(name))
    # One argument is the shape itself (an int, a sequence or a traced integer), as JAX's _compute_newshape takes it.
    A.reshape = lambda self, *shape, order='C': _jnp().reshape(self, shape[0] if len(shape) == 1 else shape)
    A.astype = lambda self, dtype: _jnp().astype(self, dtype)
    from jax._src.numpy_signatures import transpose_method
    A.transpose = transpose_method
    A.T = property(lambda self: _jnp().transpose(self))
    A.real = property(lambda self: self)
    A.item = lambda self, *args: self._value().item(*args)
    A.tolist = lambda self: self._value().tolist()
    A.copy = lambda self: _shardscope.device_put(self, self.sharding)
    A.block_until_ready = lambda self: self
    A.is_fully_replicated = property(lambda self: self.sharding.is_fully_replicated)
    A.is_fully_addressable = property(lambda self: self.sharding.is_fully_addressable)
    A.committed = property(_committed)
    # x.format (0.6.2 on; x.layout, the Layout pair, before): its device-local layout and sharding.
    from jax._src.layout import array_format_attribute
    A.format = property(lambda self: array_format_attribute(self, 'format'))
    A.layout = property(lambda self: array_format_attribute(self, 'layout'))
    A.aval = property(lambda self: _shapedarray(self))
    # Shards follow the sharding's device assignment (the mesh's device order), addressable ones only.
    A.addressable_shards = property(lambda self: [Shard(*s) for s in self._shards()])
    A.global_shards = property(lambda self: [Shard(*s) for s in self._shards(addressable_only=False)])
    A.addressable_data = _addressable_data
    A.device_buffers = property(_device_buffers)
    A.device_buffer = property(_device_buffer)
    A.on_device_size_in_bytes = _on_device_size_in_bytes
    A.tobytes = lambda self, order='C': self._value().tobytes(order)
    A.copy_to_host_async = lambda self: None  # the simulated buffers already live in host memory
    A.unsafe_buffer_pointer = _unsafe_buffer_pointer
    A.device = _DeviceAttribute()
    A.at = property(_IndexUpdateHelper)


class _IndexUpdateHelper:
    """x.at: indexable; x.at[idx] gives the _IndexUpdateRef whose methods return updated copies of x."""
    __slots__ = ('array',)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f'_IndexUpdateHelper({self.array!r})'


def _with_out_sharding(call, array, index, out_sharding):
    """call(array, index), or with out_sharding= run under auto_axes over the mesh's Explicit axes and typed
    out_sharding, as _scatter_update and rewriting_take do; the index's arrays go in as arguments."""
    if out_sharding is None:
        return call(array, index)
    from jax._src.sharding_in_types import auto_axes
    items = index if isinstance(index, tuple) else (index,)
    positions = [i for i, item in enumerate(items) if isinstance(item, (ArrayImpl, np.ndarray))]

    def inner(a, *arrays):
        rebuilt = list(items)
        for i, value in zip(positions, arrays):
            rebuilt[i] = value
        return call(a, tuple(rebuilt) if isinstance(index, tuple) else rebuilt[0])
    mesh = getattr(out_sharding, 'mesh', None)
    kinds = getattr(mesh, 'axis_types', None)
    axes = None if kinds is None else [n for n, kind in zip(mesh.axis_names, kinds) if 'Explicit' in str(kind)]
    return auto_axes(inner, axes=axes, out_sharding=out_sharding)(array, *[items[i] for i in positions])


class _IndexUpdateRef:
    """x.at[idx]: get() gathers, set/add/... scatter (the engine emits JAX's gather and scatter primitives)."""
    __slots__ = ('array', 'index')

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f'_IndexUpdateRef({self.array!r}, {self.index!r})'

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None, out_sharding=None,
            wrap_negative_indices=True):
        return _with_out_sharding(
            lambda a, index: _shardscope.numpy._at_get(a, index, mode, fill_value, indices_are_sorted,
                                                       unique_indices), self.array, self.index, out_sharding)

    def _scatter(self, op, values, indices_are_sorted, unique_indices, mode, out_sharding, method, array=None):
        return _with_out_sharding(
            lambda a, index: _shardscope.numpy._scatter_update(a, index, values, op, mode, indices_are_sorted,
                                                               unique_indices),
            self.array if array is None else array, self.index, out_sharding)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
            wrap_negative_indices=True):
        return self._scatter('set', values, indices_are_sorted, unique_indices, mode, out_sharding, 'set')

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True):
        # JAX binds scatter with func as its update computation; here func maps the gathered values, which
        # agrees wherever indices do not repeat.
        current = self.get(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                           mode='clip' if mode is None else mode)
        return self.set(func(current), indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
            wrap_negative_indices=True):
        return self._scatter('add', values, indices_are_sorted, unique_indices, mode, out_sharding, 'add')

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
                 wrap_negative_indices=True):
        return self._scatter('sub', values, indices_are_sorted, unique_indices, mode, out_sharding, 'subtract')

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
                 wrap_negative_indices=True):
        return self._scatter('mul', values, indices_are_sorted, unique_indices, mode, out_sharding, 'multiply')

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
               wrap_negative_indices=True):
        jnp = _jnp()
        scaled = self._scatter('mul', values, indices_are_sorted, unique_indices, mode, out_sharding, 'divide',
                               array=jnp.ones_like(self.array))
        return jnp.divide(self.array, scaled)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
              wrap_negative_indices=True):
        jnp = _jnp()
        exponents = self._scatter('mul', values, indices_are_sorted, unique_indices, mode, out_sharding, 'power',
                                  array=jnp.ones_like(self.array))
        return jnp.power(self.array, exponents)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
            wrap_negative_indices=True):
        return self._scatter('min', values, indices_are_sorted, unique_indices, mode, out_sharding, 'min')

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None, out_sharding=None,
            wrap_negative_indices=True):
        return self._scatter('max', values, indices_are_sorted, unique_indices, mode, out_sharding, 'max')


class _DeviceAttribute:
    """arr.device as the profile's JAX has it: a property from 0.4.31, a method until 0.4.26, absent between."""

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if _shardscope.jax_has('array_device_property'):
            return next(iter(obj.devices())) if len(obj.devices()) == 1 else obj.sharding
        if _shardscope.jax_has('array_device_method_removed'):
            raise AttributeError(f"'{type(obj).__name__}' object has no attribute 'device'")
        return lambda: _device_method(obj)


def _device_method(self):
    """arr.device() of JAX 0.4.1-0.4.26 (deprecated from 0.4.21): the one device holding the array."""
    if _shardscope.jax_has('array_device_method_deprecated'):
        import warnings
        warnings.warn('arr.device() is deprecated. Use arr.devices() instead.', DeprecationWarning, stacklevel=3)
    devices = self.devices()
    if len(devices) == 1:
        return next(iter(devices))
    raise ValueError('Length of devices is greater than 1. Please use `.devices()`.')


class _TypeSharding:
    """The sharding of a type (jax.typeof(x).sharding): a NamedSharding on the type's AbstractMesh."""

    def __init__(self, mesh, spec):
        self.mesh, self.spec = mesh, spec

    def __repr__(self):
        return f'NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})'

    def __eq__(self, other):
        return isinstance(other, _TypeSharding) and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))

    @property
    def memory_kind(self):
        return None

    def shard_shape(self, global_shape):
        """Each device's block shape: every dimension divided by the sizes of the mesh axes its spec names."""
        sizes = dict(self.mesh.shape)
        shape = []
        for dim, size in enumerate(global_shape):
            entry = self.spec[dim] if dim < len(self.spec) else None
            axes = () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))
            shape.append(size // math.prod(sizes[a] for a in axes))
        return tuple(shape)


class _ManualAxisType:
    """A type's manual axes (jax.typeof(x).manual_axis_type): the axes it varies over inside a shard_map."""

    def __init__(self, varying):
        self.varying = frozenset(varying)

    def __repr__(self):
        return f'ManualAxisType(varying={set(self.varying) or "{}"})'


class ShapedArray:
    def __init__(self, shape, dtype, weak_type=False, text=None, repr_text=None, sharding=None, varying=()):
        self.shape, self.dtype, self.weak_type = tuple(shape), _dtypes.dtype(dtype), weak_type
        self._text = text
        self._repr_text = repr_text
        self._sharding = sharding
        self.manual_axis_type = _ManualAxisType(varying)
        self.vma = frozenset(varying)

    @property
    def sharding(self):
        if self._sharding is None:
            raise AttributeError("'ShapedArray' object has no attribute 'sharding'")
        return self._sharding

    @property
    def ndim(self):
        return len(self.shape)

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return self._text

    def __str__(self):
        return self._text

    def __repr__(self):
        if self._repr_text is not None:
            return self._repr_text
        return f'ShapedArray({self._text}{", weak_type=True" if self.weak_type else ""})'

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and str(self) == str(other) and self.weak_type == other.weak_type

    def __hash__(self):
        return hash((self._text, self.weak_type))


def _explicit_axes_only(spec, mesh):
    """A type names only Explicit mesh axes: Auto and Manual ones in an array's spec read as None, as JAX's
    get_sharding drops them (a spec over Auto axes alone types as unsharded)."""
    types = dict(zip(mesh.axis_names, (str(getattr(t, 'name', t)) for t in mesh.axis_types)))
    if all(t.endswith('Explicit') for t in types.values()):
        return spec
    kept = []
    for part in spec.partitions:
        if part is None:
            kept.append(None)
            continue
        names = tuple(n for n in (part if isinstance(part, tuple) else (part,)) if types.get(n, '').endswith('Explicit'))
        kept.append(None if not names else (names if isinstance(part, tuple) and len(names) > 1 else names[0]))
    explicit = lambda axes: {n for n in axes if types.get(n, '').endswith('Explicit')}
    return type(spec)(*kept, unreduced=explicit(spec.unreduced), reduced=explicit(spec.reduced))


def _shapedarray(x):
    spec = x._type_spec
    if not x._is_tracer:
        named = x.sharding
        if type(named).__name__ == 'NamedSharding':
            spec = _explicit_axes_only(named.spec, named.mesh)
    return ShapedArray(x.shape, x.dtype, x.weak_type, x._typeof_str, x._typeof_repr,
                       sharding=_TypeSharding(x._abstract_mesh, spec), varying=x._varying_axes)


_install()
