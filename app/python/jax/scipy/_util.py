# What jax.scipy's functions share: JAX's argument checks and promotions, and dtype-matched constants.
import numpy as _np

import _shardscope
from jax.numpy._extras_util import promote_inexact as _promote_inexact


def check_arraylike(name, *args):
    """JAX's check_arraylike: arrays and scalars only, a list or tuple names its position."""
    for position, arg in enumerate(args):
        if isinstance(arg, (list, tuple)):
            raise TypeError(f'{name} requires ndarray or scalar arguments, got {type(arg)} at position {position}.')


def promote_args_inexact(name, *args):
    """JAX's promote_args_inexact: arraylike checks, rank promotion of mixed non-scalar ranks, then one inexact
    dtype (Python scalars stay weak only when every argument is)."""
    import jax.numpy as jnp
    from jax import lax
    check_arraylike(name, *args)
    shapes = [_np.shape(arg) for arg in args]
    nonscalar_ranks = {len(shape) for shape in shapes if shape}
    if len(args) > 1 and len({len(s) for s in shapes}) > 1 and len(nonscalar_ranks) > 1:
        rank = len(_np.broadcast_shapes(*shapes))
        args = [lax.broadcast(jnp.asarray(arg), (1,) * (rank - len(shape))) if len(shape) < rank else arg
                for arg, shape in zip(args, shapes)]
    return _promote_inexact(*args)


def const(example, value):
    """lax._const: `value` as a (strongly typed) scalar of `example`'s dtype."""
    return _np.array(value, dtype=_np.dtype(str(example.dtype)))


def bind(primitive, *operands, **params):
    return _shardscope.bind(primitive, list(operands), params)[0]
