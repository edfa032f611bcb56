"""jaxlib's Memory objects: the memory spaces a device addresses (device HBM, pinned and unpinned host memory).

Installed onto the engine's Device class: Device.addressable_memories() and Device.default_memory() return these,
as jaxlib does; the kinds per platform come from the engine (addressable_memory_kinds in core/device).
"""
import _shardscope

_memory_kinds = _shardscope.Device.addressable_memories  # the engine's kinds, as strings


class Memory:
    """One memory space of one device: .kind, .platform, .process_index and addressable_by_devices()."""

    __module__ = 'jaxlib._jax'

    def __init__(self, device, kind):
        self._device = device
        self._kind = kind

    @property
    def kind(self):
        return self._kind

    @property
    def platform(self):
        return self._device.platform

    @property
    def process_index(self):
        return self._device.process_index

    def addressable_by_devices(self):
        return [self._device]

    def __eq__(self, other):
        return isinstance(other, Memory) and other._device == self._device and other._kind == self._kind

    def __hash__(self):
        return hash((self._device, self._kind))

    def __repr__(self):
        return f'Memory(kind={self._kind!r}, device={self._device!r})'

    __str__ = __repr__


def _addressable_memories(device):
    return [Memory(device, kind) for kind in _memory_kinds(device)]


def _default_memory(device):
    # The kind a committed array on the device reports: the profile's default (device, or unpinned_host on CPU in
    # the releases that said so), 'device' where the profile prints none.
    kind = _shardscope.SingleDeviceSharding(device).memory_kind
    return Memory(device, kind or 'device')


def _memory(device, kind):
    kinds = _memory_kinds(device)
    if kind not in kinds:
        from jax.errors import JaxRuntimeError
        raise JaxRuntimeError(f'INVALID_ARGUMENT: Could not find memory addressable by device {device.device_kind}. '
                              f'Device {device.device_kind} can address the following memory kinds: '
                              f'{", ".join(kinds)}. Got memory kind: {kind}')
    return Memory(device, kind)


_shardscope.Device.addressable_memories = _addressable_memories
_shardscope.Device.default_memory = _default_memory
_shardscope.Device.memory = _memory
