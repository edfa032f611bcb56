# jax.scipy.stats.norm: the normal distribution.
import numpy as _np

from jax import lax
from jax.scipy import special
from jax.scipy._util import promote_args_inexact, const


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('norm.logpdf', x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(const(x, 2 * _np.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), const(x, -2))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('norm.cdf', x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('norm.logcdf', x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('norm.sf', x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('norm.logsf', x, loc, scale)
    return logcdf(-x, -loc, scale)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.scipy.stats.norm.{name} is not supported by shardscope')
