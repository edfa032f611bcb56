# flax.nnx.nn: NNX layers, initializers and dtype helpers.
from flax.nnx.nn import initializers, dtypes, linear, normalization, stochastic  # noqa: F401
