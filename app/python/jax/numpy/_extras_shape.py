# jax.numpy extras that reshape, build or combine arrays (rot90, kron, insert, indices, mgrid, vectorize...).
import operator as _operator

import numpy as _np

from jax.numpy._extras_util import (jnp as _jnp, promote as _promote, promote_inexact as _inexact,
                                    canonical_axis as _axis, default_float as _default_float,
                                    default_int as _default_int, is_tracer as _is_tracer)


def broadcast_shapes(*shapes):
    if not shapes:
        return ()
    shapes = [(int(s),) if _np.ndim(s) == 0 else tuple(int(d) for d in s) for s in shapes]
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*((1,) * (rank - len(s)) + s for s in shapes)):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f'Incompatible shapes for broadcasting: shapes={shapes}')
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_arrays(*args):
    j = _jnp()
    arrays = [j.asarray(a) for a in args]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [a if tuple(a.shape) == shape else j.broadcast_to(a, shape) for a in arrays]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    j = _jnp()
    a = j.asarray(a)
    rows, cols = a.shape[axis1], a.shape[axis2]
    a = j.moveaxis(a, (axis1, axis2), (-2, -1))
    # The diagonal is picked by a mask and summed, as JAX's trace does (no gather).
    mask = j.eye(rows, cols, k=offset, dtype=bool)
    return j.sum(j.where(mask, a, j.zeros_like(a)), axis=(-2, -1), dtype=dtype)


def rot90(m, k=1, axes=(0, 1)):
    j = _jnp()
    m = j.asarray(m)
    if m.ndim < 2:
        raise ValueError('rot90 requires its first argument to have ndim at least two, '
                         f'but got first argument of shape {tuple(m.shape)}, which has ndim {m.ndim}')
    if len(axes) != 2:
        raise ValueError('len(axes) must be 2.')
    first, second = _axis(axes[0], m.ndim), _axis(axes[1], m.ndim)
    if first == second:
        raise ValueError('Axes must be different')
    k = _operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return j.flip(j.flip(m, first), second)
    perm = list(range(m.ndim))
    perm[first], perm[second] = perm[second], perm[first]
    if k == 1:
        return j.transpose(j.flip(m, second), perm)
    return j.flip(j.transpose(m, perm), second)


def rollaxis(a, axis, start=0):
    j = _jnp()
    a = j.asarray(a)
    n = a.ndim
    axis = _axis(axis, n)
    if not -n <= start <= n:
        raise ValueError(f'start={start} must satisfy {-n}<=start<={n}')
    if start < 0:
        start += n
    if start > axis:
        start -= 1
    return j.moveaxis(a, axis, start)


def hsplit(ary, indices_or_sections):
    j = _jnp()
    a = j.asarray(ary)
    if a.ndim == 0:
        raise ValueError('hsplit only works on arrays of 1 or more dimensions')
    return j.split(a, indices_or_sections, axis=0 if a.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    j = _jnp()
    a = j.asarray(ary)
    if a.ndim < 2:
        raise ValueError('vsplit only works on arrays of 2 or more dimensions')
    return j.split(a, indices_or_sections, axis=0)


def kron(a, b):
    j = _jnp()
    a, b = _promote(a, b)
    if a.ndim < b.ndim:
        a = j.reshape(a, (1,) * (b.ndim - a.ndim) + tuple(a.shape))
    elif b.ndim < a.ndim:
        b = j.reshape(b, (1,) * (a.ndim - b.ndim) + tuple(b.shape))
    # Interleave the axes: a's on even positions, b's on odd ones, then merge each pair.
    wide_a = j.reshape(a, tuple(d for n in a.shape for d in (n, 1)))
    wide_b = j.reshape(b, tuple(d for n in b.shape for d in (1, n)))
    return j.reshape(wide_a * wide_b, tuple(p * q for p, q in zip(a.shape, b.shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    j = _jnp()
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _promote(a, b)
    a, b = j.moveaxis(a, axisa, -1), j.moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError('Dimension must be either 2 or 3 for cross product')
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else j.zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if b.shape[-1] == 3 else j.zeros_like(b0)
    c = j.stack(broadcast_arrays(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))
    return j.moveaxis(c, 0, axisc)


def tri(N, M=None, k=0, dtype=None):
    j = _jnp()
    from jax import lax
    M = N if M is None else M
    rows = lax.broadcasted_iota('int32', (N, M), 0)
    cols = lax.broadcasted_iota('int32', (N, M), 1)
    return (rows + k >= cols).astype(_default_float() if dtype is None else dtype)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    j = _jnp()
    start, stop = _inexact(start, stop)
    exponents = _linspace(start, stop, num, endpoint, axis)
    out = j.power(j.asarray(base, exponents.dtype), exponents)
    return out if dtype is None else out.astype(dtype)


def _linspace(start, stop, num, endpoint, axis):
    j = _jnp()
    num = _operator.index(num)
    if num < 0:
        raise ValueError(f'Number of samples, {num}, must be non-negative.')
    start, stop = broadcast_arrays(start, stop)
    if start.ndim == 0:
        return j.linspace(start, stop, num, endpoint=endpoint)
    # Positions along a new axis at `axis`: start + i * step, the last one exactly stop when endpoint.
    div = (num - 1) if endpoint else num
    steps = j.arange(num, dtype=start.dtype)
    shape = (num,) + tuple(start.shape)
    steps = j.reshape(steps, (num,) + (1,) * start.ndim)
    delta = (stop - start) / div if div > 0 else j.zeros_like(start)
    out = j.broadcast_to(start, shape) + steps * delta
    if endpoint and num > 1:
        out = out.at[-1].set(stop)
    return j.moveaxis(out, 0, axis) if start.ndim else out


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    j = _jnp()
    start, stop = _inexact(start, stop)
    if not _is_tracer(start) and not _is_tracer(stop) and (_np.any(_np.asarray(start) == 0) or
                                                          _np.any(_np.asarray(stop) == 0)):
        raise ValueError('Geometric sequence cannot include zero')
    sign = j.sign(start)
    out = sign * logspace(j.log10(start / sign), j.log10(stop / sign), num, endpoint, 10.0, None, 0)
    # The ends are the given values exactly, not 10**log10(value).
    if num > 0:
        out = out.at[0].set(start)
        if endpoint and num > 1:
            out = out.at[-1].set(stop)
    out = j.moveaxis(out, 0, axis) if out.ndim > 1 else out
    return out if dtype is None else out.astype(dtype)


def select(condlist, choicelist, default=0):
    j = _jnp()
    from jax import lax
    if len(condlist) != len(choicelist):
        raise ValueError(f'condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})')
    if len(condlist) == 0:
        raise ValueError('condlist must be non-empty')
    conds = [j.asarray(c) for c in condlist]
    # The default goes first under a False condition: argmax of all-False conditions picks index 0.
    values = _promote(j.asarray(default), *(j.asarray(c) for c in choicelist))
    conditions = j.stack(broadcast_arrays(False, *conds))
    idx = j.argmax(conditions.astype(bool), axis=0)
    return lax.select_n(*broadcast_arrays(idx, *values))


def piecewise(x, condlist, funclist, *args, **kw):
    j = _jnp()
    x = j.asarray(x)
    conds = j.asarray(condlist, dtype=bool)
    if conds.ndim == x.ndim:
        conds = j.reshape(conds, (1,) + tuple(conds.shape))
    nc, nf = conds.shape[0], len(funclist)
    if nf == nc + 1:
        default, funcs = funclist[-1], list(funclist[:-1])
    elif nf == nc:
        default, funcs = 0, list(funclist)
    else:
        raise ValueError(f'with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}')

    def evaluate(f):
        return (f(x, *args, **kw) if callable(f) else j.asarray(f)).astype(x.dtype)
    # Every piece is computed on the whole input and the last true condition picks (as JAX's vmapped switch).
    out = j.broadcast_to(evaluate(default), x.shape)
    for i, f in enumerate(funcs):
        out = j.where(conds[i], evaluate(f), out)
    return out


def indices(dimensions, dtype=None, sparse=False):
    j = _jnp()
    from jax import lax
    dtype = _default_int() if dtype is None else dtype
    dimensions = tuple(_operator.index(d) for d in dimensions)
    n = len(dimensions)
    out = []
    for i, size in enumerate(dimensions):
        if sparse:
            out.append(j.reshape(j.arange(size, dtype=dtype), (1,) * i + (size,) + (1,) * (n - i - 1)))
        else:
            out.append(lax.broadcasted_iota(dtype, dimensions, i))
    if sparse:
        return tuple(out)
    return j.stack(out, 0) if out else j.zeros((0,), dtype)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    import jax
    j = _jnp()
    shape = tuple(_operator.index(s) for s in shape)
    # One vmap per axis maps the function over every index tuple, as JAX does (the function sees scalars).
    f = (lambda *idx: function(*idx, **kwargs))
    for i in range(len(shape) - 1, -1, -1):
        f = jax.vmap(f, in_axes=tuple(0 if k == i else None for k in range(len(shape))))
    return f(*(j.arange(s, dtype=dtype) for s in shape))


def iscomplexobj(x):
    if x is None:
        return False
    dtype = getattr(x, 'dtype', None)
    if dtype is None:
        dtype = _np.asarray(x).dtype
    return 'complex' in str(dtype)


def isrealobj(x):
    return not iscomplexobj(x)


def _as_dtype(value):
    from jax._src.scalar_types import _ScalarMeta
    if isinstance(value, _ScalarMeta):
        return value.dtype
    if hasattr(value, 'dtype') and not isinstance(value, (type, _np.dtype)):
        return value.dtype
    return value


def can_cast(from_, to, casting='safe'):
    from_, to = _as_dtype(from_), _as_dtype(to)
    if 'bfloat16' in (str(from_), str(to)):
        if str(from_) == str(to):
            return True
        # bfloat16 has float32's range: it widens safely to float32/64 and takes only bool and 8-bit ints.
        if str(from_) == 'bfloat16':
            return casting == 'unsafe' or str(to) in ('float32', 'float64', 'complex64', 'complex128') or \
                (casting == 'same_kind' and _np.issubdtype(_np.dtype(to), _np.inexact))
        return casting == 'unsafe' or str(from_) in ('bool', 'int8', 'uint8') or \
            (casting == 'same_kind' and not _np.issubdtype(_np.dtype(from_), _np.complexfloating))
    return bool(_np.can_cast(from_, to, casting))


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    import jax
    j = _jnp()
    arr = j.asarray(arr)
    axis = _axis(axis, arr.ndim)
    f = (lambda x: func1d(x, *args, **kwargs))
    # Trailing axes map first and land at the end; leading axes map outermost and stay in front.
    for i in range(1, arr.ndim - axis):
        f = jax.vmap(f, in_axes=i, out_axes=-1)
    for _ in range(axis):
        f = jax.vmap(f, in_axes=0, out_axes=0)
    return f(arr)
