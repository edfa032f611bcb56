# flax.nnx.LoRA: a low-rank adapter x @ lora_a @ lora_b (plus an optional base module), its factors held in
# LoRAParam variables (the bridge's 'LoRAParam' collection).
import typing as tp

from flax.nnx import variablelib
from flax.nnx.pytreelib import Module
from flax.nnx.nn import initializers
from flax.nnx.nn.dtypes import promote_dtype

default_a_initializer = initializers.he_uniform()
default_b_initializer = initializers.zeros


class LoRAParam(variablelib.Param):
    pass


def _float32():
    import jax.numpy as jnp
    return jnp.float32


class LoRA(Module):
    def __init__(self, in_features, lora_rank, out_features, *, base_module=None, dtype=None, param_dtype=None,
                 a_initializer=default_a_initializer, b_initializer=default_b_initializer,
                 lora_param_type: tp.Type[variablelib.Variable] = LoRAParam, rngs):
        param_dtype = _float32() if param_dtype is None else param_dtype
        self.in_features = in_features
        self.out_features = out_features
        self.dtype = dtype
        self.param_dtype = param_dtype
        self.lora_param_type = lora_param_type
        self.base_module = base_module
        self.lora_a = lora_param_type(a_initializer(rngs.params(), (in_features, lora_rank), param_dtype))
        self.lora_b = lora_param_type(b_initializer(rngs.params(), (lora_rank, out_features), param_dtype))

    def __call__(self, x):
        x, lora_a, lora_b = promote_dtype((x, self.lora_a.get_value(), self.lora_b.get_value()), dtype=self.dtype)
        out = x @ lora_a @ lora_b
        if self.base_module is not None:
            if not callable(self.base_module):
                raise ValueError('`self.base_module` must be callable.')
            out += self.base_module(x)
        return out
