# flax.training.checkpoints: importable, but saving and restoring files is outside the simulator.


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'flax.training.checkpoints.{name} is not supported by shardscope')
