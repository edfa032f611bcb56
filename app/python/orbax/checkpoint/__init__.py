# orbax.checkpoint: StandardCheckpointer saving a pytree of (sharded) arrays to a local directory and restoring it
# onto the shardings of an abstract target, as Flax's NNX guides use it. One process; arrays are stored whole.
from orbax.checkpoint import args
from orbax.checkpoint import test_utils
from orbax.checkpoint._standard import Checkpointer, StandardCheckpointer

__all__ = ['args', 'test_utils', 'Checkpointer', 'StandardCheckpointer']
