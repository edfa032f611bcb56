# jax.nn's relu (a custom_jvp, as JAX's), dot_product_attention (JAX's XLA implementation: grouped heads, bias, boolean and causal masks, local
# windows, sequence lengths) and the small functions identity, sparse_sigmoid, log1mexp and logmeanexp, written
# over jnp and jax.nn as JAX writes them, so their jaxprs and roundings follow.
import numpy as np


def _jnp():
    import jax.numpy as jnp
    return jnp


def _jit(function, **kwargs):
    from jax._src.lazy_jit import lazy_jit
    return lazy_jit(function, **kwargs)


def identity(x):
    """Returns its argument as an array."""
    return _jnp().asarray(x)


def sparse_sigmoid(x):
    """0 up to -1, (x + 1) / 2 between -1 and 1, then 1."""
    return 0.5 * _jnp().clip(x + 1.0, 0.0, 2.0)


def _log1mexp(x):
    """log(1 - exp(-x)), computed two ways either side of log 2 so neither loses precision."""
    jnp = _jnp()
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


identity = _jit(identity)
sparse_sigmoid = _jit(sparse_sigmoid)


def _make_log1mexp():
    import jax
    _log1mexp.__name__ = 'log1mexp'
    inner = jax.jit(_log1mexp)

    @jax.custom_jvp
    def log1mexp(x):
        return inner(x)

    log1mexp.defjvps(lambda g, ans, x: g / _jnp().expm1(x))
    return log1mexp


_log1mexp_cache = []


def _make_relu():
    import jax
    from jax import lax

    def relu(x):
        return _jnp().maximum(x, 0)
    inner = jax.jit(relu)

    @jax.custom_jvp
    def relu(x):  # noqa: F811 (JAX's relu: a custom_jvp of the jitted maximum)
        return inner(x)

    # The derivative at 0 is 0, not the 0.5 maximum's balanced rule would give.
    relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))
    return relu


_relu_cache = []


def relu(x):
    """max(x, 0), with JAX's derivative: g where x > 0, else 0."""
    if not _relu_cache:
        _relu_cache.append(_make_relu())
    return _relu_cache[0](x)


def log1mexp(x):
    """Numerically stable log(1 - exp(-x)), with JAX's derivative g / expm1(x)."""
    if not _log1mexp_cache:
        _log1mexp_cache.append(_make_log1mexp())
    return _log1mexp_cache[0](x)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over `axis`: logsumexp(x) - log(n), n counting the elements `where` keeps."""
    import jax
    jnp = _jnp()
    x = jnp.asarray(x)
    kept = jnp.ones(x.shape, dtype=bool) if where is None else jnp.broadcast_to(where, x.shape)
    # Elements `where` drops contribute exp(-inf) = 0 to the sum.
    lse = jax.nn.logsumexp(x if where is None else jnp.where(kept, x, -jnp.inf), axis=axis, keepdims=keepdims)
    count = jnp.sum(kept, axis=axis, keepdims=keepdims, dtype=lse.dtype)
    return lse - jnp.log(count)


# ---- dot_product_attention ---------------------------------------------------------------------------------

def _large_negative(dtype):
    # Softmax runs in float32, so the mask value stays within float32's range.
    return _jnp().asarray(-0.7 * min(float(np.finfo(dtype).max), float(np.finfo(np.float32).max)), dtype=dtype)


def _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
    jnp = _jnp()
    if mask is None and not is_causal and q_seqlen is None and kv_seqlen is None and local_window_size is None:
        return logits
    combined = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        combined = jnp.logical_and(combined, mask)
    t, s = logits.shape[2], logits.shape[3]
    if is_causal:
        combined = jnp.logical_and(combined, jnp.tril(jnp.ones((t, s), dtype=bool))[None, None, :, :])
    if local_window_size is not None:
        query_pos = jnp.array(range(t))
        key_pos = jnp.array(range(s))
        left, right = local_window_size
        left_mask = query_pos[..., None] <= key_pos[..., None, :] + left
        right_mask = query_pos[..., None] >= key_pos[..., None, :] - right
        combined = jnp.logical_and(combined, jnp.logical_and(right_mask, left_mask)[None, None, :, :])
    if q_seqlen is not None or kv_seqlen is not None:
        q_mask = True
        kv_mask = True
        if q_seqlen is not None:
            q_mask = jnp.arange(0, t)[None, :, None] < q_seqlen[:, None, None]
        if kv_seqlen is not None:
            kv_mask = jnp.arange(0, s)[None, None, :] < kv_seqlen[:, None, None]
        combined = jnp.logical_and(combined, jnp.logical_and(q_mask, kv_mask)[:, None, :, :])
    return jnp.where(combined, logits, _large_negative(logits.dtype))


def _attention_core(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen, local_window_size,
                    return_residual):
    import jax
    from jax import lax
    jnp = _jnp()
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    if query.dtype == logits_dtype and key.dtype == logits_dtype:
        logits = jnp.einsum('BTNH,BSNH->BNTS', query, key)
    else:
        # Narrower operands accumulate in float32: the exact float32 copies give the same products and sums.
        logits = jnp.einsum('BTNH,BSNH->BNTS', query.astype(logits_dtype), key.astype(logits_dtype))
    logits *= jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    padded = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size).astype(np.float32)
    probs = jax.nn.softmax(padded, axis=-1).astype(key.dtype)
    encoded = jnp.einsum('BNTS,BSNH->BTNH', probs, value)
    if q_seqlen is not None:
        keep = (jnp.arange(0, encoded.shape[1])[None, :] < q_seqlen[:, None])[:, :, None, None]
        encoded *= keep.astype(encoded.dtype)
    if return_residual:
        lse = jnp.transpose(jax.nn.logsumexp(padded, axis=-1).astype(key.dtype), (0, 2, 1))
        return encoded, lax.stop_gradient(lse)
    return encoded


def _attention_xla(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen, local_window_size,
                   return_residual):
    import jax
    jnp = _jnp()
    b, t, n, h = query.shape
    _, s, k, _ = key.shape
    g = n // k
    query = jnp.reshape(query, (b, t, k, g, h))

    def grouped(x):
        if x is None:
            return None
        xb, xn, xt, xs = x.shape
        if xn == 1:
            return jnp.broadcast_to(x[:, :, None, :, :], (xb, xn, g, xt, xs))
        return jnp.reshape(x, (xb, k, g, xt, xs))

    mapped = jax.vmap(_attention_core, in_axes=(3, None, None, 2, 2, None, None, None, None, None, None), out_axes=3)
    out = mapped(query, key, value, grouped(bias), grouped(mask), is_causal, scale, q_seqlen, kv_seqlen,
                 local_window_size, return_residual)
    if return_residual:
        encoded, lse = out
        return jnp.reshape(encoded, (b, t, n, h)), jnp.reshape(lse, (b, t, n))
    return jnp.reshape(out, (b, t, n, h))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(Q K^T * scale + bias, masked) V per head, for [B, T, N, H] or [T, N, H] operands; grouped-query
    attention when N is a multiple of the key/value heads K. The XLA implementation (what JAX runs on a CPU)."""
    jnp = _jnp()
    output_shape = jnp.asarray(query).shape

    def four_d(x):
        x = jnp.asarray(x)
        return jnp.expand_dims(x, axis=tuple(range(4 - x.ndim))) if x.ndim < 4 else x

    query_arr, key_arr, value_arr = four_d(query), four_d(key), four_d(value)
    bias = four_d(bias) if bias is not None else None
    mask = four_d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)

    def check(x, shape, dtype, name):
        if x is None:
            return
        if x.ndim != len(shape):
            raise ValueError(f'{name} ndim should be {len(shape)}, but got {x.ndim}')
        if dtype is not None and x.dtype != dtype:
            raise ValueError(f'{name} dtype should be {dtype}, but got {x.dtype}')
        for i in range(x.ndim):
            if shape[i] != -1 and x.shape[i] != shape[i]:
                raise ValueError(f'{name} shape should be {shape}: but got {x.shape}')

    b, _, k, h = key_arr.shape
    check(value_arr, [b, key_arr.shape[1], k, h], key_arr.dtype, 'value')
    check(query_arr, [b, -1, -1, h], key_arr.dtype, 'query')
    check(mask, [-1] * 4, np.dtype(bool), 'mask')
    check(bias, [-1] * 4, None, 'bias')
    check(query_seq_lengths, [b], np.dtype('int32'), 'query_seq_lengths')
    check(key_value_seq_lengths, [b], np.dtype('int32'), 'key_value_seq_lengths')
    if query_arr.shape[-2] % k != 0:
        raise ValueError(f'The number of query heads must be a multiple of key/value heads, but got '
                         f'{query_arr.shape[-2]} vs {k}')
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale
    if implementation == 'cudnn':
        raise NotImplementedError("jax.nn.dot_product_attention(implementation='cudnn') needs a GPU's cuDNN, which "
                                  "the simulation does not have; use implementation='xla' or None")
    if implementation not in (None, 'xla'):
        raise ValueError(f'Unsupported implementation option: {implementation}')
    out = _attention_xla(query_arr, key_arr, value_arr, bias, mask, is_causal, scale_val, query_seq_lengths,
                         key_value_seq_lengths, local_window_size, return_residual)
    if return_residual:
        out, residual = out
        return jnp.reshape(out, output_shape), jnp.reshape(residual, output_shape[:-1])
    return jnp.reshape(out, output_shape)


__all__ = ['identity', 'sparse_sigmoid', 'log1mexp', 'logmeanexp', 'dot_product_attention']
