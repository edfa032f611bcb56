# jax.random: threefry keys and samplers, bit-exact with JAX (core/random); JAX's argument forms live here.
import operator as _operator

import _shardscope
from jax._src import prng as _prng

_engine = _shardscope.random


def _shape(shape):
    if isinstance(shape, (tuple, list)):
        return tuple(_operator.index(d) for d in shape)
    raise TypeError(f'Shapes must be 1D sequences of concrete values of integer type, got {shape}.')


def _check_broadcast_shapes(name, shape, *args):
    """The result shape (JAX's _check_broadcast_shapes): the arguments' broadcast shape when none is given, else
    `shape`, which their shapes must broadcast to."""
    import numpy as np
    arg_shapes = [tuple(np.shape(a)) for a in args]
    if shape is None:
        return np.broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = _shape(shape)
    if arg_shapes:
        try:
            result = np.broadcast_shapes(shape, *arg_shapes)
        except ValueError:
            raise ValueError(f'Incompatible shapes for broadcasting: shapes={[shape, *arg_shapes]}') from None
        if result != shape:
            raise ValueError(f'{name} parameter shapes must be broadcast-compatible with shape argument, and the '
                             'result of broadcasting the shapes must equal the shape argument, but got result '
                             f'{result} for shape argument {shape}.')
    return shape


def _place(x, sharding):
    from jax._src.sharding_in_types import place_out_sharding
    return place_out_sharding(x, sharding)


def PRNGKey(seed, *, impl=None):
    """Raw uint32[2] key data, as the legacy jax.random.PRNGKey returns."""
    if impl not in (None, 'threefry2x32'):
        _prng.resolve_prng_impl(impl)
        raise NotImplementedError(f'jax.random.PRNGKey(impl={impl!r}) is not supported by shardscope')
    _check_seed('PRNGKey', seed)
    if _traced(seed):
        # Inside a trace: random_seed then random_unwrap, the equations JAX shows for a raw key.
        typed = _shardscope.bind('random_seed', [seed], {'impl': _IMPL_PARAM})[0]
        return _shardscope.bind('random_unwrap', [typed], {})[0]
    return _engine.PRNGKey(_seed_int(seed))


_IMPL_PARAM = 'fry'


def _check_seed(name, seed):
    if _prng.is_key_array(seed):
        raise TypeError(f'{name} accepts a scalar seed, but was given a PRNG key.')
    import numpy as np
    if np.ndim(seed) if not hasattr(seed, 'ndim') else seed.ndim:
        raise TypeError(f'{name} accepts a scalar seed, but was given an array of shape {tuple(np.shape(seed))} != (). '
                        'Use jax.vmap for batching')


def _seed_int(seed):
    # JAX's random_seed converts a Python int with np.int64 first: beyond int64 that is numpy's OverflowError.
    import numpy as np
    return int(np.int64(seed)) if isinstance(seed, int) else int(seed)


def key(seed, *, impl=None, dtype=None):
    """A typed key array of shape () and dtype key<fry> over the same two words PRNGKey gives."""
    if not _shardscope.jax_has('typed_prng_keys'):
        raise AttributeError("module 'jax.random' has no attribute 'key'")
    if dtype is not None:
        if impl is not None:
            raise ValueError('Cannot specify both `impl` and `dtype` arguments to jax.random.key')
        impl = dtype
    spec = _prng.resolve_prng_impl(impl)
    _check_seed('key', seed)
    if _traced(seed):
        return _prng.PRNGKeyArray(spec, _shardscope.bind('random_seed', [seed], {'impl': _IMPL_PARAM})[0])
    return _prng.PRNGKeyArray(spec, _engine.PRNGKey(_seed_int(seed)))


def _data(key):
    """The uint32 key data behind a typed or raw key (JAX's _check_prng_key)."""
    if _prng.is_key_array(key):
        return key._base_array
    if not hasattr(key, 'shape') and not hasattr(key, '__array__'):
        raise TypeError('JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype '
                        f'attributes. Got {key}')
    return key


def _rewrap(like, data):
    return _prng.PRNGKeyArray(like._impl, data) if _prng.is_key_array(like) else data


def key_data(keys):
    if _prng.is_key_array(keys):
        return keys._base_array
    _check_key_data(keys)
    return _data(keys)


def _check_key_data(data):
    for attr in ('ndim', 'shape', 'dtype'):
        if not hasattr(data, attr):
            raise TypeError('JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype '
                            f'attributes. Got {data}')
    if data.ndim < 1:
        raise TypeError(f'JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim={data.ndim}')
    if tuple(data.shape[-1:]) != (2,):
        raise TypeError('JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got '
                        f'shape={tuple(data.shape)} for impl={_prng.threefry_prng_impl!r}')
    if str(data.dtype) != 'uint32':
        raise TypeError(f'JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got '
                        f'dtype={data.dtype}')


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    if _prng.is_key_array(key_bits_array):
        raise TypeError('wrap_key_data accepts uint32 key data, but was given a PRNG key array.')
    if dtype is not None:
        impl = dtype
    spec = _prng.resolve_prng_impl(impl)
    if not hasattr(key_bits_array, 'dtype'):
        import jax.numpy as jnp
        key_bits_array = jnp.asarray(key_bits_array)
    elif not hasattr(key_bits_array, '_is_tracer'):
        import jax.numpy as jnp
        key_bits_array = jnp.asarray(key_bits_array)
    _check_key_data(key_bits_array)
    return _prng.PRNGKeyArray(spec, key_bits_array)


def key_impl(keys):
    if not _prng.is_key_array(keys):
        _check_key_data(_data(keys))
        return _prng.threefry_prng_impl.name
    return keys._impl.name


def split(key, num=2):
    data = _data(key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (_operator.index(num),)
    if _traced(data):
        # Inside a trace: the engine's random_split equation (what Flax's split_rngs runs under jit).
        return _rewrap(key, _shardscope.bind('random_split', [data], {'shape': shape})[0])
    return _rewrap(key, _engine.split(data, shape))


def fold_in(key, data):
    typed, key = key, _data(key)
    return _rewrap(typed, _fold_in(key, data))


def _fold_in(key, data):
    if _traced(key) or _traced(data):
        # Inside a trace: a random_fold_in equation; data wraps to uint32 as in JAX.
        import numpy as np
        import jax.numpy as jnp
        operand = data if _traced(data) else jnp.asarray(np.uint32(int(data) & 0xFFFFFFFF))
        return _shardscope.bind('random_fold_in', [key, operand], {})[0]
    return _engine.fold_in(key, int(data))


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    key = _data(key)
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


# ---- Samplers on traced keys: JAX's jitted helpers (_uniform, _normal, _normal_real, _randint), so a traced call
# is one nested jit equation named as JAX names it, and a program the engine compiles (an eager vmap's call too)
# rounds them as XLA does. Eager calls on concrete keys take the engine's bit-exact kernels.

def _jitted(function, static_argnums):
    from jax._src.lazy_jit import lazy_jit
    return lazy_jit(function, static_argnums=static_argnums)


def _uniform(key, minval, maxval, shape, dtype):
    """JAX's uniform: the top mantissa bits of random_bits as a float in [1, 2), minus one, scaled into
    [minval, maxval). The float (1 + m * 2^-k) - 1 is exactly m * 2^-k, computed here without a bitcast."""
    import numpy as np
    import jax.numpy as jnp
    from jax import lax
    minval = lax.broadcast_to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    nbits, nmant = (32, 23) if dtype == np.float32 else (64, 52)
    bits = _engine.traced_bits(key, shape, nbits)
    mantissa = lax.shift_right_logical(bits, np.array(nbits - nmant, bits.dtype))
    floats = mantissa.astype(dtype) * np.array(2.0 ** -nmant, dtype)
    return lax.max(minval, floats * (maxval - minval) + minval)


def _normal_real(key, shape, dtype):
    import numpy as np
    from jax import lax
    low = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform_jit(key, low, np.array(1.0, dtype), shape, dtype)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def _normal(key, shape, dtype):
    return _normal_real_jit(key, shape, dtype)


def _convert_and_clip_integer(val, dtype):
    """val converted to the integer dtype, clipped to its range instead of wrapping."""
    import numpy as np
    import jax.numpy as jnp
    low = max(np.iinfo(dtype).min, np.iinfo(val.dtype).min)
    high = min(np.iinfo(dtype).max, np.iinfo(val.dtype).max)
    return jnp.clip(val, np.array(low, val.dtype), np.array(high, val.dtype)).astype(dtype)


def _randint(key, minval, maxval, shape, dtype):
    """JAX's randint: two draws of the dtype's width combined modulo the span, so the bias of a span that is not a
    power of two stays small; a maxval past the dtype's range widens the span by one."""
    import numpy as np
    import jax.numpy as jnp
    from jax import lax
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not jnp.issubdtype(minval.dtype, jnp.integer):
        minval = minval.astype(int)
    if not jnp.issubdtype(maxval.dtype, jnp.integer):
        maxval = maxval.astype(int)
    maxval_out_of_range = lax.gt(
        maxval, _convert_and_clip_integer(jnp.array(np.iinfo(dtype).max, dtype), maxval.dtype))
    minval = lax.broadcast_to_rank(_convert_and_clip_integer(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(_convert_and_clip_integer(maxval, dtype), len(shape))
    nbits = np.iinfo(dtype).bits
    keys = _shardscope.bind('random_split', [key], {'shape': (2,)})[0]
    higher_bits = _engine.traced_bits(keys[0], shape, nbits)
    lower_bits = _engine.traced_bits(keys[1], shape, nbits)
    unsigned = np.dtype(f'uint{nbits}')
    span = lax.convert_element_type(maxval - minval, unsigned)
    span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
    span = lax.select(maxval_out_of_range & (maxval > minval), lax.add(span, np.array(1, unsigned)), span)
    multiplier = lax.rem(np.array(2 ** (nbits // 2), unsigned), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    random_offset = lax.rem(random_offset, span)
    return lax.add(minval, lax.convert_element_type(random_offset, dtype))


_uniform_jit = _jitted(_uniform, (3, 4))
_normal_real_jit = _jitted(_normal_real, (1, 2))
_normal_jit = _jitted(_normal, (1, 2))
_randint_jit = _jitted(_randint, (3, 4))


def _traced_uniform(key, shape, dtype, minval, maxval):
    return _uniform_jit(key, minval, maxval, shape, dtype)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    key = _data(key)
    if _traced(key) or _traced(minval) or _traced(maxval) or _ndim(minval) or _ndim(maxval):
        return _place(_traced_uniform(key, _shape(shape), _float_dtype(dtype, 'uniform'), minval, maxval),
                      out_sharding)
    return _place(_engine.uniform(key, _shape(shape), dtype, float(minval), float(maxval)), out_sharding)


def _int_dtype(dtype):
    """The integer dtype asked for, canonicalized as JAX does: int32 for None, 64-bit types narrowed without x64."""
    import numpy as np
    import jax
    chosen = np.dtype(dtype if dtype is not None else np.int64)
    if chosen.itemsize == 8 and not jax.config.jax_enable_x64:
        chosen = np.dtype(np.int32 if chosen.kind == 'i' else np.uint32)
    return chosen


def _ndim(x):
    import numpy as np
    return np.ndim(x) if not hasattr(x, 'ndim') else x.ndim


def normal(key, shape=(), dtype=None, *, out_sharding=None):
    key = _data(key)
    if _traced(key):
        return _place(_normal_jit(key, _shape(shape), _float_dtype(dtype, 'normal')), out_sharding)
    return _place(_engine.normal(key, _shape(shape), dtype), out_sharding)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    key = _data(key)
    if _traced(key) or _traced(minval) or _traced(maxval) or _ndim(minval) or _ndim(maxval):
        import numpy as np
        import jax.numpy as jnp
        shape = _shape(shape)
        chosen = _int_dtype(dtype)
        if not jnp.issubdtype(chosen, jnp.integer):
            raise TypeError(f'randint only accepts integer dtypes, got {chosen}')
        shape = _check_broadcast_shapes('randint', shape, minval, maxval)
        sampling = chosen
        info = np.iinfo(chosen)
        if info.bits < 32:
            # Sampled in 32 bits, so small types are not biased by their span.
            sampling = np.dtype('int32')
            minval = jnp.asarray(minval).astype('int32').clip(int(info.min), int(info.max))
            maxval = jnp.asarray(maxval).astype('int32').clip(int(info.min), int(info.max) + 1)
        return _place(_randint_jit(key, minval, maxval, shape, sampling).astype(chosen), out_sharding)
    return _place(_engine.randint(key, _shape(shape), int(minval), int(maxval), dtype), out_sharding)


def bernoulli(key, p=0.5, shape=None, mode='low', *, out_sharding=None):
    key = _data(key)
    if mode not in ('low', 'high'):
        raise ValueError(f"got mode={mode}, expected 'high' or 'low'")
    if _traced(key) or _traced(p) or getattr(p, 'ndim', 0) != 0:
        return _place(_bernoulli_from_uniform(key, p, shape, mode), out_sharding)
    shape = () if shape is None else _shape(shape)
    return _place(_engine.bernoulli(key, float(p), shape, mode), out_sharding)


def _bernoulli_from_uniform(key, p, shape, mode):
    """JAX's rule: uniform samples in p's float dtype compared with p; 'high' adds a second draw scaled below the
    first's resolution, for probabilities finer than 2^-mantissa."""
    import jax.numpy as jnp
    p = jnp.asarray(p)
    if not jnp.issubdtype(p.dtype, jnp.floating):
        p = p.astype(jnp.float32)
    shape = _check_broadcast_shapes('bernoulli', shape, p)
    if mode == 'high':
        draws = uniform(key, (2, *shape), p.dtype)
        low, high = draws[0], draws[1]
        high = high * jnp.asarray(2.0 ** -jnp.finfo(p.dtype).nmant, p.dtype)
        return high < p - low
    return uniform(key, shape, p.dtype) < p


def _truncated_normal(key, lower, upper, shape, dtype):
    """JAX's _truncated_normal: erf_inv of uniforms between erf(lower/sqrt2) and erf(upper/sqrt2), then clipped to
    the open interval."""
    import numpy as np
    import jax.numpy as jnp
    from jax import lax
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = uniform(key, shape, dtype, minval=a, maxval=b)
    out = sqrt2 * lax.erf_inv(u)
    return jnp.clip(out, lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype)),
                    lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype)))


_truncated_normal_jit = _jitted(_truncated_normal, (3, 4))


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal values cut to (lower, upper), in `dtype` throughout (JAX's algorithm, so the bits agree): a traced
    key or array bounds run JAX's jitted helper, scalar bounds on a concrete key the engine's kernels."""
    key = _data(key)
    import numpy as np
    import jax.numpy as jnp
    from jax import lax
    dtype = jnp.dtype(dtype if dtype is not None else jnp.float32)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise ValueError(f'dtype argument to `truncated_normal` must be a float dtype, got {dtype}')
    shape = _check_broadcast_shapes('truncated_normal', shape, lower, upper)
    if _traced(key) or _traced(lower) or _traced(upper) or np.ndim(lower) or np.ndim(upper):
        chosen = _float_dtype(dtype, 'truncated_normal')
        return _place(_truncated_normal_jit(key, lower, upper, tuple(shape), chosen), out_sharding)
    sqrt2 = jnp.asarray(np.sqrt(2), dtype)
    low = jnp.asarray(lower, dtype)
    high = jnp.asarray(upper, dtype)
    a = lax.erf(low / sqrt2)
    b = lax.erf(high / sqrt2)
    if _traced(a) or _traced(b):
        # Inside a trace (jit, eval_shape) even constant bounds are traced: the jitted helper it is.
        chosen = _float_dtype(dtype, 'truncated_normal')
        return _place(_truncated_normal_jit(key, lower, upper, tuple(shape), chosen), out_sharding)
    u = uniform(key, shape, dtype, minval=float(a), maxval=float(b))
    out = sqrt2 * lax.erf_inv(u)
    out = jnp.clip(out, lax.nextafter(low, jnp.asarray(np.inf, dtype)), lax.nextafter(high, jnp.asarray(-np.inf, dtype)))
    return _place(out, out_sharding)


from jax._src.random_extras import (permutation, choice, gumbel, categorical, exponential,  # noqa: E402,F401
                                    laplace, logistic)
from jax._src.random_more import (cauchy, rademacher, maxwell, double_sided_maxwell, weibull_min,  # noqa: E402,F401
                                  pareto, rayleigh, wald, geometric, triangular, lognormal, key_dtype, clone)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.random.{name} is not supported by shardscope')
