# shardscope's `flax`: the parts of Flax Linen that sharding tutorials use, in plain Python over the simulated jax.
from flax import struct, traverse_util, core, linen, serialization, training  # noqa: F401
from flax.core import FrozenDict  # noqa: F401
from flax.configurations import config  # noqa: F401


def __getattr__(name):
    # The Flax release of the profile's months: 0.12.10 next to jax 0.11, 0.10.4 before.
    if name == '__version__':
        from flax import _versions
        return '0.12.10' if _versions.jax_version() >= (0, 11, 0) else '0.10.4'
    if name == 'nnx':  # imported on first use, so Linen programs do not pay for it
        import importlib
        return importlib.import_module('flax.nnx')
    raise AttributeError(f"module 'flax' has no attribute '{name}'")
