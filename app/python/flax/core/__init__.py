# flax.core: FrozenDict, boxed metadata and the partitioning helpers Linen builds on.
from flax.core import frozen_dict, meta, spmd  # noqa: F401
from flax.core.frozen_dict import FrozenDict, freeze, unfreeze, copy, pop, pretty_repr  # noqa: F401
from flax.core.meta import AxisMetadata, Partitioned, unbox, map_axis_meta  # noqa: F401
