# jax.scipy.stats.laplace: the Laplace (double exponential) distribution.
from jax import lax
from jax.scipy._util import promote_args_inexact, const


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('laplace.logpdf', x, loc, scale)
    two = const(x, 2)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(two, scale))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('laplace.cdf', x, loc, scale)
    half = const(x, 0.5)
    one = const(x, 1)
    zero = const(x, 0)
    diff = lax.div(lax.sub(x, loc), scale)
    return lax.select(lax.le(diff, zero), lax.mul(half, lax.exp(diff)),
                      lax.sub(one, lax.mul(half, lax.exp(lax.neg(diff)))))
