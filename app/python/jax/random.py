# jax.random: threefry keys and samplers, bit-exact with JAX.
import _shardscope


def __getattr__(name):
    engine = getattr(_shardscope, 'random', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.random.{name} is not supported by shardscope')
