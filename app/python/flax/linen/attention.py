# flax.linen's attention: dot-product attention (weights, dropout, masks, bias), MultiHeadDotProductAttention with
# Flax's 'query'/'key'/'value'/'out' DenseGeneral params and decode cache, and the mask helpers.
import functools
import inspect
import typing
import warnings

import jax
import jax.numpy as jnp
from jax import lax, random

from flax.linen.module import Module, compact, merge_param
from flax.linen import initializers
from flax.linen.linear import DenseGeneral, default_kernel_init, promote_dtype
from flax.linen.normalization import LayerNorm

# jnp.finfo is numpy's, which has no bfloat16: its most negative finite value, for masking.
_BFLOAT16_MIN = -3.3895313892515355e38


def _most_negative(dtype):
    if str(jnp.dtype(dtype)) == 'bfloat16':
        return jnp.asarray(_BFLOAT16_MIN, dtype)
    return jnp.finfo(dtype).min


def _einsum_fn(precision, einsum_dot_general):
    if einsum_dot_general is None:
        return functools.partial(jnp.einsum, precision=precision)
    # Passed on, so that jnp.einsum says plainly if it cannot honour it.
    return functools.partial(jnp.einsum, precision=precision, _dot_general=einsum_dot_general)


def dot_product_attention_weights(query, key, bias=None, mask=None, broadcast_dropout=True, dropout_rng=None,
                                  dropout_rate=0.0, deterministic=False, dtype=None, precision=None, module=None,
                                  force_fp32_for_softmax=False, einsum_dot_general=None, einsum=None):
    """softmax(q k^T / sqrt(depth) + bias, masked) over the keys, shaped [batch..., heads, q_length, kv_length],
    with dropout unless deterministic."""
    if (precision or einsum_dot_general) and einsum:
        raise ValueError('precision/einsum_dot_general and einsum are mutually exclusive. Please specify only one '
                         'of them.')
    if not einsum:
        einsum = _einsum_fn(precision, einsum_dot_general)
    query, key = promote_dtype(query, key, dtype=dtype)
    dtype = query.dtype
    assert query.ndim == key.ndim, 'q, k must have same rank.'
    assert query.shape[:-3] == key.shape[:-3], 'q, k batch dims must match.'
    assert query.shape[-2] == key.shape[-2], 'q, k num_heads must match.'
    assert query.shape[-1] == key.shape[-1], 'q, k depths must match.'
    depth = query.shape[-1]
    # The query is scaled before the product (not the logits after), as Flax does; roundings follow from that.
    query = query / jnp.sqrt(depth).astype(dtype)
    attn_weights = einsum('...qhd,...khd->...hqk', query, key)
    if bias is not None:
        attn_weights = attn_weights + bias
    if mask is not None:
        attn_weights = jnp.where(mask, attn_weights, _most_negative(dtype))
    if force_fp32_for_softmax and dtype != jnp.float32:
        # The weights stay float32 afterwards.
        attn_weights = jax.nn.softmax(attn_weights.astype(jnp.float32))
    else:
        attn_weights = jax.nn.softmax(attn_weights).astype(dtype)
    if module:
        module.sow('intermediates', 'attention_weights', attn_weights)
    if not deterministic and dropout_rate > 0.0:
        keep_prob = 1.0 - dropout_rate
        if broadcast_dropout:
            # One keep-mask for every batch entry and head.
            dropout_shape = tuple([1] * (key.ndim - 2)) + attn_weights.shape[-2:]
            keep = random.bernoulli(dropout_rng, keep_prob, dropout_shape)
        else:
            keep = random.bernoulli(dropout_rng, keep_prob, attn_weights.shape)
        multiplier = keep.astype(dtype) / jnp.asarray(keep_prob, dtype=dtype)
        attn_weights = attn_weights * multiplier
    return attn_weights


def dot_product_attention(query, key, value, bias=None, mask=None, broadcast_dropout=True, dropout_rng=None,
                          dropout_rate=0.0, deterministic=False, dtype=None, precision=None, module=None,
                          force_fp32_for_softmax=False, einsum_dot_general=None, qk_attn_weights_einsum=None,
                          attn_weights_value_einsum=None):
    """The attention weights applied to `value`: [batch..., q_length, heads, v_depth]."""
    if bool(qk_attn_weights_einsum) != bool(attn_weights_value_einsum):
        raise ValueError('qk_attn_weights_einsum and attn_weights_value_einsum must be specified together.')
    if (precision or einsum_dot_general) and (qk_attn_weights_einsum or attn_weights_value_einsum):
        raise ValueError('precision/einsum_dot_general and qk_attn_weights_einsum/attn_weights_value_einsum are '
                         'mutually exclusive. Please specify only one of them.')
    query, key, value = promote_dtype(query, key, value, dtype=dtype)
    dtype = query.dtype
    assert key.ndim == query.ndim == value.ndim, 'q, k, v must have same rank.'
    assert query.shape[:-3] == key.shape[:-3] == value.shape[:-3], 'q, k, v batch dims must match.'
    assert query.shape[-2] == key.shape[-2] == value.shape[-2], 'q, k, v num_heads must match.'
    assert key.shape[-3] == value.shape[-3], 'k, v lengths must match.'
    attn_weights = dot_product_attention_weights(query, key, bias, mask, broadcast_dropout, dropout_rng,
                                                 dropout_rate, deterministic, dtype, precision, module,
                                                 force_fp32_for_softmax, einsum_dot_general=einsum_dot_general,
                                                 einsum=qk_attn_weights_einsum)
    if not attn_weights_value_einsum:
        attn_weights_value_einsum = _einsum_fn(precision, einsum_dot_general)
    return attn_weights_value_einsum('...hqk,...khd->...qhd', attn_weights, value)


def _accepted_kwargs(fn, kwargs):
    # Flax hands an attention_fn only the keyword arguments its signature names.
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in parameters}


class MultiHeadDotProductAttention(Module):
    num_heads: int
    dtype: typing.Any = None
    param_dtype: typing.Any = jnp.float32
    qkv_features: typing.Optional[int] = None
    out_features: typing.Optional[int] = None
    broadcast_dropout: bool = True
    dropout_rate: float = 0.0
    deterministic: typing.Optional[bool] = None
    precision: typing.Any = None
    kernel_init: typing.Callable = default_kernel_init
    out_kernel_init: typing.Optional[typing.Callable] = None
    bias_init: typing.Callable = initializers.zeros_init()
    out_bias_init: typing.Optional[typing.Callable] = None
    use_bias: bool = True
    attention_fn: typing.Callable = dot_product_attention
    decode: bool = False
    normalize_qk: bool = False
    force_fp32_for_softmax: bool = False
    qkv_dot_general: typing.Any = None
    out_dot_general: typing.Any = None
    qkv_dot_general_cls: typing.Any = None
    out_dot_general_cls: typing.Any = None
    qk_attn_weights_einsum_cls: typing.Any = None
    attn_weights_value_einsum_cls: typing.Any = None

    @compact
    def __call__(self, inputs_q, inputs_k=None, inputs_v=None, *, inputs_kv=None, mask=None, deterministic=None,
                 dropout_rng=None, sow_weights=False):
        inputs_k, inputs_v = self._keys_and_values(inputs_q, inputs_k, inputs_v, inputs_kv)
        features = self.out_features or inputs_q.shape[-1]
        qkv_features = self.qkv_features or inputs_q.shape[-1]
        assert qkv_features % self.num_heads == 0, (
            f'Memory dimension ({qkv_features}) must be divisible by number of heads ({self.num_heads}).')
        head_dim = qkv_features // self.num_heads
        dense = functools.partial(DenseGeneral, axis=-1, dtype=self.dtype, param_dtype=self.param_dtype,
                                  features=(self.num_heads, head_dim), kernel_init=self.kernel_init,
                                  bias_init=self.bias_init, use_bias=self.use_bias, precision=self.precision,
                                  dot_general=self.qkv_dot_general, dot_general_cls=self.qkv_dot_general_cls)
        # [batch..., length, heads, head_dim] each; created query, key, value in that order.
        query = dense(name='query')(inputs_q)
        key = dense(name='key')(inputs_k)
        value = dense(name='value')(inputs_v)
        if self.normalize_qk:
            query = LayerNorm(name='query_ln', use_bias=False, dtype=self.dtype, param_dtype=self.param_dtype)(query)
            key = LayerNorm(name='key_ln', use_bias=False, dtype=self.dtype, param_dtype=self.param_dtype)(key)
        if self.decode:
            key, value, mask = self._decode_step(query, key, value, mask)
        if self.dropout_rate > 0.0:
            # `deterministic` is only required when there is dropout to switch.
            m_deterministic = merge_param('deterministic', self.deterministic, deterministic)
            if not m_deterministic and dropout_rng is None:
                dropout_rng = self.make_rng('dropout')
        else:
            m_deterministic = True
        attn_kwargs = dict(
            mask=mask, dropout_rng=dropout_rng, dropout_rate=self.dropout_rate,
            broadcast_dropout=self.broadcast_dropout, deterministic=m_deterministic, dtype=self.dtype,
            precision=self.precision, force_fp32_for_softmax=self.force_fp32_for_softmax,
            qk_attn_weights_einsum=self.qk_attn_weights_einsum_cls() if self.qk_attn_weights_einsum_cls else None,
            attn_weights_value_einsum=(self.attn_weights_value_einsum_cls()
                                       if self.attn_weights_value_einsum_cls else None))
        attn_kwargs = _accepted_kwargs(self.attention_fn, attn_kwargs)
        if sow_weights:
            x = self.attention_fn(query, key, value, **attn_kwargs, module=self)
        else:
            x = self.attention_fn(query, key, value, **attn_kwargs)
        # Heads and head_dim contracted together back to `features`.
        return DenseGeneral(features=features, axis=(-2, -1), kernel_init=self.out_kernel_init or self.kernel_init,
                            bias_init=self.out_bias_init or self.bias_init, use_bias=self.use_bias,
                            dtype=self.dtype, param_dtype=self.param_dtype, precision=self.precision,
                            dot_general=self.out_dot_general, dot_general_cls=self.out_dot_general_cls,
                            name='out')(x)

    @staticmethod
    def _keys_and_values(inputs_q, inputs_k, inputs_v, inputs_kv):
        # Since Flax 0.7.4: (inputs_q, inputs_k=None, inputs_v=None); the older inputs_kv keyword still works.
        if inputs_kv is not None:
            if inputs_k is not None or inputs_v is not None:
                raise ValueError('If either `inputs_k` or `inputs_v` is not None, `inputs_kv` must be None. If '
                                 '`inputs_kv` is not None, both `inputs_k` and `inputs_v` must be None. We recommend '
                                 'using `inputs_k` and `inputs_v` args, since `inputs_kv` will be deprecated soon. '
                                 'See https://github.com/google/flax/discussions/3389 for more information.')
            warnings.warn('The inputs_kv arg will be deprecated soon. Use inputs_k and inputs_v instead. See '
                          'https://github.com/google/flax/discussions/3389 for more information.',
                          DeprecationWarning)
            return inputs_kv, inputs_kv
        if inputs_k is None:
            if inputs_v is not None:
                raise ValueError('`inputs_k` cannot be None if `inputs_v` is not None. To have both `inputs_k` and '
                                 '`inputs_v` be the same value, pass in the value to `inputs_k` and leave '
                                 '`inputs_v` as None.')
            inputs_k = inputs_q
        if inputs_v is None:
            inputs_v = inputs_k
        elif inputs_v.shape[-1] == inputs_v.shape[-2]:
            # A square third positional argument is likely a mask written for the old signature.
            warnings.warn(f'You are passing an array of shape {inputs_v.shape} to the `inputs_v` arg, when you may '
                          'have intended to pass it to the `mask` arg. As of Flax version 0.7.4, the function '
                          "signature of MultiHeadDotProductAttention's `__call__` method has changed to "
                          '`__call__(inputs_q, inputs_k=None, inputs_v=None, *, inputs_kv=None, mask=None, '
                          'deterministic=None)`. Use the kwarg `mask` instead. See '
                          'https://github.com/google/flax/discussions/3389 and read the docstring for more '
                          'information.', DeprecationWarning)
        return inputs_k, inputs_v

    def _decode_step(self, query, key, value, mask):
        """Autoregressive decoding: init sizes the 'cache' collection from the full-length inputs; each later call
        writes its one position's key and value at cache_index and attends to the positions filled so far."""
        is_initialized = self.has_variable('cache', 'cached_key')
        cached_key = self.variable('cache', 'cached_key', jnp.zeros, key.shape, key.dtype)
        cached_value = self.variable('cache', 'cached_value', jnp.zeros, value.shape, value.dtype)
        cache_index = self.variable('cache', 'cache_index', lambda: jnp.array(0, dtype=jnp.int32))
        if not is_initialized:
            return key, value, mask
        *batch_dims, max_length, num_heads, depth_per_head = cached_key.value.shape
        expected_shape = tuple(batch_dims) + (1, num_heads, depth_per_head)
        if expected_shape != query.shape:
            raise ValueError('Autoregressive cache shape error, expected query shape %s instead got %s.'
                             % (expected_shape, query.shape))
        cur_index = cache_index.value
        zero = jnp.array(0, dtype=cur_index.dtype)
        indices = (zero,) * len(batch_dims) + (cur_index, zero, zero)
        key = lax.dynamic_update_slice(cached_key.value, key, indices)
        value = lax.dynamic_update_slice(cached_value.value, value, indices)
        cached_key.value = key
        cached_value.value = value
        cache_index.value = cache_index.value + 1
        # Positions not yet written are masked out.
        mask = combine_masks(mask, jnp.broadcast_to(jnp.arange(max_length) <= cur_index,
                                                    tuple(batch_dims) + (1, 1, max_length)))
        return key, value, mask


class MultiHeadAttention(MultiHeadDotProductAttention):
    """MultiHeadDotProductAttention under another name (so auto-named MultiHeadAttention_N, which changes param
    paths and RNG keys)."""


class SelfAttention(MultiHeadDotProductAttention):
    """Deprecated self-attention form: the query input is also the keys and values."""

    @compact
    def __call__(self, inputs_q, mask=None, deterministic=None, dropout_rng=None, sow_weights=False):
        warnings.warn('SelfAttention will be deprecated soon. Use `MultiHeadDotProductAttention.__call__(inputs_q)` '
                      'instead. See https://github.com/google/flax/discussions/3389 for more information.',
                      DeprecationWarning)
        return super().__call__(inputs_q, mask=mask, deterministic=deterministic, dropout_rng=dropout_rng,
                                sow_weights=sow_weights)


def make_attention_mask(query_input, key_input, pairwise_fn=jnp.multiply, extra_batch_dims=0, dtype=jnp.float32):
    """pairwise_fn(query[..., :, None], key[..., None, :]) with a head axis: [batch..., 1, len_q, len_kv]."""
    mask = pairwise_fn(jnp.expand_dims(query_input, axis=-1), jnp.expand_dims(key_input, axis=-2))
    mask = jnp.expand_dims(mask, axis=-3)
    mask = jnp.expand_dims(mask, axis=tuple(range(extra_batch_dims)))
    return mask.astype(dtype)


def make_causal_mask(x, extra_batch_dims=0, dtype=jnp.float32):
    """[batch..., 1, len, len], 1 where the key position is at or before the query position."""
    idxs = jnp.broadcast_to(jnp.arange(x.shape[-1], dtype=jnp.int32), x.shape)
    return make_attention_mask(idxs, idxs, jnp.greater_equal, extra_batch_dims=extra_batch_dims, dtype=dtype)


def combine_masks(*masks, dtype=jnp.float32):
    """The logical and of the masks that are not None (None if all are), as `dtype`."""
    masks_list = [m for m in masks if m is not None]
    if not masks_list:
        return None
    assert all(m.ndim == masks_list[0].ndim for m in masks_list), (
        f'masks must have same rank: {tuple(m.ndim for m in masks_list)}')
    mask, *other_masks = masks_list
    for other_mask in other_masks:
        mask = jnp.logical_and(mask, other_mask)
    return mask.astype(dtype)
