# jax.interpreters.pxla: before jax.Array (jax < 0.4.1) pmap returned instances of this module's
# _ShardedDeviceArray, which is what type() of a pmap output shows under those profiles.
import _shardscope

from jax._src.array_methods import ArrayImpl


class _ShardedDeviceArray(ArrayImpl):
    # No slots of its own, so pmap outputs can take this class in place (same layout as ArrayImpl).
    __slots__ = ()


ShardedDeviceArray = _ShardedDeviceArray


def _uses_legacy_arrays():
    version = _shardscope.jax_version_info()
    return version < (0, 4, 1)


class _PmapArray(ArrayImpl):
    """A pmap output of jax 0.4.1 to 0.7.x: an Array whose `.sharding` is a PmapSharding."""
    __slots__ = ()

    @property
    def sharding(self):
        from jax._src.pmap_sharding import pmap_sharding_of
        engine_sharding = ArrayImpl.sharding.__get__(self)
        return pmap_sharding_of(self, engine_sharding) or engine_sharding


_PmapArray.__name__ = _PmapArray.__qualname__ = ArrayImpl.__name__
_PmapArray.__module__ = ArrayImpl.__module__


def mark_pmap_output(array):
    """Gives a pmap output the ShardedDeviceArray type, or PmapSharding, under the profiles that had them."""
    array._from_pmap = True
    if _uses_legacy_arrays():
        array.__class__ = _ShardedDeviceArray
    elif type(array) is ArrayImpl and _shardscope.pmap_sharding(array) is not None:
        array.__class__ = _PmapArray
    return array
