# jax.lax's array functions beyond collectives (dot_general, the convolutions): JAX's signatures, normalized
# for the engine.
import collections

import _shardscope

ConvDimensionNumbers = collections.namedtuple('ConvDimensionNumbers', ['lhs_spec', 'rhs_spec', 'out_spec'])
ConvDimensionNumbers.__module__ = 'jax.lax'


def _ints(values):
    return [int(v) for v in values]


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None):
    try:
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError('dot_general requires dimension_numbers to be a sequence of two pairs of int sequences: '
                        f'((lhs_contracting_dims, rhs_contracting_dims), (lhs_batch_dims, rhs_batch_dims)), got '
                        f'{dimension_numbers}.') from None
    return _shardscope.lax._dot_general(lhs, rhs, _ints(lhs_contract), _ints(rhs_contract), _ints(lhs_batch),
                                        _ints(rhs_batch), preferred_element_type, out_sharding)


def _spec_strings(dimension_numbers):
    """Dimension numbers as the engine reads them: three spec strings, or None for the NCHW defaults."""
    if dimension_numbers is None:
        return None
    lhs, rhs, out = dimension_numbers
    if isinstance(lhs, str):
        return [lhs, rhs, out]
    # ConvDimensionNumbers of ints: (batch, feature, spatial...) positions; spatial dims share letters.
    letters = 'ABDEFGJKLMPQRSTUVWXYZ'

    def text(spec, first, second):
        chars = [''] * len(spec)
        chars[spec[0]], chars[spec[1]] = first, second
        for i, position in enumerate(spec[2:]):
            chars[position] = letters[i]
        return ''.join(chars)
    return [text(lhs, 'N', 'C'), text(rhs, 'O', 'I'), text(out, 'N', 'C')]


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    rank = len(lhs_shape)
    if dimension_numbers is None:
        iota = tuple(range(rank))
        return ConvDimensionNumbers(iota, iota, iota)
    lhs, rhs, out = dimension_numbers
    spatial = [c for c in rhs if c not in 'OI']

    def positions(spec, first, second):
        return (spec.index(first), spec.index(second)) + tuple(spec.index(c) for c in spatial)
    return ConvDimensionNumbers(positions(lhs, 'N', 'C'), positions(rhs, 'O', 'I'), positions(out, 'N', 'C'))


def _padding(padding):
    if isinstance(padding, str):
        return padding.upper()
    return [(int(lo), int(hi)) for lo, hi in padding]


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None):
    return _shardscope.lax._conv_general_dilated(
        lhs, rhs, _ints(window_strides), _padding(padding), _ints(lhs_dilation or ()), _ints(rhs_dilation or ()),
        _spec_strings(dimension_numbers), int(feature_group_count), int(batch_group_count), preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def select(pred, on_true, on_false):
    return _shardscope.lax._select(pred, on_true, on_false)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    return _shardscope.lax._broadcast_in_dim(operand, _ints(shape), _ints(broadcast_dimensions))


def broadcast(operand, sizes, *, out_sharding=None):
    rank = len(getattr(operand, 'shape', ()))
    return broadcast_in_dim(operand, tuple(sizes) + tuple(getattr(operand, 'shape', ())),
                            tuple(range(len(sizes), len(sizes) + rank)))


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    from jax._src.sharding_in_types import with_out_sharding
    return with_out_sharding(lambda x: _shardscope.lax._reshape(x, _ints(new_sizes)), out_sharding, operand)


def select_n(which, *cases):
    """lax.select_n: cases[which] elementwise; a boolean `which` picks cases[1] where True, as JAX's does."""
    if not cases:
        raise ValueError('select_n requires at least one case')
    if len(cases) == 1:
        return cases[0]
    import jax.numpy as jnp
    which = jnp.asarray(which)
    if which.dtype == bool:
        if len(cases) != 2:
            raise TypeError(f'select_n with a boolean predicate requires exactly two cases, got {len(cases)}')
        return select(which, cases[1], cases[0])
    result = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        result = select(which == k, cases[k], result)
    return result


def transpose(operand, permutation):
    return _shardscope.lax._transpose(operand, _ints(permutation))


def rev(operand, dimensions):
    return _shardscope.lax._rev(operand, _ints(dimensions))


def pad(operand, padding_value, padding_config):
    return _shardscope.lax._pad(operand, padding_value, [tuple(int(v) for v in dim) for dim in padding_config])


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    import jax.numpy as jnp
    return _shardscope.lax._dynamic_update_slice(operand, update, [jnp.asarray(i) for i in start_indices])


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    import jax.numpy as jnp
    axis = int(axis) % len(operand.shape)
    starts = [jnp.zeros((), jnp.asarray(start_index).dtype)] * len(operand.shape)
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    import jax.numpy as jnp
    axis = int(axis) % len(operand.shape)
    if len(update.shape) == len(operand.shape) - 1:
        update = jnp.expand_dims(update, axis)
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def _cumulative(primitive):
    def op(operand, axis=0, reverse=False):
        return _shardscope.lax._cumulative(primitive, operand, int(axis) % max(len(operand.shape), 1), bool(reverse))
    op.__name__ = primitive
    return op


cumsum, cumprod, cummax, cummin = (_cumulative(name) for name in ('cumsum', 'cumprod', 'cummax', 'cummin'))


def integer_pow(x, y):
    return _shardscope.lax._integer_pow(x, int(y))


def convert_element_type(operand, new_dtype):
    return _shardscope.lax._convert_element_type(operand, new_dtype)


def iota(dtype, size, *, sharding=None):
    return _shardscope.lax._iota(dtype, int(size))


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    return _shardscope.lax._broadcasted_iota(dtype, _ints(shape), int(dimension))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 (JAX's name)
    return _shardscope.lax._slice(operand, _ints(start_indices), _ints(limit_indices),
                                  None if strides is None else _ints(strides))


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    import jax.numpy as jnp
    return _shardscope.lax._dynamic_slice(operand, [jnp.asarray(i) for i in start_indices], _ints(slice_sizes))


def _axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f'axis {axis} is out of bounds for array of dimension {ndim}')
    return axis % ndim


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *, allow_negative_indices=True):
    import jax.numpy as jnp
    operand = jnp.asarray(operand)
    axis = _axis(axis, operand.ndim)
    starts = [0] * operand.ndim
    starts[axis] = start_index
    sizes = list(operand.shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    import jax.numpy as jnp
    operand = jnp.asarray(operand)
    axis = _axis(axis, operand.ndim)
    result = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return result if keepdims else jnp.squeeze(result, axis)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    import jax.numpy as jnp
    operand = jnp.asarray(operand)
    axis = _axis(axis, operand.ndim)
    size = operand.shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = size if limit_index is None else int(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts = [0] * operand.ndim
    limits = list(operand.shape)
    strides = [1] * operand.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    import jax.numpy as jnp
    operand = jnp.asarray(operand)
    axis = _axis(axis, operand.ndim)
    index = int(index)
    index = index + operand.shape[axis] if index < 0 else index
    result = slice_in_dim(operand, index, index + 1, 1, axis)
    return result if keepdims else jnp.squeeze(result, axis)


def _unary(name):
    def op(x, accuracy=None):
        import jax.numpy as jnp
        return _shardscope.lax._unary(name, jnp.asarray(x))
    op.__name__ = name
    return op


rsqrt, tanh, log, sqrt, logistic, abs, neg, sign, floor, ceil, log1p, expm1 = (  # noqa: A001
    _unary(n) for n in ('rsqrt', 'tanh', 'log', 'sqrt', 'logistic', 'abs', 'neg', 'sign', 'floor', 'ceil', 'log1p',
                        'expm1'))
