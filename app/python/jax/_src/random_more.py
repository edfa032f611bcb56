"""jax.random samplers that are formulas over uniform, normal, bernoulli and exponential draws, each a jitted helper
named as JAX names it (_cauchy, _rayleigh, ...), so a compiled program rounds them as XLA does: cauchy, rademacher,
maxwell, double_sided_maxwell, weibull_min, pareto, rayleigh, wald, geometric, triangular, lognormal."""
import numpy as np


def _jnp():
    import jax.numpy as jnp
    return jnp


def _random():
    import jax.random as random
    return random


def _float_dtype(dtype, name):
    jnp = _jnp()
    import jax
    chosen = np.dtype(dtype if dtype is not None else np.float64)
    if chosen.itemsize == 8 and not jax.config.jax_enable_x64:
        chosen = np.dtype(np.float32)
    if not jnp.issubdtype(chosen, jnp.floating):
        raise ValueError(f'dtype argument to `{name}` must be a float dtype, got {chosen}')
    return chosen


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _broadcast_shape(name, shape, *args):
    from jax.random import _check_broadcast_shapes
    return _check_broadcast_shapes(name, shape, *args)


def _jitted(function, static_argnums):
    from jax.random import _jitted as jitted
    return jitted(function, static_argnums)


# ---- the jitted helpers: JAX's formulas, operation for operation

def _cauchy(key, shape, dtype):
    from jax import lax
    random = _random()
    u = random.uniform(key, shape, dtype, minval=np.finfo(dtype).eps, maxval=1.)
    return lax.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))


def _rademacher(key, shape, dtype):
    samples = _random().bernoulli(key, 0.5, shape).astype(dtype)
    return (2 * samples - 1).astype(dtype)


def _maxwell(key, shape, dtype):
    norm_rvs = _random().normal(key, (*shape, 3), dtype)
    return _jnp().linalg.norm(norm_rvs, axis=-1)


def _double_sided_maxwell(key, loc, scale, shape, dtype):
    random = _random()
    params_shape = np.broadcast_shapes(np.shape(loc), np.shape(scale))
    if not shape:
        shape = params_shape
    shape = tuple(shape) + tuple(params_shape)
    maxwell_key, rademacher_key = random.split(key)
    maxwell_rvs = maxwell(maxwell_key, shape, dtype)
    random_sign = rademacher(rademacher_key, shape, dtype)
    return random_sign * maxwell_rvs * scale + loc


def _weibull_min(key, scale, concentration, shape, dtype):
    jnp = _jnp()
    u = _random().uniform(key, shape, dtype, minval=0, maxval=1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def _pareto(key, b, shape, dtype):
    from jax import lax
    b = lax.convert_element_type(b, dtype)
    e = _random().exponential(key, shape, dtype)
    return lax.exp(e / b)


def _rayleigh(key, scale, shape, dtype):
    from jax import lax
    jnp = _jnp()
    u = _random().uniform(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    log_u = lax.log(u)
    sqrt_u = lax.sqrt(lax.mul(log_u, np.array(-2, dtype)))
    return lax.mul(scale, sqrt_u)


def _wald(key, mean, shape, dtype):
    from jax import lax
    jnp = _jnp()
    random = _random()
    k1, k2 = random.split(key, 2)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = random.normal(k1, shape, dtype)
    z = random.uniform(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def _geometric(key, p, shape, dtype):
    from jax import lax
    jnp = _jnp()
    p = jnp.asarray(p)
    if not jnp.issubdtype(p.dtype, jnp.inexact):
        p = p.astype(jnp.result_type(float))
    u = _random().uniform(key, shape, p.dtype)
    u = jnp.where(u == 0, 1, u)  # JAX maps u = 0 to 1 so log(u) stays finite, keeping every other draw
    log_u = lax.log(u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
    return g.astype(dtype)


def _triangular(key, left, mode, right, shape, dtype):
    from jax import lax
    jnp = _jnp()
    left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = _random().uniform(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def _lognormal(key, sigma, shape, dtype):
    from jax import lax
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(_random().normal(key, shape, dtype) * sigma)


_cauchy_jit = _jitted(_cauchy, (1, 2))
_rademacher_jit = _jitted(_rademacher, (1, 2))
_maxwell_jit = _jitted(_maxwell, (1, 2))
_double_sided_maxwell_jit = _jitted(_double_sided_maxwell, (3, 4))
_weibull_min_jit = _jitted(_weibull_min, (3, 4))
_pareto_jit = _jitted(_pareto, (2, 3))
_rayleigh_jit = _jitted(_rayleigh, (2, 3))
_wald_jit = _jitted(_wald, (2, 3))
_geometric_jit = _jitted(_geometric, (2, 3))
_triangular_jit = _jitted(_triangular, (4, 5))
_lognormal_jit = _jitted(_lognormal, (2, 3))


def _key(key):
    from jax.random import _data
    return _data(key)


# ---- the public samplers: JAX's argument checks and defaults

def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
    from jax.random import _place
    return _place(_cauchy_jit(_key(key), _shape(shape), _float_dtype(dtype, 'cauchy')), out_sharding)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    from jax.random import _int_dtype, _place
    return _place(_rademacher_jit(_key(key), _shape(shape), _int_dtype(dtype)), out_sharding)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    from jax.random import _place
    return _place(_maxwell_jit(_key(key), _shape(shape), _float_dtype(dtype, 'maxwell')), out_sharding)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    return _double_sided_maxwell_jit(_key(key), loc, scale, _shape(shape),
                                     _float_dtype(dtype, 'double_sided_maxwell'))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    return _weibull_min_jit(_key(key), scale, concentration, _shape(shape), _float_dtype(dtype, 'weibull_min'))


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    from jax.random import _place
    dtype = _float_dtype(dtype, 'pareto')
    return _place(_pareto_jit(_key(key), b, _broadcast_shape('pareto', shape, b), dtype), out_sharding)


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    from jax.random import _place
    dtype = _float_dtype(dtype, 'rayleigh')
    return _place(_rayleigh_jit(_key(key), scale, _broadcast_shape('rayleigh', shape, scale), dtype), out_sharding)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    from jax.random import _place
    dtype = _float_dtype(dtype, 'wald')
    return _place(_wald_jit(_key(key), mean, _broadcast_shape('wald', shape, mean), dtype), out_sharding)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    from jax.random import _int_dtype, _place
    dtype = _int_dtype(dtype)
    if not _jnp().issubdtype(dtype, _jnp().integer):
        raise ValueError(f'dtype argument to `geometric` must be an int dtype, got {dtype}')
    return _place(_geometric_jit(_key(key), p, _broadcast_shape('geometric', shape, p), dtype), out_sharding)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    from jax.random import _place
    dtype = _float_dtype(dtype, 'triangular')
    shape = _broadcast_shape('triangular', shape, left, mode, right)
    return _place(_triangular_jit(_key(key), left, mode, right, shape, dtype), out_sharding)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    from jax.random import _place
    dtype = _float_dtype(dtype, 'lognormal')
    return _place(_lognormal_jit(_key(key), sigma, _broadcast_shape('lognormal', shape, sigma), dtype), out_sharding)


def key_dtype(impl=None):
    """The dtype of typed keys of an implementation: key<fry> for threefry2x32 (the default)."""
    from jax.random import key
    return key(0, impl=impl).dtype


def clone(key):
    """The key itself: keys are immutable values here, so a clone is the same draw source (JAX's reuse checker,
    which clone exists to satisfy, is not simulated)."""
    return key


NAMES = ['cauchy', 'rademacher', 'maxwell', 'double_sided_maxwell', 'weibull_min', 'pareto', 'rayleigh', 'wald',
         'geometric', 'triangular', 'lognormal', 'key_dtype', 'clone']
