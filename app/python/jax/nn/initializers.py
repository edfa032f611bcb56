# jax.nn.initializers: parameter initializers drawing from jax.random, so values follow the engine's threefry.
import math

import numpy as np


def _dtype(dtype):
    import jax.numpy as jnp
    return jnp.dtype(jnp.float32 if dtype is None else dtype)


def zeros(key, shape, dtype=None, out_sharding=None):
    import jax.numpy as jnp
    return jnp.zeros(tuple(shape), _dtype(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
    import jax.numpy as jnp
    return jnp.ones(tuple(shape), _dtype(dtype), out_sharding=out_sharding)


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        import jax.numpy as jnp
        return jnp.full(tuple(shape), value, _dtype(dtype), out_sharding=out_sharding)
    return init


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        import jax.numpy as jnp
        from jax import random
        dtype = _dtype(dtype)
        return random.normal(key, tuple(shape), dtype, out_sharding=out_sharding) * jnp.array(stddev, dtype)
    return init


def uniform(scale=1e-2, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        import jax.numpy as jnp
        from jax import random
        dtype = _dtype(dtype)
        return random.uniform(key, tuple(shape), dtype, out_sharding=out_sharding) * jnp.array(scale, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    def init(key, shape, dtype=dtype, out_sharding=None):
        import jax.numpy as jnp
        from jax import random
        dtype = _dtype(dtype)
        return (random.truncated_normal(key, lower, upper, tuple(shape), dtype, out_sharding=out_sharding)
                * jnp.array(stddev, dtype))
    return init


def _size(shape, axes):
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with "
                         'default in_axis. Must be at least 2D or specify in_axis explicitly.')
    in_size, out_size, batch_size = _size(shape, in_axis), _size(shape, out_axis), _size(shape, batch_axis)
    receptive_field = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field, out_size * receptive_field


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        import jax.numpy as jnp
        from jax import random
        shape = tuple(int(d) for d in shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominators = {'fan_in': fan_in, 'fan_out': fan_out, 'fan_avg': (fan_in + fan_out) / 2,
                        'fan_geo_avg': (fan_in * fan_out) ** 0.5}
        if mode not in denominators:
            raise ValueError(f'invalid mode for variance scaling initializer: {mode}')
        variance = jnp.array(scale / denominators[mode], dtype=dtype)
        if distribution == 'truncated_normal':
            # 0.8796... is the standard deviation of a standard normal truncated to (-2, 2).
            stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype, out_sharding=out_sharding) * stddev
        if distribution == 'normal':
            return random.normal(key, shape, dtype, out_sharding=out_sharding) * jnp.sqrt(variance)
        if distribution == 'uniform':
            return random.uniform(key, shape, dtype, -1, out_sharding=out_sharding) * jnp.sqrt(3 * variance)
        raise ValueError(f'invalid distribution for variance scaling initializer: {distribution}')
    return init


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_avg', 'truncated_normal', in_axis, out_axis, batch_axis, dtype)


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_avg', 'uniform', in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_in', 'truncated_normal', in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_in', 'uniform', in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, 'fan_in', 'truncated_normal', in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, 'fan_in', 'uniform', in_axis, out_axis, batch_axis, dtype)


xavier_normal, xavier_uniform = glorot_normal, glorot_uniform
kaiming_normal, kaiming_uniform = he_normal, he_uniform
del np
