# jax.lax: the engine's primitives with JAX's argument handling.
import _shardscope


def __getattr__(name):
    engine = getattr(_shardscope, 'lax', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.lax.{name} is not supported by shardscope')
