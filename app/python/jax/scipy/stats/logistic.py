# jax.scipy.stats.logistic: the logistic distribution.
import jax.numpy as jnp
from jax import lax
from jax.scipy.special import expit, logit
from jax.scipy._util import promote_args_inexact, const


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('logistic.logpdf', x, loc, scale)
    x = lax.div(lax.sub(x, loc), scale)
    two = const(x, 2)
    half_x = lax.div(x, two)
    return lax.sub(lax.mul(lax.neg(two), jnp.logaddexp(half_x, lax.neg(half_x))), lax.log(scale))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('logistic.cdf', x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('logistic.sf', x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def ppf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('logistic.ppf', x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def isf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('logistic.isf', x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)
