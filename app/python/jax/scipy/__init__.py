# jax.scipy: SciPy's special functions and distributions as JAX composes them from lax operations.
import importlib as _importlib

_SUBMODULES = ('special', 'stats')


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    if name in _SUBMODULES:
        return _importlib.import_module(f'jax.scipy.{name}')
    raise NotImplementedError(f'jax.scipy.{name} is not supported by shardscope')
