# flax.linen's normalization layers (BatchNorm, LayerNorm, RMSNorm, GroupNorm, InstanceNorm): statistics in at
# least float32, then scale and bias params created in that order, with Flax's names, shapes and dtypes.
import collections.abc
import typing

import jax.numpy as jnp
from jax import lax

from flax.linen.module import Module, compact, merge_param
from flax.linen import initializers
from flax.linen.linear import canonicalize_dtype


def _canonicalize_axes(rank, axes):
    """Sorted, deduplicated, non-negative axes (Flax relies on the order: GroupNorm checks the last one)."""
    if not isinstance(axes, collections.abc.Iterable):
        axes = (axes,)
    return tuple(sorted({rank + axis if axis < 0 else axis for axis in axes}))


def _abs_sq(x):
    """|x|^2, kept real for complex inputs."""
    if jnp.iscomplexobj(x):
        return lax.square(lax.real(x)) + lax.square(lax.imag(x))
    return lax.square(x)


def _mean(x, axes, mask):
    if mask is None:
        return x.mean(axes)
    # jnp.mean(where=mask) as JAX computes it: the masked sum over the count of kept elements.
    mask = jnp.asarray(mask, dtype=bool)
    count = jnp.sum(jnp.broadcast_to(mask, x.shape), axis=axes, dtype=x.dtype)
    return jnp.sum(x, axis=axes, where=mask) / count


def _compute_stats(x, axes, dtype, axis_name=None, axis_index_groups=None, use_mean=True, use_fast_variance=True,
                   mask=None, force_float32_reductions=True):
    """(mean, var) of x over `axes`, computed in at least float32 (so half-precision inputs stay stable), averaged
    over the devices of `axis_name` with one pmean, the variance clipped at 0 against rounding."""
    if dtype is None:
        dtype = jnp.result_type(x)
    if force_float32_reductions:
        dtype = jnp.promote_types(dtype, jnp.float32)
    x = jnp.asarray(x, dtype)
    axes = _canonicalize_axes(x.ndim, axes)

    def distributed_mean(*xs):
        mus = tuple(_mean(v, axes, mask) for v in xs)
        if axis_name is None:
            return mus if len(xs) > 1 else mus[0]
        if len(xs) == 1:
            return lax.pmean(mus[0], axis_name, axis_index_groups=axis_index_groups)
        # Both moments in one collective, stacked.
        reduced = lax.pmean(jnp.stack(mus, axis=0), axis_name, axis_index_groups=axis_index_groups)
        return tuple(reduced[i] for i in range(len(xs)))

    if use_mean:
        if use_fast_variance:
            # Var = E[|x|^2] - |E[x]|^2: one pass over x.
            mu, mu2 = distributed_mean(x, _abs_sq(x))
            var = jnp.maximum(0.0, mu2 - _abs_sq(mu))
        else:
            mu = distributed_mean(x)
            var = distributed_mean(_abs_sq(x - jnp.expand_dims(mu, axes)))
    else:
        var = distributed_mean(_abs_sq(x))
        mu = jnp.zeros_like(var)
    return mu, var


def _normalize(mdl, x, mean, var, reduction_axes, feature_axes, dtype, param_dtype, epsilon, use_bias, use_scale,
               bias_init, scale_init, force_float32_reductions=True):
    """(x - mean) * rsqrt(var + epsilon) * scale + bias; 'scale' is created before 'bias' (the order decides
    their keys), both shaped like the feature axes. The result's dtype is `dtype`, else that of x and the params
    (the float32 statistics do not widen it)."""
    reduction_axes = _canonicalize_axes(x.ndim, reduction_axes)
    feature_axes = _canonicalize_axes(x.ndim, feature_axes)
    feature_shape = [1] * x.ndim
    reduced_feature_shape = []
    for ax in feature_axes:
        feature_shape[ax] = x.shape[ax]
        reduced_feature_shape.append(x.shape[ax])
    mean = jnp.expand_dims(mean, reduction_axes)
    var = jnp.expand_dims(var, reduction_axes)
    y = x - mean
    mul = lax.rsqrt(var + epsilon)
    args = [x]
    if use_scale:
        scale = jnp.reshape(mdl.param('scale', scale_init, reduced_feature_shape, param_dtype), feature_shape)
        if not force_float32_reductions:
            scale = jnp.asarray(scale, param_dtype)
        mul = mul * scale
        args.append(scale)
    y = y * mul
    if use_bias:
        bias = jnp.reshape(mdl.param('bias', bias_init, reduced_feature_shape, param_dtype), feature_shape)
        if not force_float32_reductions:
            bias = jnp.asarray(bias, param_dtype)
        y = y + bias
        args.append(bias)
    return jnp.asarray(y, canonicalize_dtype(*args, dtype=dtype))


def normalize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """flax.linen.normalize: Flax's deprecated alias of jax.nn.standardize."""
    import jax.nn
    return jax.nn.standardize(x, axis=axis, mean=mean, variance=variance, epsilon=epsilon, where=where)


class BatchNorm(Module):
    use_running_average: typing.Optional[bool] = None
    axis: int = -1
    momentum: float = 0.99
    epsilon: float = 1e-5
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: typing.Callable = initializers.zeros
    scale_init: typing.Callable = initializers.ones
    axis_name: typing.Optional[str] = None
    axis_index_groups: typing.Any = None
    use_fast_variance: bool = True
    force_float32_reductions: bool = True

    @compact
    def __call__(self, x, use_running_average=None, *, mask=None):
        use_running_average = merge_param('use_running_average', self.use_running_average, use_running_average)
        x = jnp.asarray(x)
        feature_axes = _canonicalize_axes(x.ndim, self.axis)
        reduction_axes = tuple(i for i in range(x.ndim) if i not in feature_axes)
        feature_shape = [x.shape[ax] for ax in feature_axes]
        stats_dtype = jnp.float32 if self.force_float32_reductions else self.param_dtype
        ra_mean = self.variable('batch_stats', 'mean', lambda s: jnp.zeros(s, stats_dtype), feature_shape)
        ra_var = self.variable('batch_stats', 'var', lambda s: jnp.ones(s, stats_dtype), feature_shape)
        if use_running_average:
            mean, var = ra_mean.value, ra_var.value
            if not self.force_float32_reductions:
                mean, var = jnp.asarray(mean, self.param_dtype), jnp.asarray(var, self.param_dtype)
        else:
            # While initializing, the named axis need not exist (init often runs outside pmap), and the running
            # averages keep their initial zeros and ones.
            initializing = self.is_initializing()
            mean, var = _compute_stats(x, reduction_axes, dtype=self.dtype,
                                       axis_name=None if initializing else self.axis_name,
                                       axis_index_groups=self.axis_index_groups,
                                       use_fast_variance=self.use_fast_variance, mask=mask,
                                       force_float32_reductions=self.force_float32_reductions)
            if not initializing:
                ra_mean.value = self.momentum * ra_mean.value + (1 - self.momentum) * mean
                ra_var.value = self.momentum * ra_var.value + (1 - self.momentum) * var
        return _normalize(self, x, mean, var, reduction_axes, feature_axes, self.dtype, self.param_dtype, self.epsilon,
                          self.use_bias, self.use_scale, self.bias_init, self.scale_init,
                          self.force_float32_reductions)


class LayerNorm(Module):
    epsilon: float = 1e-6
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: typing.Callable = initializers.zeros
    scale_init: typing.Callable = initializers.ones
    reduction_axes: typing.Any = -1
    feature_axes: typing.Any = -1
    axis_name: typing.Optional[str] = None
    axis_index_groups: typing.Any = None
    use_fast_variance: bool = True
    force_float32_reductions: bool = True

    @compact
    def __call__(self, x, *, mask=None):
        x = jnp.asarray(x)
        mean, var = _compute_stats(x, self.reduction_axes, self.dtype, self.axis_name, self.axis_index_groups,
                                   use_fast_variance=self.use_fast_variance, mask=mask,
                                   force_float32_reductions=self.force_float32_reductions)
        return _normalize(self, x, mean, var, self.reduction_axes, self.feature_axes, self.dtype, self.param_dtype,
                          self.epsilon, self.use_bias, self.use_scale, self.bias_init, self.scale_init,
                          self.force_float32_reductions)


class RMSNorm(Module):
    epsilon: float = 1e-6
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    use_scale: bool = True
    scale_init: typing.Callable = initializers.ones
    reduction_axes: typing.Any = -1
    feature_axes: typing.Any = -1
    axis_name: typing.Optional[str] = None
    axis_index_groups: typing.Any = None
    use_fast_variance: bool = True
    force_float32_reductions: bool = True

    @compact
    def __call__(self, x, *, mask=None):
        x = jnp.asarray(x)
        # No re-centring: the "variance" is the mean square and the mean is zero.
        mean, var = _compute_stats(x, self.reduction_axes, self.dtype, self.axis_name, self.axis_index_groups,
                                   use_mean=False, use_fast_variance=self.use_fast_variance, mask=mask,
                                   force_float32_reductions=self.force_float32_reductions)
        return _normalize(self, x, mean, var, self.reduction_axes, self.feature_axes, self.dtype, self.param_dtype,
                          self.epsilon, False, self.use_scale, initializers.zeros, self.scale_init,
                          self.force_float32_reductions)


class GroupNorm(Module):
    num_groups: typing.Optional[int] = 32
    group_size: typing.Optional[int] = None
    epsilon: float = 1e-6
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: typing.Callable = initializers.zeros
    scale_init: typing.Callable = initializers.ones
    reduction_axes: typing.Any = None
    axis_name: typing.Optional[str] = None
    axis_index_groups: typing.Any = None
    use_fast_variance: bool = True
    force_float32_reductions: bool = True

    @compact
    def __call__(self, x, *, mask=None):
        x = jnp.asarray(x)
        # By default every axis but the leading (batch) one is reduced.
        reduction_axes = self.reduction_axes if self.reduction_axes is not None else list(range(1, x.ndim - 1)) + [-1]
        feature_axis = -1
        reduction_axes = _canonicalize_axes(x.ndim, reduction_axes)
        if reduction_axes[-1] != (feature_axis % x.ndim):
            raise ValueError('The reduction axes must include the final dimension as this is assumed to be the '
                             'feature axis.')
        if (self.num_groups is None) == (self.group_size is None):
            raise ValueError('Either `num_groups` or `group_size` should be specified. If `group_size` is to be '
                             'specified, pass `num_groups=None` as argument to override the default `num_groups` '
                             'value of 32.')
        channels = x.shape[-1]
        if self.group_size is not None:
            if channels % self.group_size != 0:
                raise ValueError(f'Number of channels ({channels}) is not multiple of the group size '
                                 f'({self.group_size}).')
            num_groups = channels // self.group_size
        else:
            num_groups = self.num_groups
            assert isinstance(num_groups, int)
        if num_groups <= 0 or channels % num_groups != 0:
            raise ValueError(f'Number of groups ({num_groups}) does not divide the number of channels ({channels}).')
        group_size = channels // num_groups
        # Channels split into (groups, size): statistics over the reduced axes and each group's own channels.
        group_shape = x.shape[:-1] + (num_groups, group_size)
        if mask is not None:
            mask = jnp.reshape(mask, mask.shape[:-1] + (num_groups, group_size))
        mean, var = _compute_stats(jnp.reshape(x, group_shape), list(reduction_axes[:-1]) + [-1], self.dtype,
                                   self.axis_name, self.axis_index_groups, use_fast_variance=self.use_fast_variance,
                                   mask=mask, force_float32_reductions=self.force_float32_reductions)
        mean = jnp.repeat(mean, group_size, axis=-1)
        var = jnp.repeat(var, group_size, axis=-1)
        return _normalize(self, x, mean, var, reduction_axes[:-1], (feature_axis,), self.dtype, self.param_dtype,
                          self.epsilon, self.use_bias, self.use_scale, self.bias_init, self.scale_init,
                          self.force_float32_reductions)


class InstanceNorm(Module):
    epsilon: float = 1e-6
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: typing.Callable = initializers.zeros
    scale_init: typing.Callable = initializers.ones
    feature_axes: typing.Any = -1
    axis_name: typing.Optional[str] = None
    axis_index_groups: typing.Any = None
    use_fast_variance: bool = True
    force_float32_reductions: bool = True

    @compact
    def __call__(self, x, *, mask=None):
        x = jnp.asarray(x)
        feature_axes = _canonicalize_axes(x.ndim, self.feature_axes)
        if 0 in feature_axes:
            raise ValueError('The channel axes cannot include the leading dimension as this is assumed to be the '
                             'batch axis.')
        # Per example and per channel: every axis but the batch and feature ones is reduced.
        reduction_axes = [i for i in range(1, x.ndim) if i not in feature_axes]
        mean, var = _compute_stats(x, reduction_axes, self.dtype, self.axis_name, self.axis_index_groups,
                                   use_fast_variance=self.use_fast_variance, mask=mask,
                                   force_float32_reductions=self.force_float32_reductions)
        return _normalize(self, x, mean, var, reduction_axes, feature_axes, self.dtype, self.param_dtype, self.epsilon,
                          self.use_bias, self.use_scale, self.bias_init, self.scale_init,
                          self.force_float32_reductions)
