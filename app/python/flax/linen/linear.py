# flax.linen's linear layers: Dense (y = x @ kernel + bias), DenseGeneral (contraction over chosen axes), Einsum,
# Conv and ConvTranspose (features last), Embed (a lookup table), plus activation.py's PReLU; params are drawn in
# Flax's order (kernel, then bias), which decides the key each gets.
import collections.abc
import typing

import numpy as np
import jax.numpy as jnp
from jax import lax

from flax.linen.module import Module, compact, merge_param
from flax.linen import initializers
from flax.core import meta

default_kernel_init = initializers.lecun_normal()


def _float32():
    import jax.numpy as jnp
    return jnp.float32


def canonicalize_dtype(*args, dtype=None, inexact=True):
    """The dtype `args` are computed in: `dtype` when given, else JAX's result type of the non-None args (made
    floating when `inexact` and they are integers or bools)."""
    if dtype is None:
        dtype = jnp.result_type(*[jnp.asarray(a) for a in args if a is not None])
        if inexact and not jnp.issubdtype(dtype, jnp.inexact):
            dtype = jnp.promote_types(jnp.float32, dtype)
    if inexact and not jnp.issubdtype(dtype, jnp.inexact):
        raise ValueError(f'Dtype must be inexact: {dtype}')
    return dtype


def promote_dtype(*args, dtype=None, inexact=True):
    """The arguments as arrays of one dtype (canonicalize_dtype's); None stays None."""
    dtype = canonicalize_dtype(*args, dtype=dtype, inexact=inexact)
    return [None if a is None else jnp.asarray(a, dtype) for a in args]


class Dense(Module):
    features: int
    use_bias: bool = True
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
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


def per_window_dim(value, rank):
    """A stride or dilation given as None, one int or a sequence: one entry per window dimension."""
    if value is None:
        value = 1
    if isinstance(value, int):
        return (value,) * rank
    return tuple(value)


def fold_batch_dims(inputs, rank):
    """The inputs with their batch axes folded into one (or one added) for a convolution of `rank` window
    dimensions, and the batch shape to restore afterwards (None when there was exactly one batch axis)."""
    num_batch_dimensions = inputs.ndim - (rank + 1)
    if num_batch_dimensions == 1:
        return inputs, None
    batch_shape = inputs.shape[:num_batch_dimensions]
    return jnp.reshape(inputs, (int(np.prod(batch_shape)),) + inputs.shape[num_batch_dimensions:]), batch_shape


def unfold_batch_dims(y, batch_shape):
    """fold_batch_dims undone on a convolution's output."""
    return y if batch_shape is None else jnp.reshape(y, batch_shape + y.shape[1:])


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
    param_dtype: typing.Any = jnp.float32
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

        inputs, batch_shape = fold_batch_dims(jnp.asarray(inputs), len(kernel_size))
        strides = per_window_dim(self.strides, len(kernel_size))
        input_dilation = per_window_dim(self.input_dilation, len(kernel_size))
        kernel_dilation = per_window_dim(self.kernel_dilation, len(kernel_size))
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
        y = unfold_batch_dims(y, batch_shape)
        return y


def _as_tuple(x):
    return tuple(x) if isinstance(x, collections.abc.Iterable) else (x,)


def _positive_axes(axes, ndim):
    return tuple(sorted(ax if ax >= 0 else ndim + ax for ax in axes))


def _reshaped_init(init, n_leading, n_trailing):
    """`init` drawn for a 2-D (or, for a bias, 1-D) flattening of the shape asked for, then reshaped: the fan-in
    and fan-out that variance-scaling initializers see are the products of the contracted and feature axes, as in
    Flax. n_leading axes (batch, then contracted) form the first flat axis, the last n_trailing the second."""

    def draw(rng, shape, dtype=jnp.float32):
        shape = tuple(shape)
        if n_leading is None:
            flat = (int(np.prod(shape)),)
        else:
            flat = (int(np.prod(shape[:n_leading])), int(np.prod(shape[-n_trailing:])))
        value = init(rng, flat, dtype)
        if meta.is_axis_metadata(value):
            # A boxed initializer (with_partitioning) keeps its box around the reshaped array.
            return value.replace_boxed(jnp.reshape(value.unbox(), shape))
        return jnp.reshape(value, shape)
    return draw


class DenseGeneral(Module):
    features: typing.Any
    axis: typing.Any = -1
    batch_dims: typing.Sequence[int] = ()
    use_bias: bool = True
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    kernel_init: typing.Callable = default_kernel_init
    bias_init: typing.Callable = initializers.zeros_init()
    precision: typing.Any = None
    promote_dtype: typing.Callable = promote_dtype
    dot_general: typing.Any = None
    dot_general_cls: typing.Any = None

    @compact
    def __call__(self, inputs):
        inputs = jnp.asarray(inputs)
        features = _as_tuple(self.features)
        axis = _as_tuple(self.axis)
        batch_dims = _as_tuple(self.batch_dims)
        if batch_dims:
            if set(batch_dims) != set(range(max(batch_dims) + 1)):
                raise ValueError('batch_dims %s must be consecutive leading dimensions starting from 0.'
                                 % str(batch_dims))
        ndim = inputs.ndim
        n_batch = len(batch_dims)
        axis = _positive_axes(axis, ndim)
        batch_dims = _positive_axes(batch_dims, ndim)
        n_axis, n_features = len(axis), len(features)
        batch_shape = tuple(inputs.shape[ax] for ax in batch_dims)
        # The bias broadcasts over the output's free input axes, and matches it on the batch axes.
        expanded_batch_shape = tuple(inputs.shape[ax] if ax in batch_dims else 1 for ax in range(ndim)
                                     if ax not in axis)
        kernel_shape = batch_shape + tuple(inputs.shape[ax] for ax in axis) + features
        kernel = self.param('kernel', _reshaped_init(self.kernel_init, n_batch + n_axis, n_features), kernel_shape,
                            self.param_dtype)
        bias = None
        if self.use_bias:
            # Flattened to one axis: batch and feature sizes multiplied.
            bias = self.param('bias', _reshaped_init(self.bias_init, None, 0), batch_shape + features, self.param_dtype)
        inputs, kernel, bias = self.promote_dtype(inputs, kernel, bias, dtype=self.dtype)
        if self.dot_general_cls is not None:
            dot_general = self.dot_general_cls()
        elif self.dot_general is not None:
            dot_general = self.dot_general
        else:
            dot_general = lax.dot_general
        contract_ind = tuple(range(n_batch, n_batch + n_axis))
        out = dot_general(inputs, kernel, ((axis, contract_ind), (batch_dims, tuple(range(n_batch)))),
                          precision=self.precision)
        if bias is not None:
            out = out + jnp.reshape(bias, expanded_batch_shape + features)
        return out


def _einsum_with_letters(equation, lhs_ndim, rhs_ndim):
    """(operand subscripts, result subscripts) with every '...' spelled out in letters the equation leaves unused,
    as opt_einsum's parser does: each operand's ellipsis takes the last letters of one shared pool, the result's
    as many as the longest."""
    inputs, result = equation.split('->')
    operands = inputs.split(',')
    used = set(equation)
    pool = [c for c in 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ' if c not in used]
    longest = 0
    spelled = []
    for sub, ndim in zip(operands, (lhs_ndim, rhs_ndim)):
        if '...' in sub:
            count = max(ndim, 1) - (len(sub) - 3)
            longest = max(longest, count)
            letters = ''.join(pool[len(pool) - count:]) if count > 0 else ''
            sub = sub.replace('...', letters)
        spelled.append(sub)
    if '...' in result:
        result = result.replace('...', ''.join(pool[len(pool) - longest:]) if longest else '')
    return spelled, result


class Einsum(Module):
    shape: typing.Any
    einsum_str: typing.Optional[str] = None
    use_bias: bool = True
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    precision: typing.Any = None
    kernel_init: typing.Callable = default_kernel_init
    bias_init: typing.Callable = initializers.zeros_init()
    promote_dtype: typing.Callable = promote_dtype
    preferred_element_type: typing.Any = None

    @compact
    def __call__(self, inputs, einsum_str=None):
        einsum_str = merge_param('einsum_str', self.einsum_str, einsum_str).replace(' ', '')
        if '->' not in einsum_str:
            raise ValueError('`einsum_str` equation must be explicit and include "->".')
        if einsum_str.count(',') != 1:
            raise ValueError('`einsum_str` equation must have exactly two operands and therefore, exactly one comma '
                             f'character, instead of {einsum_str.count(",")}')
        inputs = jnp.asarray(inputs)
        kernel = self.param('kernel', self.kernel_init, self.shape, self.param_dtype)
        bias = None
        if self.use_bias:
            bias_shape, broadcast_shape = self._bias_shapes(einsum_str, inputs, kernel)
            bias = self.param('bias', self.bias_init, bias_shape, self.param_dtype)
        inputs, kernel, bias = self.promote_dtype(inputs, kernel, bias, dtype=self.dtype)
        extra = {} if self.preferred_element_type is None else {'preferred_element_type': self.preferred_element_type}
        y = jnp.einsum(einsum_str, inputs, kernel, precision=self.precision, **extra)
        if bias is not None:
            y = y + jnp.reshape(bias, broadcast_shape)
        return y

    def _bias_shapes(self, einsum_str, lhs, rhs):
        # The bias covers the result axes that come from the kernel (its feature axes), in the result's order.
        (_, rhs_sub), result = _einsum_with_letters(einsum_str, lhs.ndim, rhs.ndim)
        rhs_axes = {c: i for i, c in enumerate(rhs_sub)}
        assert len(rhs_axes) == len(self.shape)
        broadcast_shape = [1] * len(result)
        bias_shape = []
        for i, c in enumerate(result):
            if c in rhs_axes:
                broadcast_shape[i] = self.shape[rhs_axes[c]]
                bias_shape.append(self.shape[rhs_axes[c]])
        return bias_shape, broadcast_shape


def _conv_transpose_padding(k, s, padding):
    """(before, after) padding of a transposed convolution's dilated input, for one spatial dim of kernel size k
    and stride s, given the forward convolution's padding mode (lax.conv_transpose's rule)."""
    if padding == 'SAME':
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == 'VALID':
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    else:
        raise ValueError(f'Invalid padding mode: {padding}')
    return pad_a, pad_len - pad_a


def _conv_transpose(lhs, rhs, strides, padding, rhs_dilation, transpose_kernel, precision):
    """lax.conv_transpose with its default (features-last) layout: a convolution of the input dilated by the
    strides, with the kernel optionally flipped and its in/out axes swapped."""
    import jax.numpy as jnp
    ndims = lhs.ndim
    if ndims < 2 or ndims > 5:
        raise ValueError('No 4+ dimensional dimension_number defaults.')
    spatial = 'HWD'[:ndims - 2]
    dimension_numbers = ('N' + spatial + 'C', spatial + 'IO', 'N' + spatial + 'C')
    kernel_spatial = rhs.shape[:ndims - 2]
    if isinstance(padding, str) and padding in ('SAME', 'VALID'):
        dilated = [0 if k == 0 else 1 + r * (k - 1) for k, r in zip(kernel_spatial, rhs_dilation)]
        pads = [_conv_transpose_padding(k, s, padding) for k, s in zip(dilated, strides)]
    else:
        # Explicit pairs pad the dilated input directly.
        pads = [tuple(p) for p in padding]
    if transpose_kernel:
        rhs = jnp.flip(rhs, axis=tuple(range(ndims - 2)))
        rhs = jnp.swapaxes(rhs, ndims - 2, ndims - 1)
    return lax.conv_general_dilated(lhs, rhs, (1,) * (ndims - 2), pads, lhs_dilation=tuple(strides),
                                    rhs_dilation=tuple(rhs_dilation), dimension_numbers=dimension_numbers,
                                    precision=precision)


class ConvTranspose(Module):
    features: int
    kernel_size: typing.Any
    strides: typing.Any = None
    padding: typing.Any = 'SAME'
    kernel_dilation: typing.Any = None
    use_bias: bool = True
    mask: typing.Any = None
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    precision: typing.Any = None
    kernel_init: typing.Callable = default_kernel_init
    bias_init: typing.Callable = initializers.zeros_init()
    transpose_kernel: bool = False
    promote_dtype: typing.Callable = promote_dtype
    preferred_element_type: typing.Any = None

    @compact
    def __call__(self, inputs):
        kernel_size = (self.kernel_size,) if isinstance(self.kernel_size, int) else tuple(self.kernel_size)

        inputs, batch_shape = fold_batch_dims(jnp.asarray(inputs), len(kernel_size))
        strides = per_window_dim(self.strides, len(kernel_size))
        kernel_dilation = per_window_dim(self.kernel_dilation, len(kernel_size))
        in_features = inputs.shape[-1]
        if self.transpose_kernel:
            kernel_shape = kernel_size + (self.features, in_features)
        else:
            kernel_shape = kernel_size + (in_features, self.features)
        if self.mask is not None and tuple(self.mask.shape) != kernel_shape:
            raise ValueError('Mask needs to have the same shape as weights. '
                             f'Shapes are: {self.mask.shape}, {kernel_shape}')
        kernel = self.param('kernel', self.kernel_init, kernel_shape, self.param_dtype)
        if self.mask is not None:
            kernel = kernel * self.mask
        padding_lax = canonicalize_padding(self.padding, len(kernel_size))
        if padding_lax == 'CIRCULAR':
            # Computed as VALID, then the overhang is wrapped around below.
            padding_lax = 'VALID'
        bias = self.param('bias', self.bias_init, (self.features,), self.param_dtype) if self.use_bias else None
        inputs, kernel, bias = self.promote_dtype(inputs, kernel, bias, dtype=self.dtype)
        if self.preferred_element_type is not None:
            raise NotImplementedError('flax.linen.ConvTranspose preferred_element_type is not supported by '
                                      'shardscope')
        y = _conv_transpose(inputs, kernel, strides, padding_lax, kernel_dilation, self.transpose_kernel,
                            self.precision)
        if self.padding == 'CIRCULAR':
            scaled_x_dims = [x_dim * stride for x_dim, stride in zip(inputs.shape[1:-1], strides)]
            size_diffs = [-(y_dim - x_dim) % (2 * x_dim) for y_dim, x_dim in zip(y.shape[1:-1], scaled_x_dims)]
            if self.transpose_kernel:
                total_pad = [(d // 2, (d + 1) // 2) for d in size_diffs]
            else:
                total_pad = [((d + 1) // 2, d // 2) for d in size_diffs]
            y = jnp.pad(y, [(0, 0)] + total_pad + [(0, 0)])
            # Each spatial axis, now a whole number of periods long, is folded onto one period and summed.
            for i in range(1, y.ndim - 1):
                y = jnp.reshape(y, y.shape[:i] + (-1, scaled_x_dims[i - 1]) + y.shape[i + 1:])
                y = y.sum(axis=i)
        if bias is not None:
            y = y + jnp.reshape(bias, (1,) * (y.ndim - 1) + (-1,))
        y = unfold_batch_dims(y, batch_shape)
        return y


# Unit-variance rows: fan-in is the feature count (out_axis=0 puts the vocabulary on the 'out' side).
default_embed_init = initializers.variance_scaling(1.0, 'fan_in', 'normal', out_axis=0)


class Embed(Module):
    num_embeddings: int
    features: int
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    embedding_init: typing.Callable = default_embed_init
    promote_dtype: typing.Callable = promote_dtype

    def setup(self):
        # Made in setup, as Flax does, so attend() alone also creates it.
        self.embedding = self.param('embedding', self.embedding_init, (self.num_embeddings, self.features),
                                    self.param_dtype)

    def __call__(self, inputs):
        inputs = jnp.asarray(inputs)
        if not jnp.issubdtype(inputs.dtype, jnp.integer):
            raise ValueError('Input type must be an integer or unsigned integer.')
        (embedding,) = self.promote_dtype(self.embedding, dtype=self.dtype, inexact=False)
        if self.num_embeddings == 1:
            return jnp.broadcast_to(embedding, inputs.shape + (self.features,))
        # jnp.take's default mode: negative indices count from the end, ones past it give NaN rows.
        return jnp.take(embedding, inputs, axis=0)

    def attend(self, query):
        """Inner products of `query` (last axis `features` long) with every embedding: logits over the
        vocabulary, for weight-tied output layers."""
        query, embedding = self.promote_dtype(query, self.embedding, dtype=self.dtype)
        return jnp.dot(query, embedding.T)


class PReLU(Module):
    """Flax's PReLU (it sits in Flax's activation.py): a leaky ReLU whose negative slope is a learned scalar."""
    param_dtype: typing.Any = jnp.float32
    negative_slope_init: float = 0.01

    @compact
    def __call__(self, inputs):
        inputs = jnp.asarray(inputs)
        negative_slope = self.param('negative_slope',
                                    lambda rng: jnp.asarray(self.negative_slope_init, self.param_dtype))
        return jnp.where(inputs >= 0, inputs, jnp.asarray(negative_slope, inputs.dtype) * inputs)
