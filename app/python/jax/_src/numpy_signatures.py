# jnp functions whose JAX signatures take more than the engine's bindings: the extra arguments are applied here,
# following jax/_src/numpy/reductions.py and lax_numpy.py, and the engine does the work.
import _shardscope

_engine = _shardscope.numpy


def _jnp():
    import jax.numpy as jnp
    return jnp


def _reduction(name, identity, combine):
    """jnp.<name>(a, axis, out, keepdims, initial, where): the mask fills with the identity (JAX's init_val) and
    `initial` is combined with the result afterwards, as JAX's _reduction does."""
    base = getattr(_engine, name)
    has_identity = identity is not None

    def reduce(a, axis=None, out=None, keepdims=False, initial=None, where=None, **kwargs):
        if initial is None and where is None:
            return base(a, axis=axis, out=out, keepdims=keepdims, **kwargs)
        return _masked(a, axis, out, keepdims, initial, where, kwargs)

    def _masked(a, axis, out, keepdims, initial, where, kwargs):
        jnp = _jnp()
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        a = jnp.asarray(a)
        if initial is None and not has_identity and where is not None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                             f"where mask one has to specify 'initial'")
        fill = identity(a.dtype) if has_identity else initial
        if where is not None:
            a = jnp.where(where, a, jnp.asarray(fill, dtype=a.dtype))
        axes = tuple(range(a.ndim)) if axis is None else (axis if isinstance(axis, (tuple, list)) else (axis,))
        empty = any(a.shape[d] == 0 for d in axes)
        if empty and not has_identity:
            # No element to reduce: the result is `initial` everywhere (the reduction's identity then).
            shape = tuple(1 if d in {x % a.ndim for x in axes} else n for d, n in enumerate(a.shape))
            result = jnp.full(shape, initial, dtype=a.dtype)
            return result if keepdims else jnp.squeeze(result, axis=tuple(x % a.ndim for x in axes))
        result = base(a, axis=axis, keepdims=keepdims, **kwargs)
        if initial is not None:
            initial_arr = jnp.asarray(initial, dtype=result.dtype)
            if initial_arr.shape != ():
                raise ValueError(f"initial value must be a scalar. Got array of shape {initial_arr.shape}")
            result = combine(jnp, initial_arr, result)
        return result
    if has_identity:
        # sum and prod take dtype second, as numpy's do.
        def reduce_with_dtype(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
                              promote_integers=True):
            extra = {} if dtype is None else {'dtype': dtype}
            return reduce(a, axis, out, keepdims, initial, where, **extra)
        chosen = reduce_with_dtype
    else:
        chosen = reduce
    chosen.__name__ = chosen.__qualname__ = name
    return chosen


def _zero(dtype):
    return 0


def _one(dtype):
    return 1


sum = _reduction('sum', _zero, lambda jnp, a, b: jnp.add(a, b))  # noqa: A001
prod = _reduction('prod', _one, lambda jnp, a, b: jnp.multiply(a, b))
max = _reduction('max', None, lambda jnp, a, b: jnp.maximum(a, b))  # noqa: A001
min = _reduction('min', None, lambda jnp, a, b: jnp.minimum(a, b))  # noqa: A001
amax = _reduction('amax', None, lambda jnp, a, b: jnp.maximum(a, b))
amin = _reduction('amin', None, lambda jnp, a, b: jnp.minimum(a, b))


def _holds_none(object):
    """A None anywhere in the (nested) lists and tuples jnp.array reads."""
    if object is None:
        return True
    return isinstance(object, (list, tuple)) and any(_holds_none(item) for item in object)


def array(object, dtype=None, copy=True, order='K', ndmin=0, *, device=None, out_sharding=None):
    """JAX's jnp.array: copy has no effect on immutable arrays; ndmin adds leading axes; device places it."""
    if order is not None and order != 'K':
        raise NotImplementedError("Only implemented for order='K'")
    if _holds_none(object):
        raise ValueError('None is not a valid value for jnp.array')
    result = _keep_weak_type(_engine.array(object, dtype), object, dtype)
    return _finish(result, ndmin, device, out_sharding)


def _keep_weak_type(result, object, dtype):
    """JAX's jnp.array keeps a Python number (not a bool) or a weakly typed array weakly typed when no dtype is
    given: Array(42, dtype=int32, weak_type=True)."""
    from jax.dtypes import is_weakly_typed
    if dtype is not None or not is_weakly_typed(object) or result.weak_type:
        return result
    import _shardscope
    return _shardscope.lax._convert_element_type(result, result.dtype, True)


def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    if order is not None and order != 'K':
        raise NotImplementedError("Only implemented for order='K'")
    if _holds_none(a):
        raise ValueError('None is not a valid value for jnp.array')
    return _finish(_keep_weak_type(_engine.asarray(a, dtype), a, dtype), 0, device, out_sharding)


def _finish(result, ndmin, device, out_sharding):
    ndmin = int(ndmin)
    if ndmin > result.ndim:
        result = result.reshape((1,) * (ndmin - result.ndim) + tuple(result.shape))
    target = device if device is not None else out_sharding
    if target is not None:
        import jax
        result = jax.device_put(result, target)
    return result


def _created(result, device, out_sharding):
    # util.choose_device_or_out_sharding: one placement at most.
    if device is not None and out_sharding is not None:
        raise ValueError(f'Only one of `device` or `out_sharding` can be set. Got device={device} and '
                         f'out_sharding={out_sharding}')
    from jax._src.sharding_in_types import place_out_sharding
    return place_out_sharding(result, device if device is not None else out_sharding)


def canonicalize_shape(shape):
    """jnp's canonicalize_shape: a scalar stands for a one-dim shape; every entry must be a concrete integer, else
    JAX's TypeError quoting the shape (with the jit hint and each tracer's origin when one is traced)."""
    import operator
    import types
    import numpy as np
    if isinstance(shape, types.GeneratorType):
        raise TypeError('expected sequence object with len >= 0 or a single integer')
    if not isinstance(shape, (tuple, list)) and (getattr(shape, 'ndim', None) == 0 or np.ndim(shape) == 0):
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        pass
    message = f'Shapes must be 1D sequences of concrete values of integer type, got {shape}.'
    traced = [d for d in shape if getattr(d, '_is_tracer', False) and getattr(d, '_known_value', None) is None]
    if traced:
        from jax import errors
        message += ('\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.'
                    + ''.join(errors._origin_msg(d) for d in traced))
    raise TypeError(message)


def _check_forgot_shape_tuple(name, shape, dtype):
    """jnp.zeros(2, 3): JAX's hint that the shape wanted a tuple."""
    if isinstance(dtype, int) and isinstance(shape, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally write "
                        f"`jax.numpy.{name}({shape}, {dtype})` when you meant `jax.numpy.{name}(({shape}, {dtype}))`, "
                        "i.e. with a single tuple argument for the shape?")


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    _check_forgot_shape_tuple('zeros', shape, dtype)
    return _created(_engine.zeros(canonicalize_shape(shape), dtype), device, out_sharding)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    _check_forgot_shape_tuple('ones', shape, dtype)
    return _created(_engine.ones(canonicalize_shape(shape), dtype), device, out_sharding)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    return _created(_engine.full(canonicalize_shape(shape), fill_value, dtype), device, out_sharding)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """jnp.dot: with keyword arguments, JAX's dot_general contracting a's last axis with b's second-to-last (its
    only one for a vector); scalars multiply."""
    if precision is None and preferred_element_type is None and out_sharding is None:
        return _engine.dot(a, b)
    jnp = _jnp()
    from jax import lax
    a, b = jnp.asarray(a), jnp.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        from jax._src.sharding_in_types import place_out_sharding
        return place_out_sharding(jnp.multiply(a, b), out_sharding)
    contract = ((a.ndim - 1,), (0 if b.ndim == 1 else b.ndim - 2,))
    return lax.dot_general(a, b, (contract, ((), ())), precision, preferred_element_type, out_sharding=out_sharding)


def transpose_method(self, *axes):
    """x.transpose(): numpy's forms, x.transpose(), x.transpose((1, 0)) and x.transpose(1, 0)."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _jnp().transpose(self, axes if axes else None)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """jnp.matmul; with out_sharding= the product is typed with that sharding (JAX passes it to dot_general)."""
    from jax._src.sharding_in_types import with_out_sharding
    return with_out_sharding(_engine.matmul, out_sharding, a, b)


def reshape(a, shape=None, order='C', *, copy=None, out_sharding=None):
    """jnp.reshape; with out_sharding= the result is typed with that sharding, as lax.reshape's is."""
    if shape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    if order != 'C':
        raise NotImplementedError("jnp.reshape's order='F' and order='A' are not supported by shardscope")
    try:
        iter(shape)
    except TypeError:
        shape = [shape]  # a single size (an int or a traced integer), as JAX's _compute_newshape wraps it
    from jax._src.sharding_in_types import with_out_sharding
    return with_out_sharding(lambda x: _engine.reshape(x, shape), out_sharding, a)


def _is_duck_array(a):
    """A shape-and-dtype object that is not an array (a ShapeDtypeStruct, say): from 0.4.12 the *_like functions
    take its shape, dtype and sharding, as JAX's support for duck-typed arguments does."""
    import numpy as np
    if getattr(a, '_is_tracer', False) or isinstance(a, (np.ndarray, np.generic)) or type(a).__name__ == 'ArrayImpl':
        return False
    return hasattr(a, 'shape') and hasattr(a, 'dtype') and _shardscope.jax_version_info() >= (0, 4, 12)


def _like_sharding(a, shape, weak):
    """The sharding lax.full_like gives a new array made like a committed concrete array: its own, when the shapes
    agree (or it is replicated) and `a` is not weakly typed. (A traced value's typed sharding the engine's *_like
    gives already.) A duck-typed object counts as committed, as it has no such flag."""
    if getattr(a, '_is_tracer', False) or weak or getattr(a, 'sharding', None) is None:
        return None
    committed = getattr(a, '_committed', True) if _is_duck_array(a) else getattr(a, 'committed', False)
    if not committed:
        return None
    if shape is not None and tuple(shape) != tuple(getattr(a, 'shape', ())) and not a.sharding.is_fully_replicated:
        return None
    return a.sharding


def _made_like(result, a, dtype, shape, device, out_sharding):
    if device is not None or out_sharding is not None:
        return _created(result, device, out_sharding)
    weak = dtype is None and bool(getattr(a, 'weak_type', False))
    sharding = _like_sharding(a, shape, weak)
    if sharding is None:
        return result
    from jax._src.sharding_in_types import place_out_sharding
    return place_out_sharding(result, sharding)


def _filled_like(a, kind, fill_value, dtype, shape):
    """The new array's values (`kind` is 'zeros', 'ones' or 'full'): `a`'s shape and dtype unless given; a
    duck-typed `a` is read for them, never made an array."""
    if _is_duck_array(a):
        weak = dtype is None and bool(getattr(a, 'weak_type', False))
        result = _engine.full(tuple(a.shape) if shape is None else shape, fill_value,
                              a.dtype if dtype is None else dtype)
        return _shardscope.lax._convert_element_type(result, result.dtype, True) if weak else result
    if shape is not None:
        return _engine.full(shape, fill_value, dtype if dtype is not None else _jnp().asarray(a).dtype)
    if kind == 'full':
        return _engine.full_like(a, fill_value, dtype)
    return getattr(_engine, f'{kind}_like')(a, dtype)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    return _made_like(_filled_like(a, 'full', fill_value, dtype, shape), a, dtype, shape, device, out_sharding)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    return _made_like(_filled_like(a, 'zeros', 0, dtype, shape), a, dtype, shape, device, out_sharding)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    return _made_like(_filled_like(a, 'ones', 1, dtype, shape), a, dtype, shape, device, out_sharding)


def empty_like(prototype, dtype=None, shape=None, *, device=None, out_sharding=None):
    return zeros_like(prototype, dtype, shape, device=device, out_sharding=out_sharding)


def _explicit_context():
    """The context mesh when it has Explicit axes (JAX's get_abstract_mesh()._any_axis_explicit), else None."""
    import jax
    mesh = jax.sharding.get_abstract_mesh()
    kinds = getattr(mesh, 'axis_types', None) or ()
    return mesh if any('Explicit' in str(kind) for kind in kinds) else None


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """jnp.repeat; under Explicit axes the result keeps the operand's sharding, and repeating along a sharded
    axis (or a flattened array) needs out_sharding, as JAX's does."""
    from jax._src.sharding_in_types import with_out_sharding
    call = lambda x: _engine.repeat(x, repeats, axis, total_repeat_length=total_repeat_length)
    if out_sharding is not None:
        return with_out_sharding(call, out_sharding, a)
    if _explicit_context() is not None:
        import jax
        spec = jax.typeof(_jnp().asarray(a)).sharding.spec
        if axis is None or spec.partitions[axis] is not None:
            raise ValueError('Please pass sharding to `jnp.repeat` via `out_sharding` parameter.')
    return call(a)


def tile(A, reps):
    """jnp.tile; under Explicit axes a dim tiled more than once must be unsharded (JAX's tile rule)."""
    import jax
    a = _jnp().asarray(A)
    reps_tuple = (reps,) if isinstance(reps, int) else tuple(reps)
    if _explicit_context() is not None:
        full_reps = (1,) * (a.ndim - len(reps_tuple)) + reps_tuple
        typed = jax.typeof(a)
        spec = typed.sharding.spec
        if len(full_reps) == a.ndim:
            for i, (r, part) in enumerate(zip(full_reps, spec)):
                if r != 1 and part is not None:
                    raise _shardscope.ShardingTypeError(
                        f'Operand cannot be sharded on dimension {i} when the tiling is non-trivial. Got input type: '
                        f'{typed} with reps: {full_reps}')
    return _engine.tile(a, reps_tuple)


# mean, var, std, any and all with where= (and var/std's correction=): the masked elements are left out of the
# reduction and of the count; without a mask the engine's reductions run as they are.
def _engine_numpy():
    return _shardscope.numpy


def _masked_count(a, where, axis, keepdims):
    jnp = _jnp()
    return jnp.sum(jnp.broadcast_to(jnp.asarray(where, dtype=bool), a.shape), axis=axis, keepdims=keepdims)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None, upcast_f16_for_computation=True):
    _no_out('mean', out)
    if where is None:
        return _engine_numpy().mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    jnp = _jnp()
    a = jnp.asarray(a)
    # The unmasked mean's result type (floating for integer input), taken from a one-element mean.
    result_dtype = _engine_numpy().mean(jnp.zeros((1,), a.dtype), dtype=dtype).dtype
    total = jnp.sum(jnp.where(where, a, jnp.zeros((), a.dtype)).astype(result_dtype), axis=axis, keepdims=keepdims)
    return (total / _masked_count(a, where, axis, keepdims).astype(result_dtype)).astype(result_dtype)


def _ddof(ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    _no_out('var', out)
    ddof = _ddof(ddof, correction)
    if where is None:
        return _engine_numpy().var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    jnp = _jnp()
    a = jnp.asarray(a)
    centre = mean(a, axis=axis, dtype=dtype, keepdims=True, where=where)
    squares = jnp.square(a.astype(centre.dtype) - centre)
    total = jnp.sum(jnp.where(where, squares, jnp.zeros((), squares.dtype)), axis=axis, keepdims=keepdims)
    count = _masked_count(a, where, axis, keepdims).astype(centre.dtype) - ddof
    return total / count


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    _no_out('std', out)
    ddof = _ddof(ddof, correction)
    if where is None:
        return _engine_numpy().std(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return _jnp().sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))


def masked_any(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out('any', out)
    if where is not None:
        a = _jnp().where(where, _jnp().asarray(a, dtype=bool), False)
    return _engine_numpy().any(a, axis=axis, keepdims=keepdims)


masked_any.__name__ = masked_any.__qualname__ = 'any'


def masked_all(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out('all', out)
    if where is not None:
        a = _jnp().where(where, _jnp().asarray(a, dtype=bool), True)
    return _engine_numpy().all(a, axis=axis, keepdims=keepdims)


masked_all.__name__ = masked_all.__qualname__ = 'all'
