# Typed PRNG key arrays (dtype key<fry>): an array of keys over its uint32[..., 2] key data, as JAX's PRNGKeyArray.
import numpy as np

from jax._src import tree as _tree


class extended(np.generic):
    """Scalar type of JAX's extended dtypes (jax.dtypes.extended)."""


class prng_key(extended):
    """Scalar type of every PRNG key dtype (jax.dtypes.prng_key)."""


class PRNGImpl:
    """A PRNG implementation: its key shape, its name ('threefry2x32') and the tag key dtypes show ('fry')."""

    def __init__(self, key_shape, name, tag):
        self.key_shape, self.name, self.tag = tuple(key_shape), name, tag

    def __str__(self):
        return self.tag

    def __repr__(self):
        return f"PRNGImpl(key_shape={self.key_shape}, name='{self.name}', tag='{self.tag}')"

    def __hash__(self):
        return hash(self.tag)


threefry_prng_impl = PRNGImpl((2,), 'threefry2x32', 'fry')
prngs = {threefry_prng_impl.name: threefry_prng_impl}


class PRNGSpec:
    """What jax.random.key_impl returns for implementations that are not registered by name."""

    def __init__(self, impl):
        self._impl = impl

    def __repr__(self):
        return f'PRNGSpec({self._impl.name!r})'

    def __str__(self):
        return str(self._impl)


class _KeyTyMeta(type):
    # A key dtype is a class deriving from prng_key, so numpy's issubdtype(k.dtype, jax.dtypes.prng_key) holds
    # without any dtype registration; the metaclass gives it JAX's name and repr.
    def __repr__(cls):
        return f'key<{cls._impl.tag}>'

    __str__ = __repr__

    @property
    def name(cls):
        return f'key<{cls._impl.tag}>'

    @property
    def itemsize(cls):
        return 4 * int(np.prod(cls._impl.key_shape))


_key_types = {}


def key_dtype(impl):
    if impl not in _key_types:
        _key_types[impl] = _KeyTyMeta('KeyTy', (prng_key,), {'_impl': impl, 'type': prng_key})
    return _key_types[impl]


def resolve_prng_impl(spec):
    if spec is None:
        return threefry_prng_impl
    if isinstance(spec, PRNGImpl):
        return spec
    if isinstance(spec, PRNGSpec):
        return spec._impl
    if isinstance(spec, _KeyTyMeta):
        return spec._impl
    if isinstance(spec, str):
        if spec in prngs:
            return prngs[spec]
        if spec in ('rbg', 'unsafe_rbg'):
            raise NotImplementedError(f'jax.random PRNG implementation {spec!r} is not supported by shardscope')
        names = ', '.join(f'"{name}"' for name in ('threefry2x32', 'rbg', 'unsafe_rbg'))
        raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?')
    raise TypeError(f'unrecognized type {type(spec)} for specifying PRNG implementation.')


def is_key_array(x):
    return isinstance(x, PRNGKeyArray)


class PRNGKeyArray:
    """An array whose elements are keys; its data is a uint32 array with the implementation's key shape last."""

    __slots__ = ('_impl', '_base_array')
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, impl, key_data):
        self._impl = impl
        self._base_array = key_data

    # --- array attributes -------------------------------------------------------------------------------------
    @property
    def shape(self):
        return tuple(self._base_array.shape[:self._base_array.ndim - len(self._impl.key_shape)])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def dtype(self):
        return key_dtype(self._impl)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.itemsize * self.size

    @property
    def weak_type(self):
        return False

    @property
    def _is_tracer(self):
        return getattr(self._base_array, '_is_tracer', False)

    @property
    def sharding(self):
        # The logical sharding: the base array's, without the trailing key-data dims.
        sharding = self._base_array.sharding
        spec = getattr(sharding, 'spec', None)
        if spec is not None and len(spec) > self.ndim:
            from jax.sharding import NamedSharding, PartitionSpec
            return NamedSharding(sharding.mesh, PartitionSpec(*spec.partitions[:self.ndim]),
                                 memory_kind=sharding.memory_kind)
        return sharding

    @property
    def device(self):
        return self._base_array.device

    def devices(self):
        return self._base_array.devices()

    @property
    def committed(self):
        return self._base_array.committed

    @property
    def is_fully_replicated(self):
        return self._base_array.is_fully_replicated

    @property
    def is_fully_addressable(self):
        return True

    @property
    def addressable_shards(self):
        shards = self._base_array.addressable_shards
        for shard in shards:
            shard.index = tuple(shard.index)[:self.ndim]
        return shards

    global_shards = addressable_shards

    @property
    def aval(self):
        text = f'{self.dtype.name}[{",".join(str(d) for d in self.shape)}]'
        return _KeyShapedArray(self.shape, self.dtype, text)

    def block_until_ready(self):
        return self

    def copy(self):
        return PRNGKeyArray(self._impl, self._base_array.copy())

    # --- Python protocols -------------------------------------------------------------------------------------
    def __repr__(self):
        if self._is_tracer:
            return f'Traced<{self.aval}>with<DynamicJaxprTrace>'
        return f'Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base_array}'

    def __len__(self):
        if not self.shape:
            raise TypeError('len() of unsized object')
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError('iteration over a 0-d key array')
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self):
        raise TypeError('key array cannot be converted to boolean.')

    def __array__(self, dtype=None, copy=None):
        raise TypeError('JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use '
                        'jax.random.key_data(arr) if you wish to extract the underlying integer array.')

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            # The ellipsis must not reach into the key data's trailing dims.
            index = index + (slice(None),) * len(self._impl.key_shape)
        return PRNGKeyArray(self._impl, self._base_array[index])

    def __eq__(self, other):
        return _compare(self, other, 'all')

    def __ne__(self, other):
        return _compare(self, other, 'any')

    def reshape(self, *shape, order='C'):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return PRNGKeyArray(self._impl, self._base_array.reshape(tuple(shape) + self._impl.key_shape))

    def ravel(self):
        return self.reshape((self.size,))

    flatten = ravel

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        import jax.numpy as jnp
        return PRNGKeyArray(self._impl, jnp.squeeze(self._base_array, axis))

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = tuple(axes) if axes else tuple(reversed(range(self.ndim)))
        trailing = tuple(range(self.ndim, self._base_array.ndim))
        import jax.numpy as jnp
        return PRNGKeyArray(self._impl, jnp.transpose(self._base_array, axes + trailing))

    @property
    def T(self):
        return self.transpose()

    def _arith(self, *_):
        raise TypeError(f'{self.dtype.name} arrays do not support arithmetic; use jax.random.key_data to reach the '
                        'key bits')

    def _mixed(jnp_name, reflected=False):
        """A binary operator as jnp's promote_args checks it: a key beside another dtype names both (JAX's
        check_for_prngkeys); two keys reach the engine's own refusal."""
        def operator(self, other):
            import numpy as np
            import jax.numpy as jnp
            other_dtype = other.dtype if is_key_array(other) else jnp.asarray(other).dtype
            if str(other_dtype) != str(self.dtype):
                names = [str(self.dtype), str(np.dtype(other_dtype)) if not is_key_array(other) else str(other_dtype)]
                raise TypeError(f"{jnp_name} does not accept dtypes {', '.join(reversed(names) if reflected else names)}.")
            return self._arith()
        return operator

    __add__, __radd__ = _mixed('add'), _mixed('add', True)
    __sub__, __rsub__ = _mixed('subtract'), _mixed('subtract', True)
    __mul__, __rmul__ = _mixed('multiply'), _mixed('multiply', True)
    __truediv__, __floordiv__ = _mixed('true_divide'), _mixed('floor_divide')
    __lt__, __le__, __gt__, __ge__ = _mixed('less'), _mixed('less_equal'), _mixed('greater'), _mixed('greater_equal')
    __and__, __or__, __xor__ = _mixed('bitwise_and'), _mixed('bitwise_or'), _mixed('bitwise_xor')
    __neg__ = __invert__ = _arith
    del _mixed


class _KeyShapedArray:
    """The aval of a key array: `key<fry>[3]`."""

    def __init__(self, shape, dtype, text):
        self.shape, self.dtype, self._text = tuple(shape), dtype, text
        self.weak_type = False

    @property
    def ndim(self):
        return len(self.shape)

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return self._text

    def __str__(self):
        return self._text

    def __repr__(self):
        return f'ShapedArray({self._text})'


def _compare(a, b, reduce):
    if not (is_key_array(a) and is_key_array(b)):
        return NotImplemented
    if a._impl is not b._impl:
        raise TypeError(f'cannot compare key arrays of different implementations: {a.dtype} and {b.dtype}')
    if reduce == 'all':
        return (a._base_array == b._base_array).all(axis=-1)
    return (a._base_array != b._base_array).any(axis=-1)


# Transformations (jit, vmap, grad, shard_map, pmap, device_put) reach the key data through the pytree registry,
# as JAX's dispatch registry does, so keys keep their type across them.
_tree.register_pytree_node(PRNGKeyArray, lambda x: ((x._base_array,), x._impl),
                           lambda impl, children: PRNGKeyArray(impl, children[0]))
_tree.register_user_leaf(PRNGKeyArray)
