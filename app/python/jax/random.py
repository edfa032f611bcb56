# jax.random: threefry keys and samplers, bit-exact with JAX (core/random); JAX's argument forms live here.
import operator as _operator

import _shardscope

_engine = _shardscope.random


def _shape(shape):
    if isinstance(shape, (tuple, list)):
        return tuple(_operator.index(d) for d in shape)
    raise TypeError(f'Shapes must be 1D sequences of concrete values of integer type, got {shape}.')


def _place(x, sharding):
    return x if sharding is None else _shardscope.device_put(x, sharding)


def PRNGKey(seed, *, impl=None):
    """Raw uint32[2] key data, as the legacy jax.random.PRNGKey returns."""
    if impl not in (None, 'threefry2x32'):
        raise NotImplementedError(f'jax.random.PRNGKey(impl={impl!r}) is not supported by shardscope')
    return _engine.PRNGKey(int(seed))


def key(seed, *, impl=None):
    # Typed key arrays (key<fry>) are not a dtype here: the key is its uint32[2] data.
    return PRNGKey(seed, impl=impl)


def key_data(keys):
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    return key_bits_array


def split(key, num=2):
    shape = tuple(num) if isinstance(num, (tuple, list)) else (_operator.index(num),)
    if _traced(key):
        # Inside a trace: the engine's random_split equation (what Flax's split_rngs runs under jit).
        return _shardscope.bind('random_split', [key], {'shape': shape})[0]
    return _engine.split(key, shape)


def fold_in(key, data):
    if _traced(key) or _traced(data):
        # Inside a trace: a random_fold_in equation; data wraps to uint32 as in JAX.
        import numpy as np
        import jax.numpy as jnp
        operand = data if _traced(data) else jnp.asarray(np.uint32(int(data) & 0xFFFFFFFF))
        return _shardscope.bind('random_fold_in', [key, operand], {})[0]
    return _engine.fold_in(key, int(data))


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    if _traced(key):
        import jax.numpy as jnp
        chosen = jnp.dtype(dtype if dtype is not None else jnp.uint32)
        if chosen not in (jnp.uint32, jnp.uint64):
            raise NotImplementedError(f'jax.random.bits of {chosen} on a traced key is not supported by shardscope yet')
        return _place(_engine.traced_bits(key, _shape(shape), chosen.itemsize * 8), out_sharding)
    return _place(_engine.bits(key, _shape(shape), dtype), out_sharding)


def _traced(key):
    return getattr(key, '_is_tracer', False)


def _float_dtype(dtype, name):
    import jax.numpy as jnp
    chosen = jnp.dtype(dtype if dtype is not None else jnp.float32)
    import jax
    if chosen == jnp.float64 and not jax.config.jax_enable_x64:
        chosen = jnp.dtype(jnp.float32)
    if chosen not in (jnp.float32, jnp.float64):
        raise NotImplementedError(f'jax.random.{name} of {chosen} on a traced key is not supported by shardscope yet')
    return chosen


def _traced_uniform(key, shape, dtype, minval, maxval):
    """JAX's uniform: the top mantissa bits of random_bits as a float in [1, 2), minus one, scaled. The float
    (1 + m * 2^-k) - 1 is exactly m * 2^-k, computed here without a bitcast."""
    import numpy as np
    import jax.numpy as jnp
    from jax import lax
    nbits, nmant = (32, 23) if dtype == jnp.float32 else (64, 52)
    bits = _engine.traced_bits(key, shape, nbits)
    mantissa = lax.shift_right_logical(bits, jnp.asarray(nbits - nmant, bits.dtype))
    floats = mantissa.astype(dtype) * jnp.asarray(2.0 ** -nmant, dtype)
    low = jnp.asarray(minval, dtype)
    high = jnp.asarray(maxval, dtype)
    return lax.max(low, floats * (high - low) + low)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    if _traced(key):
        return _place(_traced_uniform(key, _shape(shape), _float_dtype(dtype, 'uniform'), minval, maxval),
                      out_sharding)
    return _place(_engine.uniform(key, _shape(shape), dtype, float(minval), float(maxval)), out_sharding)


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    if _traced(key):
        import numpy as np
        import jax.numpy as jnp
        from jax import lax
        dtype = _float_dtype(dtype, 'normal')
        low = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
        u = _traced_uniform(key, _shape(shape), dtype, low, 1.0)
        return _place(jnp.asarray(np.sqrt(2), dtype) * lax.erf_inv(u), out_sharding)
    return _place(_engine.normal(key, _shape(shape), dtype), out_sharding)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    if _traced(key) or _traced(minval) or _traced(maxval):
        raise NotImplementedError('jax.random.randint inside jit, grad or vmap (on a traced key or bounds) is not '
                                  'supported by shardscope yet')
    return _place(_engine.randint(key, _shape(shape), int(minval), int(maxval), dtype), out_sharding)


def bernoulli(key, p=0.5, shape=None, mode='low', *, out_sharding=None):
    if mode not in ('low', 'high'):
        raise ValueError(f"got mode={mode}, expected 'high' or 'low'")
    if _traced(key) or _traced(p) or getattr(p, 'ndim', 0) != 0:
        return _place(_bernoulli_from_uniform(key, p, shape, mode), out_sharding)
    shape = () if shape is None else _shape(shape)
    return _place(_engine.bernoulli(key, float(p), shape, mode), out_sharding)


def _bernoulli_from_uniform(key, p, shape, mode):
    """JAX's rule: uniform samples in p's float dtype compared with p; 'high' adds a second draw scaled below the
    first's resolution, for probabilities finer than 2^-mantissa."""
    import numpy as np
    import jax.numpy as jnp
    p = jnp.asarray(p)
    if not jnp.issubdtype(p.dtype, jnp.floating):
        p = p.astype(jnp.float32)
    if shape is None:
        shape = p.shape
    else:
        shape = _shape(shape)
        try:
            result = np.broadcast_shapes(shape, p.shape)
        except ValueError:
            raise ValueError(f'Incompatible shapes for broadcasting: shapes={[tuple(shape), tuple(p.shape)]}') from None
        if result != tuple(shape):
            raise ValueError('bernoulli parameter shapes must be broadcast-compatible with shape argument, and the '
                             'result of broadcasting the shapes must equal the shape argument, but got result '
                             f'{result} for shape argument {tuple(shape)}.')
    if mode == 'high':
        draws = uniform(key, (2, *shape), p.dtype)
        low, high = draws[0], draws[1]
        high = high * jnp.asarray(2.0 ** -jnp.finfo(p.dtype).nmant, p.dtype)
        return high < p - low
    return uniform(key, shape, p.dtype) < p


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal values cut to (lower, upper): erf_inv of uniforms between erf(lower/sqrt2) and erf(upper/sqrt2), then
    clipped to the open interval, in `dtype` throughout (JAX's algorithm, so the bits agree)."""
    import numpy as np
    import jax.numpy as jnp
    from jax import lax
    dtype = jnp.dtype(dtype if dtype is not None else jnp.float32)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    if np.ndim(lower) or np.ndim(upper):
        raise NotImplementedError('jax.random.truncated_normal with array bounds is not supported by shardscope yet')
    sqrt2 = jnp.asarray(np.sqrt(2), dtype)
    low = jnp.asarray(lower, dtype)
    high = jnp.asarray(upper, dtype)
    a = lax.erf(low / sqrt2)
    b = lax.erf(high / sqrt2)
    if _traced(key) or _traced(a):
        u = _traced_uniform(key, _shape(tuple(shape)), _float_dtype(dtype, 'truncated_normal'), a, b)
    else:
        u = uniform(key, shape, dtype, minval=float(a), maxval=float(b))
    out = sqrt2 * lax.erf_inv(u)
    out = jnp.clip(out, lax.nextafter(low, jnp.asarray(np.inf, dtype)), lax.nextafter(high, jnp.asarray(-np.inf, dtype)))
    return _place(out, out_sharding)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.random.{name} is not supported by shardscope')
