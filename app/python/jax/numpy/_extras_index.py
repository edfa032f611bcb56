# jax.numpy extras about positions: insert/delete/append/resize, flat and multi indices, mgrid/ogrid, vectorize.
import operator as _operator

import numpy as _np

from jax.numpy._extras_util import (jnp as _jnp, canonical_axis as _axis, default_int as _default_int,
                                    is_integer as _is_integer,
                                    concrete as _concrete, is_tracer as _is_tracer, promote as _promote)


def _with_axis(a, axis):
    """JAX's axis=None convention: work on the flattened array along its only axis."""
    j = _jnp()
    a = j.asarray(a)
    if axis is None:
        return j.ravel(a), 0
    return a, _axis(axis, a.ndim)


def _along(axis, index):
    return (slice(None),) * axis + (index,)


def insert(arr, obj, values, axis=None):
    j = _jnp()
    a, axis = _with_axis(arr, axis)
    n_input = a.shape[axis]
    if isinstance(obj, slice):
        where = j.arange(*obj.indices(n_input))
    else:
        where = j.asarray(obj)
    if where.ndim > 1:
        raise ValueError('jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {}'.format(obj))
    if not _is_integer(where.dtype):
        if where.size == 0 and not hasattr(obj, 'dtype'):
            where = where.astype(_default_int())
        else:
            raise ValueError('jnp.insert(): index array must be integer typed; got {}'.format(obj))
    vals = j.asarray(values).astype(a.dtype)
    if vals.ndim < a.ndim:
        vals = j.reshape(vals, (1,) * (a.ndim - vals.ndim) + tuple(vals.shape))
    if where.size == 1:
        scalar_index = where.ndim == 0
        where = j.ravel(where)[0]
        if scalar_index:
            # A scalar position inserts values laid out along the axis (numpy's moveaxis of the first axis).
            vals = j.moveaxis(vals, 0, axis)
        where = j.full(vals.shape[axis], where, dtype=where.dtype)
    n_insert = where.shape[0]
    out_shape = list(a.shape)
    out_shape[axis] += n_insert
    vals = j.broadcast_to(vals, tuple(out_shape[:axis]) + (n_insert,) + tuple(out_shape[axis + 1:]))
    where = j.clip(j.where(where < 0, where + n_input, where), 0, n_input)
    # Inserted value i (in sorted-position order) lands i places after its position; an original element k moves
    # past every insertion at or before it.
    order = j.argsort(where, stable=True)
    value_slots = j.zeros(n_insert, where.dtype).at[order].set(where[order] + j.arange(n_insert, dtype=where.dtype))
    moved = j.sum((where[None, :] <= j.arange(n_input, dtype=where.dtype)[:, None]).astype(where.dtype), axis=1)
    old_slots = j.arange(n_input, dtype=where.dtype) + moved
    out = j.zeros(tuple(out_shape), a.dtype)
    # Every slot is written once: unique indices, which also lets grad transpose the scatters.
    out = out.at[_along(axis, value_slots)].set(vals, unique_indices=True)
    return out.at[_along(axis, old_slots)].set(a, unique_indices=True)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    j = _jnp()
    a, axis = _with_axis(arr, axis)
    n = a.shape[axis]
    if isinstance(obj, (int, _np.integer)) and not isinstance(obj, bool):
        obj = int(obj)
        if not -n <= obj < n:
            raise IndexError(f'index {obj} is out of bounds for axis {axis} with size {n}')
        obj %= n
        return j.concatenate([a[_along(axis, slice(0, obj))], a[_along(axis, slice(obj + 1, None))]], axis=axis)
    if isinstance(obj, slice):
        keep = _np.ones(n, bool)
        keep[_np.arange(n)[obj]] = False
    else:
        where = _concrete(obj, "The error occurred because of argument 'obj' of jnp.delete. To avoid this error, "
                          "pass assume_unique_indices=True and a concrete obj.")
        if where.dtype == bool:
            if where.shape != (n,):
                raise ValueError(f'np.delete(arr, obj): for boolean obj, the size of obj must match the size of '
                                 f'the array along the axis. Got obj.shape={where.shape} for axis of size {n}.')
            keep = ~where
        else:
            if where.size and not _np.issubdtype(where.dtype, _np.integer):
                raise ValueError('np.delete(): index array must be integer typed')
            keep = _np.ones(n, bool)
            keep[where.astype(_np.int64).ravel()] = False
    # The kept positions are known here: one gather of them (int32, as JAX's indices are).
    return j.take(a, j.asarray(_np.nonzero(keep)[0].astype(_np.int32)), axis=axis)


def append(arr, values, axis=None):
    j = _jnp()
    if axis is None:
        return j.concatenate([j.ravel(arr), j.ravel(values)], 0)
    return j.concatenate([j.asarray(arr), j.asarray(values)], axis=axis)


def resize(a, new_shape):
    j = _jnp()
    a = j.ravel(a)
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    for dim in new_shape:
        if _operator.index(dim) < 0:
            raise ValueError('All elements of `new_shape` must be non-negative')
    new_size = int(_np.prod(new_shape, dtype=_np.int64))
    if a.size == 0 or new_size == 0:
        return j.zeros(new_shape, a.dtype)
    repeats = -(-new_size // a.size)
    return j.reshape(j.tile(a, repeats)[:new_size], new_shape)


def ravel_multi_index(multi_index, dims, mode='raise', order='C'):
    j = _jnp()
    dims = tuple(_operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f'ravel_multi_index: length of multi_index ({len(multi_index)}) must match length of dims '
                         f'({len(dims)})')
    if order not in ('C', 'F'):
        raise ValueError("only 'C' or 'F' order is permitted")
    indices = [j.asarray(i) for i in multi_index]
    for i in indices:
        if not _is_integer(i.dtype):
            raise TypeError(f'only int indices permitted, got {i.dtype}')
    if mode == 'raise':
        for i, d in zip(indices, dims):
            value = _concrete(i, 'The error occurred because ravel_multi_index was jit-compiled with mode="raise". '
                              'Use mode="wrap" or mode="clip" instead.')
            if _np.any((value < 0) | (value >= d)):
                raise ValueError('invalid entry in coordinates array')
    elif mode == 'clip':
        indices = [j.clip(i, 0, d - 1) for i, d in zip(indices, dims)]
    elif mode == 'wrap':
        indices = [j.remainder(i, d) for i, d in zip(indices, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    axes = range(len(dims)) if order == 'C' else range(len(dims) - 1, -1, -1)
    result = j.asarray(0, dtype=indices[0].dtype if indices else _default_int())
    stride = 1
    strides = {}
    for k in reversed(list(axes)):
        strides[k] = stride
        stride *= dims[k]
    for k in range(len(dims)):
        result = result + indices[k] * strides[k]
    return result


def unravel_index(indices, shape):
    j = _jnp()
    flat = j.asarray(indices)
    try:
        shape = tuple(_operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f'unravel_index: shape should be a scalar or 1D sequence, got {shape}') from None
    total = int(_np.prod(shape, dtype=_np.int64))
    if total == 0 and flat.size:
        raise ValueError('cannot unravel index of empty array')
    # Out-of-range indices are clipped (JAX cannot raise on traced values); negative ones count from the end.
    flat = j.clip(flat, -total, total - 1)
    flat = j.where(flat < 0, flat + total, flat)
    out = []
    for size in reversed(shape):
        out.append(j.remainder(flat, size))
        flat = j.floor_divide(flat, size)
    return tuple(reversed(out))


def _grid_axis(s, name):
    j = _jnp()
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    for value in (start, s.stop, step):
        if _is_tracer(value):
            _concrete(value, f'slice entries of jnp.{name} must be concrete')
    if isinstance(step, complex) or _np.iscomplexobj(step):
        # An imaginary step asks for that many points, both ends included (numpy's index trick).
        return j.linspace(start, s.stop, int(abs(step)), endpoint=True)
    return j.arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse, name):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        j = _jnp()
        if isinstance(key, slice):
            return _grid_axis(key, self.name)
        axes = _promote(*(_grid_axis(k, self.name) for k in key))
        if not axes:
            return j.zeros((0,), _default_int()) if not self.sparse else []
        grids = j.meshgrid(*axes, indexing='ij', sparse=self.sparse)
        return list(grids) if self.sparse else j.stack(grids, 0)


mgrid = _Grid(False, 'mgrid')
ogrid = _Grid(True, 'ogrid')


def _parse_signature(signature):
    try:
        inputs, outputs = signature.replace(' ', '').split('->')

        def dims(part):
            groups = []
            for group in part.split('),'):
                group = group.strip('()')
                groups.append(tuple(d for d in group.split(',') if d))
            return groups
        return dims(inputs), dims(outputs)
    except ValueError:
        raise ValueError(f'not a valid gufunc signature: {signature}') from None


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    import functools
    import jax
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(f'jax.numpy.vectorize can only exclude integer or string arguments, but excluded={excluded!r}')
    in_core, out_core = _parse_signature(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        j = _jnp()
        static = {i: a for i, a in enumerate(args) if i in excluded}
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped = [j.asarray(a) for i, a in enumerate(args) if i not in excluded]
        names = [k for k in kwargs if k not in excluded]
        mapped += [j.asarray(kwargs[k]) for k in names]
        cores = in_core if in_core is not None else [()] * len(mapped)
        if len(cores) != len(mapped):
            raise TypeError(f'wrong number of positional arguments: expected {len(cores)}, got {len(mapped)}')
        loop_shapes, sizes = [], {}
        for a, core in zip(mapped, cores):
            if len(core) > a.ndim:
                raise ValueError(f'input with shape {tuple(a.shape)} does not have enough dimensions for all core '
                                 f'dimensions {core}')
            for name, size in zip(core, a.shape[a.ndim - len(core):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f'inconsistent size for core dimension {name!r}: {size} vs {sizes[name]}')
            loop_shapes.append(tuple(a.shape[:a.ndim - len(core)]))
        from jax.numpy._extras_shape import broadcast_shapes
        loop = broadcast_shapes(*loop_shapes) if loop_shapes else ()
        mapped = [j.broadcast_to(a, loop + tuple(a.shape[a.ndim - len(core):])) for a, core in zip(mapped, cores)]

        def call(*values):
            positional, it = [], iter(values[:len(values) - len(names)])
            for i in range(len(args)):
                positional.append(static[i] if i in static else next(it))
            return pyfunc(*positional, **static_kw, **dict(zip(names, values[len(values) - len(names):])))
        f = call
        # One vmap per broadcast loop axis, innermost last, so every element (or core block) is one call.
        for _ in loop:
            f = jax.vmap(f)
        return f(*mapped)
    return wrapped
