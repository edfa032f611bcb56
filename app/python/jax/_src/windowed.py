# lax.reduce_window and its monoid forms (sum, max, min): one reduce_window_sum/max/min equation each, with JAX's
# padding forms; a general reducer (any other computation or init value) is not simulated.
import numpy as _np

import _shardscope


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """lax.padtype_to_pads: (low, high) pairs for 'VALID', 'SAME' and 'SAME_LOWER'."""
    if not isinstance(padding, str):
        return [tuple(p) for p in padding]
    name = padding.upper()
    if name == 'VALID':
        return [(0, 0)] * len(in_shape)
    if name not in ('SAME', 'SAME_LOWER'):
        raise RuntimeError(f'Unrecognized padding type: expected VALID or SAME, got {padding}.')
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        low = total // 2 if name == 'SAME' else (total + 1) // 2
        pads.append((low, total - low))
    return pads


def _dilate(shape, dilation):
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def _bind(primitive, operand, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    from jax.lax import _operand
    rank = len(window_dimensions)
    params = {'window_dimensions': tuple(int(d) for d in window_dimensions),
              'window_strides': tuple(int(s) for s in (window_strides or (1,) * rank)),
              'padding': tuple((int(lo), int(hi)) for lo, hi in padding),
              'base_dilation': tuple(int(d) for d in (base_dilation or (1,) * rank)),
              'window_dilation': tuple(int(d) for d in (window_dilation or (1,) * rank))}
    return _shardscope.bind(primitive, [_operand(operand)], params)[0]


def _monoid(computation, init_value, dtype):
    """The reduce_window primitive JAX picks for a (computation, init) pair, or None."""
    from jax import lax
    try:
        init = _np.asarray(init_value).item()
    except Exception:
        return None
    if computation is lax.add and init == 0:
        return 'reduce_window_sum'
    is_float = _np.issubdtype(_np.dtype(str(dtype)), _np.floating) if str(dtype) != 'bfloat16' else True
    if computation is lax.max:
        lowest = -_np.inf if is_float else (_np.iinfo(str(dtype)).min if str(dtype) != 'bool' else False)
        return 'reduce_window_max' if init == lowest else None
    if computation is lax.min:
        highest = _np.inf if is_float else (_np.iinfo(str(dtype)).max if str(dtype) != 'bool' else True)
        return 'reduce_window_min' if init == highest else None
    return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None, padding='VALID',
                  base_dilation=None, window_dilation=None):
    import jax.numpy as jnp
    operand = jnp.asarray(operand)
    rank = len(window_dimensions)
    strides = tuple(window_strides) if window_strides is not None else (1,) * rank
    if isinstance(padding, str):
        dilated_window = _dilate(window_dimensions, window_dilation or (1,) * rank)
        dilated_in = _dilate(operand.shape, base_dilation or (1,) * rank)
        pads = padtype_to_pads(dilated_in, dilated_window, strides, padding)
    else:
        pads = [tuple(p) for p in padding]
    primitive = _monoid(computation, init_value, operand.dtype)
    if primitive is None:
        raise NotImplementedError('jax.lax.reduce_window with a reducer other than lax.add from 0, lax.max from '
                                  '-inf or lax.min from +inf is not supported by shardscope yet')
    return _bind(primitive, operand, window_dimensions, strides, pads, base_dilation, window_dilation)


NAMES = {'reduce_window': reduce_window, 'padtype_to_pads': padtype_to_pads}
