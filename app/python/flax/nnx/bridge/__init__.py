# flax.nnx.bridge: Linen modules run as NNX modules (ToNNX, lazy_init) and NNX modules as Linen ones (ToLinen,
# to_linen), their variables converted between Linen collections and NNX Variable types.
from flax.nnx.bridge.wrappers import (ToNNX, lazy_init, ToLinen, to_linen, functional, Functional,  # noqa: F401
                                      linen_rngs_dict)
from flax.nnx.bridge.variables import NNXMeta, with_partitioning  # noqa: F401
from flax.nnx.nn import initializers  # noqa: F401
