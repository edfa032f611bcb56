# jax.stages: the types of jit's stages (f.trace(...), .lower(...), .compile()).
from jax._src.jit import Traced, Lowered, Compiled, _Jitted as Wrapped  # noqa: F401


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.stages.{name} is not supported by shardscope')
