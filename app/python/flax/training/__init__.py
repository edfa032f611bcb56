# flax.training: TrainState and the legacy msgpack checkpoints.
from flax.training import train_state, checkpoints  # noqa: F401
