# flax.nnx Linear, Embed and Conv: parameters drawn from rngs.params() in Flax's order (kernel, then bias).
from types import MappingProxyType

import jax
import jax.numpy as jnp
from jax import lax

from flax import _versions
from flax.nnx.pytreelib import Module, data
from flax.nnx.variablelib import Param
from flax.nnx.nn import initializers, dtypes

default_kernel_init = initializers.lecun_normal()
default_bias_init = initializers.zeros_init()
default_embed_init = initializers.variance_scaling(1.0, 'fan_in', 'normal', out_axis=0)


class Linear(Module):
    def __init__(self, in_features, out_features, *, use_bias=True, dtype=None, param_dtype=jnp.float32,
                 precision=None, kernel_init=default_kernel_init, bias_init=default_bias_init,
                 dot_general=lax.dot_general, promote_dtype=dtypes.promote_dtype, preferred_element_type=None,
                 rngs, kernel_metadata=MappingProxyType({}), bias_metadata=MappingProxyType({})):
        kernel_key = rngs.params()
        self.kernel = Param(kernel_init(kernel_key, (in_features, out_features), param_dtype), **kernel_metadata)
        if use_bias:
            bias_key = rngs.params()
            self.bias = Param(bias_init(bias_key, (out_features,), param_dtype), **bias_metadata)
        else:
            self.bias = data(None)
        self.in_features = in_features
        self.out_features = out_features
        self.use_bias = use_bias
        self.dtype = dtype
        self.param_dtype = param_dtype
        self.precision = precision
        # The attributes a Linear keeps (and prints) changed with Flax releases.
        if _versions.flax_version() < (0, 12, 2):
            self.kernel_init = kernel_init
            self.bias_init = bias_init
        self.dot_general = dot_general
        if _versions.flax_version() >= (0, 10, 5):
            self.promote_dtype = promote_dtype
        if _versions.flax_version() >= (0, 12, 0):
            self.preferred_element_type = preferred_element_type

    def __call__(self, inputs, out_sharding=None):
        kernel = self.kernel[...]
        bias = self.bias[...] if self.bias is not None else None
        promote = getattr(self, 'promote_dtype', dtypes.promote_dtype)
        inputs, kernel, bias = promote((inputs, kernel, bias), dtype=self.dtype)
        kwargs = {}
        if out_sharding is not None:
            kwargs['out_sharding'] = out_sharding
        if getattr(self, 'preferred_element_type', None) is not None:
            kwargs['preferred_element_type'] = self.preferred_element_type
        y = self.dot_general(inputs, kernel, (((inputs.ndim - 1,), (0,)), ((), ())), precision=self.precision,
                             **kwargs)
        if bias is not None:
            y += jnp.reshape(bias, (1,) * (y.ndim - 1) + (-1,))
        return y


class Embed(Module):
    def __init__(self, num_embeddings, features, *, dtype=None, param_dtype=jnp.float32,
                 embedding_init=default_embed_init, promote_dtype=dtypes.promote_dtype, rngs,
                 embedding_metadata=MappingProxyType({})):
        self.embedding = Param(embedding_init(rngs.params(), (num_embeddings, features), param_dtype),
                               **embedding_metadata)
        self.num_embeddings = num_embeddings
        self.features = features
        self.dtype = dtype or self.embedding.dtype
        self.param_dtype = param_dtype
        self.promote_dtype = promote_dtype

    def __call__(self, inputs):
        if not jnp.issubdtype(inputs.dtype, jnp.integer):
            raise ValueError('Input type must be an integer or unsigned integer.')
        (embedding,) = self.promote_dtype((self.embedding[...],), dtype=self.dtype, inexact=False)
        if self.num_embeddings == 1:
            return jnp.broadcast_to(embedding, inputs.shape + (self.features,))
        return jnp.take(embedding, inputs, axis=0)

    def attend(self, query):
        query, embedding = self.promote_dtype((query, self.embedding[...]), dtype=self.dtype)
        return jnp.dot(query, embedding.T)


del jax


class Conv(Module):
    """nnx.Conv: features-last convolution; the kernel (spatial..., in_features / groups, out_features) is drawn
    first, then the bias."""

    def __init__(self, in_features, out_features, kernel_size, strides=1, *, padding='SAME', input_dilation=1,
                 kernel_dilation=1, feature_group_count=1, use_bias=True, mask=None, dtype=None,
                 param_dtype=jnp.float32, precision=None, kernel_init=default_kernel_init,
                 bias_init=default_bias_init, conv_general_dilated=lax.conv_general_dilated,
                 promote_dtype=dtypes.promote_dtype, preferred_element_type=None, rngs,
                 kernel_metadata=MappingProxyType({}), bias_metadata=MappingProxyType({})):
        if isinstance(kernel_size, int):
            kernel_size = (kernel_size,)
        else:
            kernel_size = tuple(kernel_size)
        kernel_shape = kernel_size + (in_features // feature_group_count, out_features)
        self.kernel_shape = kernel_shape
        self.kernel = Param(kernel_init(rngs.params(), kernel_shape, param_dtype), **kernel_metadata)
        if use_bias:
            self.bias = Param(bias_init(rngs.params(), (out_features,), param_dtype), **bias_metadata)
        else:
            self.bias = data(None)
        self.in_features = in_features
        self.out_features = out_features
        self.kernel_size = kernel_size
        self.strides = strides
        self.padding = padding
        self.input_dilation = input_dilation
        self.kernel_dilation = kernel_dilation
        self.feature_group_count = feature_group_count
        self.use_bias = use_bias
        self.mask = mask
        self.dtype = dtype
        self.param_dtype = param_dtype
        self.precision = precision
        self.conv_general_dilated = conv_general_dilated
        self.promote_dtype = promote_dtype
        self.preferred_element_type = preferred_element_type

    def __call__(self, inputs):
        from flax.linen.linear import (canonicalize_padding, conv_dimension_numbers, fold_batch_dims,
                                       per_window_dim, unfold_batch_dims)
        rank = len(self.kernel_size)
        inputs, batch_shape = fold_batch_dims(inputs, rank)
        padding_lax = canonicalize_padding(self.padding, len(self.kernel_size))
        if padding_lax in ('CIRCULAR', 'CAUSAL'):
            raise NotImplementedError(f"flax.nnx.Conv padding={padding_lax!r} is not supported by shardscope yet")
        kernel = self.kernel[...]
        if self.mask is not None:
            kernel = kernel * self.mask
        bias = self.bias[...] if self.bias is not None else None
        inputs, kernel, bias = self.promote_dtype((inputs, kernel, bias), dtype=self.dtype)
        kwargs = {}
        if self.preferred_element_type is not None:
            kwargs['preferred_element_type'] = self.preferred_element_type
        y = self.conv_general_dilated(inputs, kernel, per_window_dim(self.strides, rank), padding_lax,
                                      lhs_dilation=per_window_dim(self.input_dilation, rank),
                                      rhs_dilation=per_window_dim(self.kernel_dilation, rank),
                                      dimension_numbers=conv_dimension_numbers(inputs.shape),
                                      feature_group_count=self.feature_group_count, precision=self.precision,
                                      **kwargs)
        if bias is not None:
            y += jnp.reshape(bias, (1,) * (y.ndim - 1) + (-1,))
        y = unfold_batch_dims(y, batch_shape)
        return y
