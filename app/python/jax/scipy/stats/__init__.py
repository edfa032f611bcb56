# jax.scipy.stats: distributions as modules of logpdf/pdf/cdf functions, JAX's formulas.
import importlib as _importlib

_DISTRIBUTIONS = ('bernoulli', 'expon', 'laplace', 'logistic', 'multivariate_normal', 'norm', 'poisson', 'uniform')


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    if name in _DISTRIBUTIONS:
        return _importlib.import_module(f'jax.scipy.stats.{name}')
    raise NotImplementedError(f'jax.scipy.stats.{name} is not supported by shardscope')
