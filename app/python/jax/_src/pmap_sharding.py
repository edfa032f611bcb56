# PmapSharding: the `.sharding` of old-pmap outputs (jax 0.4.1 to 0.7.x); its layout and text come from the engine.
import numpy as np

import _shardscope


class ShardingSpec:
    def __init__(self, text):
        self._text = text

    def __repr__(self):
        return self._text

    __str__ = __repr__


class PmapSharding:
    def __init__(self, devices, spec_text, str_text, mapped_dim, chunked):
        self.devices = np.array(list(devices), dtype=object)
        self.sharding_spec = ShardingSpec(spec_text)
        self._str, self._mapped_dim, self._chunked = str_text, mapped_dim, chunked

    def __str__(self):
        return self._str

    def __repr__(self):
        return f'PmapSharding(sharding_spec={self.sharding_spec}, devices={self.devices})'

    @property
    def device_set(self):
        return set(self.devices.flat)

    @property
    def _device_assignment(self):
        return tuple(self.devices.flat)

    @property
    def is_fully_replicated(self):
        return self.devices.size == 1

    @property
    def is_fully_addressable(self):
        return True

    @property
    def memory_kind(self):
        return None

    def shard_shape(self, global_shape):
        shape = list(global_shape)
        if self._chunked:
            shape[self._mapped_dim] = 1
        else:
            del shape[self._mapped_dim]
        return tuple(shape)

    def devices_indices_map(self, global_shape):
        out = {}
        for i, device in enumerate(self.devices.flat):
            index = [slice(None)] * len(global_shape)
            index[self._mapped_dim] = slice(i, i + 1) if self._chunked else i
            out[device] = tuple(index)
        return out

    def __eq__(self, other):
        return isinstance(other, PmapSharding) and self._str == other._str

    def __hash__(self):
        return hash(self._str)


def pmap_sharding_of(array, engine_sharding):
    """The PmapSharding of a pmap output under profiles that had one, else None."""
    found = _shardscope.pmap_sharding(array)
    if found is None:
        return None
    return PmapSharding(engine_sharding.mesh.devices.flat, *found)
