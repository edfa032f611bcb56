# flax.linen.Dense (y = x @ kernel + bias) and Conv (lax.conv_general_dilated, features last, kernel (spatial...,
# in_features / groups, features)), their params drawn from kernel_init and bias_init in that order.
import typing

import numpy as np

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


def canonicalize_padding(padding, rank):
    """Flax's padding forms: a string, one int for every side, or per-dim ints or (low, high) pairs."""
    if isinstance(padding, str):
        return padding
    if isinstance(padding, int):
        return [(padding, padding)] * rank
    if isinstance(padding, (list, tuple)) and len(padding) == rank:
        new_pad = []
        for p in padding:
            if isinstance(p, int):
                new_pad.append((p, p))
            elif isinstance(p, (list, tuple)) and len(p) == 2:
                new_pad.append(tuple(p))
            else:
                break
        if len(new_pad) == rank:
            return new_pad
    raise ValueError(f'Invalid padding format: {padding}, should be str, int, or a sequence of len {rank} where each '
                     'element is an int or pair of ints.')


def conv_dimension_numbers(input_shape):
    """Features last (NHWC-style) for inputs and outputs, kernels (spatial..., in, out)."""
    ndim = len(input_shape)
    lhs_spec = (0, ndim - 1) + tuple(range(1, ndim - 1))
    rhs_spec = (ndim - 1, ndim - 2) + tuple(range(0, ndim - 2))
    out_spec = lhs_spec
    from jax import lax
    return lax.ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)


class Conv(Module):
    features: int
    kernel_size: typing.Any
    strides: typing.Any = 1
    padding: typing.Any = 'SAME'
    input_dilation: typing.Any = 1
    kernel_dilation: typing.Any = 1
    feature_group_count: int = 1
    use_bias: bool = True
    mask: typing.Any = None
    dtype: typing.Any = None
    param_dtype: typing.Any = None
    precision: typing.Any = None
    kernel_init: typing.Callable = default_kernel_init
    bias_init: typing.Callable = initializers.zeros_init()
    conv_general_dilated: typing.Any = None

    @compact
    def __call__(self, inputs):
        import jax.numpy as jnp
        from jax import lax
        if isinstance(self.kernel_size, int):
            raise TypeError('Expected Conv kernel_size to be a tuple/list of integers (eg.: [3, 3]) but got '
                            f'{self.kernel_size}.')
        kernel_size = tuple(self.kernel_size)
        param_dtype = self.param_dtype if self.param_dtype is not None else _float32()

        def maybe_broadcast(x):
            if x is None:
                x = 1
            if isinstance(x, int):
                return (x,) * len(kernel_size)
            return tuple(x)

        inputs = jnp.asarray(inputs)
        num_batch_dimensions = inputs.ndim - (len(kernel_size) + 1)
        if num_batch_dimensions != 1:
            input_batch_shape = inputs.shape[:num_batch_dimensions]
            flat_input_shape = (int(np.prod(input_batch_shape)),) + inputs.shape[num_batch_dimensions:]
            inputs = jnp.reshape(inputs, flat_input_shape)
        strides = maybe_broadcast(self.strides)
        input_dilation = maybe_broadcast(self.input_dilation)
        kernel_dilation = maybe_broadcast(self.kernel_dilation)
        padding_lax = canonicalize_padding(self.padding, len(kernel_size))
        if padding_lax in ('CIRCULAR', 'CAUSAL'):
            raise NotImplementedError(f"flax.linen.Conv padding={padding_lax!r} is not supported by shardscope yet")
        in_features = inputs.shape[-1]
        if in_features % self.feature_group_count != 0:
            raise ValueError(f'Input features {in_features} must be divisible by feature_group_count '
                             f'{self.feature_group_count}.')
        kernel_shape = kernel_size + (in_features // self.feature_group_count, self.features)
        kernel = self.param('kernel', self.kernel_init, kernel_shape, param_dtype)
        if self.mask is not None:
            kernel = kernel * self.mask
        bias = self.param('bias', self.bias_init, (self.features,), param_dtype) if self.use_bias else None
        inputs, kernel, bias = promote_dtype(inputs, kernel, bias, dtype=self.dtype)
        conv = self.conv_general_dilated if self.conv_general_dilated is not None else lax.conv_general_dilated
        y = conv(inputs, kernel, strides, padding_lax, lhs_dilation=input_dilation, rhs_dilation=kernel_dilation,
                 dimension_numbers=conv_dimension_numbers(inputs.shape),
                 feature_group_count=self.feature_group_count, precision=self.precision)
        if bias is not None:
            y = y + jnp.reshape(bias, (1,) * (y.ndim - 1) + (-1,))
        if num_batch_dimensions != 1:
            y = jnp.reshape(y, input_batch_shape + y.shape[1:])
        return y
