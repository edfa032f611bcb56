# jax.scipy.stats.uniform: the uniform distribution on [loc, loc + scale].
import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax.scipy._util import promote_args_inexact


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('uniform.logpdf', x, loc, scale)
    log_probs = lax.neg(lax.log(scale))
    return jnp.where(jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc)), -_np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact('uniform.cdf', x, loc, scale)
    zero, one = jnp.array(0, x.dtype), jnp.array(1, x.dtype)
    conds = [lax.lt(x, loc), lax.gt(x, lax.add(loc, scale)), lax.ge(x, loc) & lax.le(x, lax.add(loc, scale))]
    vals = [zero, one, lax.div(lax.sub(x, loc), scale)]
    return jnp.select(conds, vals)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact('uniform.ppf', q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), _np.nan, lax.add(loc, lax.mul(scale, q)))
