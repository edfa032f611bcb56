# jax.ops: the segment reductions, as scatters of the data rows into num_segments rows (ids out of range are
# dropped, as JAX's default FILL_OR_DROP mode does; an empty segment holds the reduction's identity).
import numpy as _np


def _segments(data, segment_ids, num_segments, name):
    import jax.numpy as jnp
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not jnp.issubdtype(segment_ids.dtype, jnp.integer):
        raise TypeError(f'{name} segment_ids must be an integer array, got dtype {segment_ids.dtype}')
    if num_segments is None:
        if getattr(segment_ids, '_is_tracer', False):
            raise TypeError(f'{name} needs a static num_segments when segment_ids is traced; got num_segments=None')
        num_segments = int(_np.max(_np.asarray(segment_ids))) + 1 if segment_ids.size else 0
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError(f'num_segments must be non-negative, got {num_segments}')
    return data, segment_ids, num_segments


def _identity(dtype, kind):
    import jax.numpy as jnp
    if kind == 'add':
        return 0
    if kind == 'mul':
        return 1
    if jnp.issubdtype(dtype, jnp.floating):
        return -_np.inf if kind == 'max' else _np.inf
    if dtype == jnp.bool_:
        return kind == 'min'
    info = jnp.iinfo(dtype)
    return info.min if kind == 'max' else info.max


def _segment_reduce(kind, name, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size,
                    mode):
    import jax.numpy as jnp
    if bucket_size is not None:
        raise NotImplementedError(f'jax.ops.{name}(bucket_size=...) is not supported by shardscope')
    data, segment_ids, num_segments = _segments(data, segment_ids, num_segments, name)
    out = jnp.full((num_segments,) + data.shape[segment_ids.ndim:], _identity(data.dtype, kind), dtype=data.dtype)
    update = getattr(out.at[segment_ids], kind)
    return update(data, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode='drop' if mode is None else mode)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    return _segment_reduce('add', 'segment_sum', data, segment_ids, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                 bucket_size=None, mode=None):
    return _segment_reduce('mul', 'segment_prod', data, segment_ids, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    return _segment_reduce('max', 'segment_max', data, segment_ids, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    return _segment_reduce('min', 'segment_min', data, segment_ids, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, mode)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.ops.{name} is not supported by shardscope')
