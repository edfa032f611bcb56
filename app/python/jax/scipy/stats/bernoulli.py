# jax.scipy.stats.bernoulli: the Bernoulli distribution.
import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax.scipy.special import xlogy, xlog1py
from jax.scipy._util import promote_args_inexact, const


def logpmf(k, p, loc=0):
    k, p, loc = promote_args_inexact('bernoulli.logpmf', k, p, loc)
    zero = const(k, 0)
    one = const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -_np.inf, log_probs)


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote_args_inexact('bernoulli.cdf', k, p)
    zero, one = const(k, 0), const(k, 1)
    conds = [jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one), lax.lt(k, zero),
             jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)), lax.ge(k, one)]
    vals = [jnp.nan, zero, one - p, one]
    return jnp.select(conds, vals)


def ppf(q, p):
    q, p = promote_args_inexact('bernoulli.ppf', q, p)
    zero, one = const(q, 0), const(q, 1)
    return jnp.where(jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one), jnp.nan,
                     jnp.where(lax.le(q, one - p), zero, one))
