# jax.scipy.stats.multivariate_normal: the density for a scalar or isotropic covariance.
import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax.numpy._extras_util import promote_inexact


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError('allow_singular argument of multivariate_normal.logpdf')
    x, mean, cov = promote_inexact(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * jnp.square(x - mean) / cov
                - 1 / 2 * (jnp.log(2 * _np.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if not _np.shape(cov):
        y = x - mean
        return (-1 / 2 * jnp.einsum('...i,...i->...', y, y) / cov
                - n / 2 * (jnp.log(2 * _np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError('multivariate_normal.logpdf got incompatible shapes')
    raise NotImplementedError('jax.scipy.stats.multivariate_normal.logpdf with a full covariance matrix needs '
                              'lax.linalg.cholesky, which shardscope does not simulate yet')


def pdf(x, mean, cov):
    return lax.exp(logpdf(x, mean, cov))
