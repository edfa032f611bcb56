# flax.nnx.initializers: jax.nn.initializers plus Flax's zeros_init()/ones_init() factories.
from jax.nn.initializers import (zeros, ones, constant, normal, uniform, truncated_normal,  # noqa: F401
                                 variance_scaling, glorot_normal, glorot_uniform, lecun_normal, lecun_uniform,
                                 he_normal, he_uniform, xavier_normal, xavier_uniform, kaiming_normal,
                                 kaiming_uniform)


def zeros_init():
    return zeros


def ones_init():
    return ones
