# jax.scipy.stats.poisson: the Poisson distribution's mass function.
import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax.scipy.special import xlogy, gammaln
from jax.scipy._util import promote_args_inexact, const


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact('poisson.logpmf', k, mu, loc)
    zero = const(k, 0)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.ne(jnp.round(k), k)), -_np.inf, log_probs)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.scipy.stats.poisson.{name} is not supported by shardscope')
