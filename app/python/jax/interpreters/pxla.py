# jax.interpreters.pxla: before jax.Array (jax < 0.4.1) pmap returned instances of this module's
# _ShardedDeviceArray, which is what type() of a pmap output shows under those profiles.
import _shardscope

from jax._src.array_methods import ArrayImpl


class _ShardedDeviceArray(ArrayImpl):
    # No slots of its own, so pmap outputs can take this class in place (same layout as ArrayImpl).
    __slots__ = ()


ShardedDeviceArray = _ShardedDeviceArray


def _uses_legacy_arrays():
    version = tuple(int(part) for part in _shardscope.jax_version().split('.'))
    return version < (0, 4, 1)


def mark_pmap_output(array):
    """Gives a pmap output the ShardedDeviceArray type under the profiles that had it."""
    array._from_pmap = True
    if _uses_legacy_arrays():
        array.__class__ = _ShardedDeviceArray
    return array
