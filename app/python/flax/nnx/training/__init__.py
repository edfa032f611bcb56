# flax.nnx.training: the Optimizer.
from flax.nnx.training.optimizer import Optimizer, OptState, OptArray, OptVariable  # noqa: F401
