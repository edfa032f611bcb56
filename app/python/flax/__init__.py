# shardscope's `flax`: the parts of Flax Linen that sharding tutorials use, in plain Python over the simulated jax.
from flax import struct, traverse_util, core, linen, serialization, training  # noqa: F401
from flax.core import FrozenDict  # noqa: F401

__version__ = '0.10.4'
