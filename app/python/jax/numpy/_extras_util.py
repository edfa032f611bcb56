# Helpers shared by the jax.numpy extras (_extras_*.py): JAX's argument promotion, axis checks and static nonzero.
import numpy as _np

import _shardscope


def jnp():
    # jax.numpy imports the extras while it is still loading: look it up when a function runs.
    import jax.numpy as module
    return module


def lax():
    import jax.lax as module
    return module


def bind(primitive, *operands, **params):
    """One equation of an engine primitive on operands already promoted to one dtype (lax.shift_left and the
    like have no Python binding of their own)."""
    return _shardscope.bind(primitive, list(operands), params)[0]


def is_tracer(x):
    return bool(getattr(x, '_is_tracer', False))


def canonical_axis(axis, ndim, name='axis'):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        from numpy.exceptions import AxisError
        raise AxisError(f'{name} {axis} is out of bounds for array of dimension {ndim}')
    return axis % ndim if ndim else 0


def default_float():
    from jax import dtypes
    return dtypes.canonicalize_dtype(_np.float64)


def default_int():
    from jax import dtypes
    return dtypes.canonicalize_dtype(_np.int64)


def is_inexact(dtype):
    return jnp().issubdtype(dtype, _np.inexact)


def is_integer(dtype):
    return jnp().issubdtype(dtype, _np.integer)


def is_unsigned(dtype):
    return jnp().issubdtype(dtype, _np.unsignedinteger)


def is_bool(dtype):
    return str(dtype) == 'bool'


def convert(x, dtype, weak=False):
    """x as dtype, keeping JAX's weak type flag (a Python scalar stays weakly typed after promotion)."""
    from jax import dtypes
    if hasattr(x, 'dtype') and hasattr(x, '_is_tracer') and str(x.dtype) == str(dtype) and \
            dtypes.is_weakly_typed(x) == bool(weak):
        return x
    # The engine's lax conversion folds a Python scalar into a literal, as JAX's does.
    return _shardscope.lax._convert_element_type(x, dtype, bool(weak))


def asarray(x):
    """x as an array, a Python scalar staying weakly typed (JAX's lax.asarray, not jnp.asarray)."""
    if hasattr(x, '_is_tracer'):
        return x
    return promote(x)[0]


def promote(*args):
    """JAX's promote_dtypes: every argument as the arguments' result type (weak when all of them are)."""
    from jax import dtypes
    args = [jnp().asarray(a) if isinstance(a, (list, tuple)) else a for a in args]
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(a, dtype, weak) for a in args]


def promote_inexact(*args):
    """JAX's promote_dtypes_inexact: the result type, made floating when it is bool or integer."""
    from jax import dtypes
    args = [jnp().asarray(a) if isinstance(a, (list, tuple)) else a for a in args]
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if not is_inexact(dtype):
        dtype = default_float()
    return [convert(a, dtype, weak) for a in args]


def check_not_complex(x, name):
    if 'complex' in str(getattr(x, 'dtype', '')) or isinstance(x, complex):
        raise NotImplementedError(f'arrays of dtype complex64 are not supported by shardscope yet (it simulates '
                                  f'bool, integer and floating dtypes); jax.numpy.{name} got a complex value')


def concrete(x, context):
    """The value of x as numpy, or JAX's ConcretizationTypeError when x is traced (a shape depends on it)."""
    if is_tracer(x):
        from jax.errors import ConcretizationTypeError
        raise ConcretizationTypeError(x, context)
    return _np.asarray(x)


def static_nonzero(mask, size, fill_value=None):
    """Indices of mask's true entries, padded or cut to a static size: the positions come from counting, not from
    the values' count, so it traces (JAX's nonzero with size=). Each index array is int32."""
    j = jnp()
    mask = j.asarray(mask)
    if not is_bool(mask.dtype):
        mask = mask != 0
    flat = j.ravel(mask)
    # Entry k of the result is the flat position of the (k+1)-th true entry: counting, for each k, how many
    # positions have fewer than k+1 true entries at or before them.
    seen = j.cumsum(flat.astype(default_int()))
    counts = j.zeros(size, default_int()).at[seen].add(1, mode='drop') if size else j.zeros(0, default_int())
    flat_index = j.cumsum(counts) if size else counts
    if fill_value is None:
        fills = (0,) * max(mask.ndim, 1)
    elif _np.ndim(fill_value) == 0:
        fills = (fill_value,) * max(mask.ndim, 1)
    else:
        fills = tuple(fill_value)
        if len(fills) != mask.ndim:
            raise ValueError(f'fill_value must be a scalar or a tuple of length {mask.ndim}; got {fill_value}')
    total = j.sum(flat.astype(default_int()))
    beyond = j.arange(size) >= total
    out = []
    stride = 1
    strides = []
    for dim in reversed(mask.shape):
        strides.insert(0, stride)
        stride *= dim
    for dim, step, fill in zip(mask.shape or (1,), strides or [1], fills):
        index = (flat_index // step) % dim if dim else flat_index
        out.append(j.where(beyond, j.asarray(fill, default_int()), index).astype(default_int()))
    return tuple(out)
