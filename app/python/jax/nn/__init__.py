# jax.nn: the engine's activation functions, emitting JAX's primitives.
import _shardscope


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    engine = getattr(_shardscope, 'nn', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.nn.{name} is not supported by shardscope')
import importlib as _importlib  # noqa: E402

initializers = _importlib.import_module("jax.nn.initializers")

from jax.nn._more import relu, identity, sparse_sigmoid, log1mexp, logmeanexp, dot_product_attention  # noqa: E402,F401
