# flax.nnx LayerNorm and RMSNorm: scale then bias drawn from rngs.params(), statistics over the feature axes.
from types import MappingProxyType

import jax
import jax.numpy as jnp

from flax.nnx.pytreelib import Module, data
from flax.nnx.variablelib import Param
from flax.nnx.nn import initializers, dtypes


def _axes(axes, ndim):
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    return tuple(a % ndim for a in axes)


def _normalize(x, mean, var, scale, bias, reduction_axes, feature_axes, epsilon):
    feature_axes = _axes(feature_axes, x.ndim)
    stats_shape = [1 if i in _axes(reduction_axes, x.ndim) else d for i, d in enumerate(x.shape)]
    feature_shape = [x.shape[i] if i in feature_axes else 1 for i in range(x.ndim)]
    y = x - jnp.reshape(mean, stats_shape) if mean is not None else x
    mul = jax.lax.rsqrt(jnp.reshape(var, stats_shape) + epsilon)
    if scale is not None:
        mul = mul * jnp.reshape(scale, feature_shape)
    y = y * mul
    if bias is not None:
        y = y + jnp.reshape(bias, feature_shape)
    return y


class LayerNorm(Module):
    def __init__(self, num_features, *, epsilon=1e-6, dtype=None, param_dtype=jnp.float32, use_bias=True,
                 use_scale=True, bias_init=initializers.zeros_init(), scale_init=initializers.ones_init(),
                 reduction_axes=-1, feature_axes=-1, axis_name=None, axis_index_groups=None, use_fast_variance=True,
                 promote_dtype=dtypes.promote_dtype, rngs, bias_metadata=MappingProxyType({}),
                 scale_metadata=MappingProxyType({})):
        feature_shape = (num_features,)
        if use_scale:
            self.scale = Param(scale_init(rngs.params(), feature_shape, param_dtype), **scale_metadata)
        else:
            self.scale = data(None)
        if use_bias:
            self.bias = Param(bias_init(rngs.params(), feature_shape, param_dtype), **bias_metadata)
        else:
            self.bias = data(None)
        self.num_features = num_features
        self.epsilon = epsilon
        self.dtype = dtype
        self.param_dtype = param_dtype
        self.use_bias = use_bias
        self.use_scale = use_scale
        self.reduction_axes = reduction_axes
        self.feature_axes = feature_axes
        self.axis_name = axis_name
        self.axis_index_groups = axis_index_groups
        self.use_fast_variance = use_fast_variance
        self.promote_dtype = promote_dtype

    def __call__(self, x, *, mask=None):
        scale = self.scale[...] if self.scale is not None else None
        bias = self.bias[...] if self.bias is not None else None
        x, scale, bias = self.promote_dtype((x, scale, bias), dtype=self.dtype)
        axes = _axes(self.reduction_axes, x.ndim)
        mean = jnp.mean(x, axis=axes)
        if self.use_fast_variance:
            var = jnp.maximum(0.0, jnp.mean(x * x, axis=axes) - mean * mean)
        else:
            var = jnp.var(x, axis=axes)
        return _normalize(x, mean, var, scale, bias, self.reduction_axes, self.feature_axes, self.epsilon)


class RMSNorm(Module):
    def __init__(self, num_features, *, epsilon=1e-6, dtype=None, param_dtype=jnp.float32, use_scale=True,
                 scale_init=initializers.ones_init(), reduction_axes=-1, feature_axes=-1, axis_name=None,
                 axis_index_groups=None, use_fast_variance=True, promote_dtype=dtypes.promote_dtype, rngs,
                 scale_metadata=MappingProxyType({})):
        if use_scale:
            self.scale = Param(scale_init(rngs.params(), (num_features,), param_dtype), **scale_metadata)
        else:
            self.scale = data(None)
        self.num_features = num_features
        self.epsilon = epsilon
        self.dtype = dtype
        self.param_dtype = param_dtype
        self.use_scale = use_scale
        self.reduction_axes = reduction_axes
        self.feature_axes = feature_axes
        self.axis_name = axis_name
        self.axis_index_groups = axis_index_groups
        self.use_fast_variance = use_fast_variance
        self.promote_dtype = promote_dtype

    def __call__(self, x, mask=None):
        scale = self.scale[...] if self.scale is not None else None
        x, scale = self.promote_dtype((x, scale), dtype=self.dtype)
        var = jnp.mean(x * x, axis=_axes(self.reduction_axes, x.ndim))
        return _normalize(x, None, var, scale, None, self.reduction_axes, self.feature_axes, self.epsilon)
