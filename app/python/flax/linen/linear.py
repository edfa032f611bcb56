# flax.linen.Dense: y = x @ kernel (+ bias), the kernel of shape (in_features, features) from kernel_init.
import typing

from flax.linen.module import Module, compact
from flax.linen import initializers

default_kernel_init = initializers.lecun_normal()


def _float32():
    import jax.numpy as jnp
    return jnp.float32


class Dense(Module):
    features: int
    use_bias: bool = True
    dtype: typing.Any = None
    param_dtype: typing.Any = None
    precision: typing.Any = None
    kernel_init: typing.Callable = default_kernel_init
    bias_init: typing.Callable = initializers.zeros_init()
    dot_general: typing.Any = None

    @compact
    def __call__(self, inputs):
        import jax.numpy as jnp
        param_dtype = self.param_dtype if self.param_dtype is not None else _float32()
        inputs = jnp.asarray(inputs)
        kernel = self.param('kernel', self.kernel_init, (inputs.shape[-1], self.features), param_dtype)
        bias = self.param('bias', self.bias_init, (self.features,), param_dtype) if self.use_bias else None
        inputs, kernel, bias = promote_dtype(inputs, kernel, bias, dtype=self.dtype)
        if self.dot_general is not None:
            y = self.dot_general(inputs, kernel, (((inputs.ndim - 1,), (0,)), ((), ())), precision=self.precision)
        else:
            # The last input axis against the kernel's first: jnp.dot's contraction for a 2-D kernel.
            y = jnp.dot(inputs, kernel)
        if bias is not None:
            y = y + jnp.reshape(bias, (1,) * (y.ndim - 1) + (-1,))
        return y


def promote_dtype(*args, dtype=None, inexact=True):
    """The arguments as arrays of one dtype (the given one, else their promoted type); None stays None."""
    import numpy as np
    import jax.numpy as jnp
    present = [jnp.asarray(a) for a in args if a is not None]
    if dtype is None:
        dtype = np.result_type(*[a.dtype for a in present]) if present else None
    return [None if a is None else (a if a.dtype == dtype else jnp.asarray(a, dtype)) for a in args]
