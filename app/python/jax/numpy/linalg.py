# jax.numpy.linalg: norm as linalg.py computes it, over the engine's jnp functions.
import numpy as _np


def norm(x, ord=None, axis=None, keepdims=False):
    import jax.numpy as jnp
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(jnp.float32)
    ndim = x.ndim
    if axis is None:
        # NumPy admits any rank when ord is None: the 2-norm of the flattened array.
        if ord is None:
            return jnp.sqrt(jnp.sum(x * x, keepdims=keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(a % ndim if -ndim <= a < ndim else a for a in axis)
    else:
        axis = (axis % ndim if -ndim <= axis < ndim else axis,)
    for a in axis:
        if not 0 <= a < ndim:
            raise ValueError(f'axis {a} is out of bounds for array of dimension {ndim}')
    if len(axis) == 1:
        return _vector_norm(x, 2 if ord is None else ord, axis, keepdims)
    if len(axis) == 2:
        row_axis, col_axis = axis
        if ord is None or ord in ('f', 'fro'):
            return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims))
        if ord in (1, -1):
            if not keepdims and col_axis > row_axis:
                col_axis -= 1
            sums = jnp.sum(jnp.abs(x), axis=row_axis, keepdims=keepdims)
            return jnp.max(sums, axis=col_axis, keepdims=keepdims) if ord == 1 else \
                jnp.min(sums, axis=col_axis, keepdims=keepdims)
        if ord in (_np.inf, -_np.inf):
            if not keepdims and row_axis > col_axis:
                row_axis -= 1
            sums = jnp.sum(jnp.abs(x), axis=col_axis, keepdims=keepdims)
            return jnp.max(sums, axis=row_axis, keepdims=keepdims) if ord == _np.inf else \
                jnp.min(sums, axis=row_axis, keepdims=keepdims)
        if ord in ('nuc', 2, -2):
            raise NotImplementedError(f'jax.numpy.linalg.norm with ord={ord!r} (singular values) is not supported '
                                      'by shardscope')
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    raise ValueError(f'Improper number of axes for norm: axis={axis}. Pass one axis to compute a vector-norm, or '
                     'two axes to compute a matrix-norm.')


def _vector_norm(x, ord, axis, keepdims):
    # linalg.vector_norm.
    import jax.numpy as jnp
    if ord is None or ord == 2:
        return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims))
    if ord == _np.inf:
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == -_np.inf:
        return jnp.min(jnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return jnp.sum(x != 0, dtype=x.dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    abs_x = jnp.abs(x)
    out = jnp.sum(abs_x ** ord, axis=axis, keepdims=keepdims)
    return out ** (1.0 / ord)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.numpy.linalg.{name} is not supported by shardscope')
