# flax.nnx.initializers: the initializers Linen has (jax.nn.initializers plus Flax's zeros_init()/ones_init()).
from flax.linen.initializers import *  # noqa: F401,F403
from flax.linen.initializers import zeros_init, ones_init  # noqa: F401
