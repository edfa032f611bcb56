# flax.nnx.Dropout: keeps each input with probability 1 - rate (scaled by 1/(1 - rate)), from its own forked stream.
import jax.numpy as jnp
from jax import lax, random

from flax.nnx.pytreelib import Module, data
from flax.nnx import rnglib


class Dropout(Module):
    def __init__(self, rate, *, broadcast_dims=(), deterministic=False, rng_collection='dropout', rngs=None):
        self.rate = rate
        self.broadcast_dims = broadcast_dims
        self.deterministic = deterministic
        self.rng_collection = rng_collection
        if isinstance(rngs, rnglib.Rngs):
            self.rngs = rngs[self.rng_collection].fork()
        elif isinstance(rngs, rnglib.RngStream):
            self.rngs = rngs.fork()
        elif rngs is None:
            self.rngs = data(None)
        else:
            raise TypeError(f'rngs must be a Rngs, RngStream or None, but got {type(rngs)}.')

    def __call__(self, inputs, *, deterministic=None, rngs=None):
        deterministic = deterministic if deterministic is not None else self.deterministic
        if deterministic is None:
            raise ValueError('No `deterministic` argument was provided to Dropout.')
        if self.rate == 0.0 or deterministic:
            return inputs
        if self.rate == 1.0:
            return jnp.zeros_like(inputs)
        rngs = rngs if rngs is not None else self.rngs
        if rngs is None:
            raise ValueError('`deterministic` is False, but no `rngs` argument was provided to Dropout\n'
                             '          as either a __call__ argument or class attribute.')
        if isinstance(rngs, rnglib.Rngs):
            key = rngs[self.rng_collection]()
        elif isinstance(rngs, rnglib.RngStream):
            key = rngs()
        else:
            key = rngs
        keep_prob = 1.0 - self.rate
        shape = list(inputs.shape)
        for dim in self.broadcast_dims:
            shape[dim] = 1
        mask = random.bernoulli(key, p=keep_prob, shape=shape)
        mask = jnp.broadcast_to(mask, inputs.shape)
        return lax.select(mask, inputs / keep_prob, jnp.zeros_like(inputs))
