# PositionalSharding (JAX 0.4.0 to 0.4.x): a device array that is reshaped, transposed and replicated like
# numpy, run by the engine as a NamedSharding over a mesh of the same devices.
import numpy as np

import _shardscope


class _DeviceIdSet:
    """The devices at one position, printed as JAX prints them: {TPU 0, 2, 4, 6}."""
    def __init__(self, platform, ids):
        self._platform = platform
        self._ids = frozenset(ids)

    def __add__(self, other):
        return _DeviceIdSet(self._platform, self._ids | other._ids)

    def __iter__(self):
        return iter(sorted(self._ids))

    def __len__(self):
        return len(self._ids)

    def __eq__(self, other):
        return isinstance(other, _DeviceIdSet) and (self._platform, self._ids) == (other._platform, other._ids)

    def __hash__(self):
        return hash((self._platform, self._ids))

    def __repr__(self):
        return '{' + self._platform + ' ' + ', '.join(str(i) for i in sorted(self._ids)) + '}'


class PositionalSharding:
    # State: `_base` holds indices into `_devices` shaped as the mesh the engine uses; `_dims` gives, per
    # position dimension, the mesh axis it walks (None: replicated, size 1). Mesh axes no dimension walks are
    # replicated as well.
    def __init__(self, devices, *, memory_kind=None):
        array = devices if isinstance(devices, np.ndarray) else np.array(devices, dtype=object)
        if not array.size:
            raise ValueError(f'PositionalSharding.__init__ requires at least one device, got {devices}')
        self._devices = list(array.flat)
        self._base = np.arange(array.size).reshape(array.shape)
        self._dims = list(range(array.ndim))
        self._memory_kind = memory_kind

    @classmethod
    def _remake(cls, source, base, dims):
        made = cls.__new__(cls)
        made._devices, made._base, made._dims, made._memory_kind = source._devices, base, dims, source._memory_kind
        return made

    @property
    def shape(self):
        return tuple(1 if d is None else self._base.shape[d] for d in self._dims)

    @property
    def ndim(self):
        return len(self._dims)

    def _ids(self):
        """The device-index set at every position (what numpy would hold for JAX)."""
        walked = [d for d in self._dims if d is not None]
        replicated = [a for a in range(self._base.ndim) if a not in walked]
        order = walked + replicated
        moved = np.transpose(self._base, order).reshape(tuple(self._base.shape[a] for a in walked) + (-1,))
        platform = self._devices[0].platform.upper()
        sets = np.empty(moved.shape[:-1], dtype=object)
        for index in np.ndindex(sets.shape):
            sets[index] = _DeviceIdSet(platform, (self._devices[i].id for i in moved[index]))
        return sets.reshape(self.shape)

    def __repr__(self):
        body = np.array2string(self._ids(), prefix='PositionalSharding(', suffix=')', max_line_width=100)
        memory = '' if self._memory_kind is None else f', memory_kind={self._memory_kind}'
        return f'PositionalSharding({body}{memory})'

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        ids = self._ids()
        if any(len(s) != 1 for s in ids.flat):
            raise NotImplementedError('shardscope: PositionalSharding.reshape of a replicated sharding')
        by_id = {d.id: i for i, d in enumerate(self._devices)}
        base = np.array([by_id[next(iter(s))] for s in ids.flat]).reshape(shape)
        return self._remake(self, base, list(range(base.ndim)))

    def transpose(self, *axes):
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return self._remake(self, self._base, [self._dims[a] for a in axes])

    @property
    def T(self):
        return self.transpose()

    def replicate(self, axis=None, keepdims=True):
        axes = range(self.ndim) if axis is None else ([axis] if isinstance(axis, int) else list(axis))
        axes = {a % self.ndim for a in axes}
        dims = [None if i in axes else d for i, d in enumerate(self._dims)]
        if not keepdims:
            dims = [d for i, d in enumerate(dims) if i not in axes]
        return self._remake(self, self._base, dims)

    @property
    def device_set(self):
        return set(self._devices)

    @property
    def memory_kind(self):
        return self._memory_kind

    @property
    def is_fully_replicated(self):
        return all(d is None for d in self._dims) or self._base.size == 1

    def with_memory_kind(self, kind):
        made = self._remake(self, self._base, self._dims)
        made._memory_kind = kind
        return made

    # The Sharding API: device counts from the positions, geometry from the engine's view of the array.
    @property
    def num_devices(self):
        return len(self._devices)

    @property
    def addressable_devices(self):
        return {d for d in self._devices if d.process_index == 0}

    @property
    def is_fully_addressable(self):
        return all(d.process_index == 0 for d in self._devices)

    @property
    def _device_assignment(self):
        return tuple(self._devices)

    @property
    def _addressable_device_assignment(self):
        return tuple(d for d in self._devices if d.process_index == 0)

    def shard_shape(self, global_shape):
        return self._to_named(len(global_shape)).shard_shape(global_shape)

    def devices_indices_map(self, global_shape):
        return self._to_named(len(global_shape)).devices_indices_map(global_shape)

    def addressable_devices_indices_map(self, global_shape):
        return self._to_named(len(global_shape)).addressable_devices_indices_map(global_shape)

    def is_equivalent_to(self, other, ndim):
        return self._to_named(ndim).is_equivalent_to(to_engine_sharding(other, ndim), ndim)

    def __eq__(self, other):
        return (isinstance(other, PositionalSharding) and self._devices == other._devices
                and self.shape == other.shape and bool(np.all(self._ids() == other._ids())))

    def __hash__(self):
        return hash((tuple(d.id for d in self._devices), self.shape))

    def _to_named(self, rank):
        """The engine's view for an array of `rank` dimensions (leading size-1 positions dropped)."""
        dims = list(self._dims)
        if len(dims) < rank:
            dims = [None] * (rank - len(dims)) + dims
        extra = dims[:len(dims) - rank]
        if any(d is not None and self._base.shape[d] != 1 for d in extra):
            raise ValueError(f'One of device_put args was given the sharding of {self!r}, which implies that the '
                             f'global size of its dimension 0 should be divisible by {self.shape[0]}, '
                             f'but it is of rank {rank}')
        dims = dims[len(dims) - rank:]
        # The engine's mesh splits every position axis into its prime factors, named by their place in the
        # flat list: two shardings over one device order (reshape(4, 2) and reshape(2, 4) of the same
        # devices) then share one mesh, and each position dimension walks a tuple of its factors' axes.
        factors = [_prime_factors(size) for size in self._base.shape]
        names, axis_names = [], []
        for sizes in factors:
            names.append(tuple(f'_p{len(axis_names) + k}' for k in range(len(sizes))))
            axis_names.extend(names[-1])
        refined = [size for sizes in factors for size in sizes]
        ordered = [self._devices[i] for i in self._base.flat]
        devices = np.empty(len(ordered), dtype=object)
        devices[:] = ordered
        mesh = _shardscope.Mesh(devices.reshape(refined or (1,)), axis_names or ['_p0'])
        spec = _shardscope.PartitionSpec(*[None if d is None or not names[d] else
                                           (names[d][0] if len(names[d]) == 1 else names[d]) for d in dims])
        return _shardscope.NamedSharding(mesh, spec, memory_kind=self._memory_kind)


def _prime_factors(size):
    """Prime factors of `size`, smallest first (none for 1)."""
    found, candidate = [], 2
    while size > 1:
        while size % candidate == 0:
            found.append(candidate)
            size //= candidate
        candidate += 1
    return found


def to_engine_sharding(sharding, rank):
    return sharding._to_named(rank) if isinstance(sharding, PositionalSharding) else sharding
