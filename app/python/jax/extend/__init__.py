# jax.extend: the interfaces for libraries built on JAX; only its core's jaxpr objects are simulated.


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    if name == 'core':
        import importlib
        return importlib.import_module('jax.extend.core')
    raise NotImplementedError(f'jax.extend.{name} is not supported by shardscope')
