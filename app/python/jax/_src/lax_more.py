# The rest of jax.lax's elementwise, reduction and shape functions, each one equation of the engine's primitive
# with JAX's parameters (lax does no dtype promotion: the primitives' rules raise JAX's TypeErrors), and the
# enums lax's signatures take.
import enum

import numpy as _np

import _shardscope


def _bind(primitive, operands, **params):
    from jax.lax import _operand
    return _shardscope.bind(primitive, [_operand(x) for x in operands], params)


def _unary(primitive):
    def operation(x):
        return _bind(primitive, [x])[0]
    return operation


def _binary(primitive):
    def operation(x, y):
        return _shardscope.lax._binary(primitive, x, y)
    return operation


# name in jax.lax -> the primitive it binds.
_UNARY = {'tan': 'tan', 'sinh': 'sinh', 'cosh': 'cosh', 'asin': 'asin', 'acos': 'acos', 'atan': 'atan',
          'asinh': 'asinh', 'acosh': 'acosh', 'atanh': 'atanh', 'exp2': 'exp2', 'cbrt': 'cbrt',
          'is_finite': 'is_finite', 'population_count': 'population_count', 'clz': 'clz', 'bitwise_not': 'not'}
_BINARY = {'rem': 'rem', 'atan2': 'atan2', 'bitwise_xor': 'xor', 'shift_left': 'shift_left',
           'shift_right_arithmetic': 'shift_right_arithmetic'}


def _named(function, name):
    function.__name__ = function.__qualname__ = name
    return function


UNARY_FUNCTIONS = {name: _named(_unary(primitive), name) for name, primitive in _UNARY.items()}
BINARY_FUNCTIONS = {name: _named(_binary(primitive), name) for name, primitive in _BINARY.items()}


class RoundingMethod(enum.IntEnum):
    """How lax.round breaks ties: away from zero (JAX's default) or to the nearest even value."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class Precision(enum.Enum):
    """The precision of a dot or convolution on an accelerator (DEFAULT, HIGH, HIGHEST); the simulation computes in
    the operands' type whatever is asked, as JAX on a CPU does."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self):
        return self.name


def pow(x, y):  # noqa: A001 (jax.lax's name)
    """x ** y: a floating base with a floating exponent of its dtype, or an integer exponent of any width."""
    return _bind('pow', [x, y])[0]


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 (jax.lax's name)
    return _bind('round', [x], rounding_method=int(RoundingMethod(rounding_method)))[0]


def reciprocal(x):
    from jax._src.lax_ops import integer_pow
    return integer_pow(x, -1)


def clamp(min, x, max):  # noqa: A002 (jax.lax's parameter names)
    """x clipped to [min, max]; each bound is a scalar or has x's shape, all three of one dtype."""
    return _bind('clamp', [min, x, max])[0]


def _axes(axes, name):
    try:
        return tuple(int(a) for a in axes)
    except TypeError:
        raise TypeError(f'{name} axes must be a sequence of ints, got {axes!r}') from None


def _reduction(primitive):
    def reduce(operand, axes):
        params = {'axes': _axes(axes, primitive)}
        if primitive == 'reduce_sum':
            params['out_sharding'] = None
        return _bind(primitive, [operand], **params)[0]
    return reduce


REDUCTIONS = {name: _named(_reduction(name), name)
              for name in ('reduce_sum', 'reduce_prod', 'reduce_max', 'reduce_min', 'reduce_and', 'reduce_or',
                           'reduce_xor')}


def argmax(operand, axis, index_dtype):
    return _bind('argmax', [operand], axes=(int(axis),), index_dtype=_np.dtype(index_dtype))[0]


def argmin(operand, axis, index_dtype):
    return _bind('argmin', [operand], axes=(int(axis),), index_dtype=_np.dtype(index_dtype))[0]


def squeeze(array, dimensions):
    import jax.numpy as jnp
    ndim = jnp.ndim(array)
    dims = tuple(sorted(int(d) % ndim if ndim else int(d) for d in dimensions))
    if not dims:
        return jnp.asarray(array)
    return _bind('squeeze', [array], dimensions=dims)[0]


def concatenate(operands, dimension):
    if len(operands) == 0:
        raise ValueError('concatenate requires a non-empty sequences of arrays')
    if len(operands) == 1:
        import jax.numpy as jnp
        return jnp.asarray(operands[0])
    return _bind('concatenate', list(operands), dimension=int(dimension))[0]


def split(operand, sizes, axis=0):
    return _bind('split', [operand], sizes=tuple(int(s) for s in sizes), axis=int(axis))


def full(shape, fill_value, dtype=None, *, sharding=None):
    import jax.numpy as jnp
    if _np.ndim(fill_value) != 0:
        raise TypeError(f'full must be called with scalar fill_value, got fill_value.shape {_np.shape(fill_value)}.')
    return jnp.full(tuple(shape), fill_value, dtype=dtype, device=sharding)


def zeros_like_array(x):
    import jax.numpy as jnp
    return jnp.zeros_like(x)


def broadcast_to_rank(x, rank):
    """x with leading size-1 dimensions added up to `rank` (unchanged when it has that rank)."""
    import jax.numpy as jnp
    from jax._src.lax_ops import broadcast
    ndim = _np.ndim(x)
    if ndim == rank:
        return jnp.asarray(x)
    return broadcast(x, (1,) * (rank - ndim))


def collapse(operand, start_dimension, stop_dimension=None):
    """operand with dimensions [start, stop) merged into one."""
    import jax.numpy as jnp
    from jax._src.lax_ops import reshape
    shape = jnp.shape(operand)
    ndim = len(shape)
    start = start_dimension % ndim if ndim else start_dimension
    stop = ndim if stop_dimension is None else (stop_dimension % (ndim + 1) if stop_dimension < 0 else stop_dimension)
    size = int(_np.prod(shape[start:stop], dtype=_np.int64))
    return reshape(operand, (*shape[:start], size, *shape[stop:]))


def dot(lhs, rhs, precision=None, preferred_element_type=None, *, out_sharding=None):
    """Vector/matrix products of rank 1 or 2 operands: lhs's last dimension against rhs's first."""
    import jax.numpy as jnp
    from jax._src.lax_ops import dot_general
    lhs_ndim, rhs_ndim = jnp.ndim(lhs), jnp.ndim(rhs)
    if not (1 <= lhs_ndim <= 2 and 1 <= rhs_ndim <= 2):
        raise TypeError(f'Incompatible shapes for dot: got {jnp.shape(lhs)} and {jnp.shape(rhs)}.')
    return dot_general(lhs, rhs, (([lhs_ndim - 1], [0]), ([], [])), precision=precision,
                       preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over matching leading batch dimensions: [..., m, k] @ [..., k, n]."""
    import jax.numpy as jnp
    from jax._src.lax_ops import dot_general
    lhs_ndim, rhs_ndim = jnp.ndim(lhs), jnp.ndim(rhs)
    if lhs_ndim < 2 or lhs_ndim != rhs_ndim:
        raise ValueError(f'Arguments to batch_matmul must be at least 2D and agree on their rank, got {lhs_ndim} and '
                         f'{rhs_ndim}.')
    batch = list(range(lhs_ndim - 2))
    return dot_general(lhs, rhs, (([lhs_ndim - 1], [lhs_ndim - 2]), (batch, batch)), precision=precision)


NAMES = {**UNARY_FUNCTIONS, **BINARY_FUNCTIONS, **REDUCTIONS,
         'RoundingMethod': RoundingMethod, 'Precision': Precision, 'pow': pow, 'round': round,
         'reciprocal': reciprocal, 'clamp': clamp, 'argmax': argmax, 'argmin': argmin, 'squeeze': squeeze,
         'concatenate': concatenate, 'split': split, 'full': full, 'zeros_like_array': zeros_like_array,
         'broadcast_to_rank': broadcast_to_rank, 'collapse': collapse, 'dot': dot, 'batch_matmul': batch_matmul}
