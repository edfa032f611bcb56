# flax.training: TrainState (and checkpoints, which shardscope cannot write).
from flax.training import train_state, checkpoints  # noqa: F401
