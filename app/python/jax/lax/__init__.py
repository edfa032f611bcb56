# jax.lax: the engine's primitives with JAX's argument handling.
import _shardscope
from jax._src.control_flow import scan, fori_loop, while_loop, cond, switch, map  # noqa: F401


def with_sharding_constraint(x, shardings):
    from jax._src import tree as tree_util
    from jax._src.positional_sharding import to_engine_sharding
    from jax._src.mesh_context import on_context_mesh
    leaves, treedef = tree_util.tree_flatten(x)
    targets = tree_util.broadcast_target(shardings, x)
    targets = [on_context_mesh(t, 'with_sharding_constraint', 'shardings')
               if isinstance(t, _shardscope.PartitionSpec) else t for t in targets]
    for leaf, target in zip(leaves, targets):
        # pjit_check_aval_sharding with uneven shardings allowed: only a spec longer than the value's rank fails.
        spec = getattr(target, 'spec', None)
        if isinstance(target, _shardscope.NamedSharding) and len(spec) > len(getattr(leaf, 'shape', ())):
            _shardscope.check_annotation_divisible('with_sharding_constraint arguments', '', target,
                                                   tuple(getattr(leaf, 'shape', ())))
    return tree_util.tree_unflatten(treedef, [
        _constrained(leaf, to_engine_sharding(target, len(getattr(leaf, 'shape', ())))) for leaf, target in zip(leaves, targets)])


def _constrained(leaf, sharding):
    """One leaf under with_sharding_constraint. Eagerly JAX runs jit(identity, out_shardings=sharding), so the result
    holds the sharding object as given (P('model', None) keeps its trailing None)."""
    out = _shardscope.lax.with_sharding_constraint(leaf, sharding)
    if getattr(out, '_is_tracer', True) or not isinstance(sharding, _shardscope.NamedSharding):
        return out
    import jax
    return jax.device_put(out, sharding)


def _operand(x):
    """An operand as the engine takes it: numpy scalars and arrays as they are (a rank-0 one becomes a literal in a
    traced program, as JAX inlines it), anything else through jnp.asarray."""
    import numpy as np
    import jax.numpy as jnp
    return x if isinstance(x, (np.ndarray, np.generic)) else jnp.asarray(x)


def _elementwise(primitive, *operands):
    return _shardscope.bind(primitive, [_operand(x) for x in operands], {})[0]


def erf(x):
    return _elementwise('erf', x)


def erfc(x):
    return _elementwise('erfc', x)


def erf_inv(x):
    return _elementwise('erf_inv', x)


def _binary(primitive, x, y):
    return _shardscope.lax._binary(primitive, x, y)


def _define_operations():
    """lax's binary operations (a weakly typed operand takes the other's dtype) and plain unary ones, by name."""
    binary = {'sub': 'sub', 'div': 'div', 'lt': 'lt', 'gt': 'gt', 'le': 'le', 'ge': 'ge', 'eq': 'eq', 'ne': 'ne',
              'bitwise_and': 'and', 'bitwise_or': 'or'}
    for name, primitive in binary.items():
        def operation(x, y, primitive=primitive):
            return _binary(primitive, x, y)
        operation.__name__ = operation.__qualname__ = name
        globals()[name] = operation
    for name in ('square', 'lgamma', 'digamma'):
        def unary(x, primitive=name):
            return _elementwise(primitive, x)
        unary.__name__ = unary.__qualname__ = name
        globals()[name] = unary


_define_operations()


def expand_dims(array, dimensions):
    """lax.expand_dims: a broadcast_in_dim adding size-1 dimensions at `dimensions`."""
    import numpy as np
    shape = list(np.shape(array))
    ndim_out = len(shape) + len(dimensions)
    dims = [d + ndim_out if d < 0 else d for d in dimensions]
    if any(not 0 <= d < ndim_out for d in dims):
        raise ValueError(f'axis {dimensions} is out of bounds for array of dimension {ndim_out}')
    if len(set(dims)) != len(dims):
        raise ValueError(f'repeated axis in lax.expand_dims: {dims}')
    for d in sorted(set(dims)):
        shape.insert(d, 1)
    kept = [i for i in range(ndim_out) if i not in set(dims)]
    return _shardscope.lax._broadcast_in_dim(array, tuple(shape), kept)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """lax.full_like: `fill_value` in x's shape and dtype (or the given ones)."""
    import jax.numpy as jnp
    return jnp.full_like(x, fill_value, dtype=dtype if dtype is not None else x.dtype, shape=shape)


def nextafter(x1, x2):
    return _elementwise('nextafter', x1, x2)


def shift_right_logical(x, y):
    return _elementwise('shift_right_logical', x, y)


def max(x, y):
    return _elementwise('max', x, y)


def min(x, y):
    return _elementwise('min', x, y)


# ---- Collectives (jax/_src/lax/parallel.py): JAX's signatures and keywords, mapped over pytree leaves; the
# engine binds the primitives, inserts the check_vma casts and raises JAX's errors.

def _axis_names(axis_name, api):
    """JAX's axis_name argument as a tuple of names (a tuple or list means several axes)."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        if isinstance(name, int) and not isinstance(name, bool):
            raise NotImplementedError(
                f'jax.lax.{api} over positional (integer) axes is not supported by shardscope; got axis_name={axis_name!r}')
        if not isinstance(name, str):
            raise NotImplementedError(
                f'jax.lax.{api} with a non-string axis name is not supported by shardscope; got {name!r}')
    return names


def _no_groups(axis_index_groups, api):
    if axis_index_groups is not None:
        raise NotImplementedError(f'jax.lax.{api} with axis_index_groups is not supported by shardscope')


def _tree_map(f, x):
    from jax._src import tree as tree_util
    return tree_util.tree_map(f, x)


def _is_python_scalar(x):
    return isinstance(x, (int, float, complex)) and not isinstance(x, bool)


def psum(x, axis_name, *, axis_index_groups=None):
    axes = _axis_names(axis_name, 'psum')
    if not axes:
        return x
    _no_groups(axis_index_groups, 'psum')

    def reduce(leaf):
        # A Python number does not vary over any axis: psum is the axis size times it, computed statically.
        if _is_python_scalar(leaf):
            return type(leaf)(_shardscope.lax.axis_size(list(axes))) * leaf
        return _shardscope.lax.psum(leaf, list(axes))
    return _tree_map(reduce, x)


def pmean(x, axis_name, *, axis_index_groups=None):
    axes = _axis_names(axis_name, 'pmean')
    if not axes:
        return x
    _no_groups(axis_index_groups, 'pmean')
    return _tree_map(lambda leaf: _shardscope.lax.pmean(leaf, list(axes)), x)


def pmax(x, axis_name, *, axis_index_groups=None):
    axes = _axis_names(axis_name, 'pmax')
    if not axes:
        return x
    _no_groups(axis_index_groups, 'pmax')
    return _tree_map(lambda leaf: _shardscope.lax.pmax(leaf, list(axes)), x)


def pmin(x, axis_name, *, axis_index_groups=None):
    axes = _axis_names(axis_name, 'pmin')
    if not axes:
        return x
    _no_groups(axis_index_groups, 'pmin')
    return _tree_map(lambda leaf: _shardscope.lax.pmin(leaf, list(axes)), x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to='varying'):
    allowed = {'varying', 'reduced', 'invarying'}
    if to not in allowed:
        raise ValueError(f'Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: {allowed}')
    if to == 'reduced':
        raise NotImplementedError("jax.lax.all_gather(..., to='reduced') is not supported by shardscope")
    axes = _axis_names(axis_name, 'all_gather')
    if not axes:
        return x
    if to == 'invarying':
        if axis_index_groups is not None:
            raise NotImplementedError
        return _tree_map(
            lambda leaf: _shardscope.lax.all_gather_invariant(leaf, list(axes), int(axis), bool(tiled)), x)
    _no_groups(axis_index_groups, 'all_gather')
    return _tree_map(lambda leaf: _shardscope.lax.all_gather(leaf, list(axes), int(axis), bool(tiled)), x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    axes = _axis_names(axis_name, 'psum_scatter')
    if not axes:
        return x
    _no_groups(axis_index_groups, 'psum_scatter')
    return _tree_map(
        lambda leaf: _shardscope.lax.psum_scatter(leaf, list(axes), int(scatter_dimension), bool(tiled)), x)


def ppermute(x, axis_name, perm):
    axes = _axis_names(axis_name, 'ppermute')
    if not isinstance(perm, (list, tuple)):
        raise TypeError(f'`perm` passed to `jax.lax.ppermute` must be a list or a tuple. Got perm of type {type(perm)}')
    pairs = [tuple(int(i) for i in pair) for pair in perm]
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f'ppermute perm entries must be (source, destination) pairs; got {perm!r}')
    return _tree_map(lambda leaf: _shardscope.lax.ppermute(leaf, list(axes), pairs), x)


def pshuffle(x, axis_name, perm):
    if set(perm) != set(range(len(perm))):
        raise ValueError(f'`perm` does not represent a permutation: {perm}')
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    axes = _axis_names(axis_name, 'all_to_all')
    _no_groups(axis_index_groups, 'all_to_all')
    is_tuple = isinstance(axis_name, (tuple, list))
    return _tree_map(lambda leaf: _shardscope.lax.all_to_all(
        leaf, list(axes), int(split_axis), int(concat_axis), bool(tiled), is_tuple), x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def axis_index(axis_name):
    axes = _axis_names(axis_name, 'axis_index')
    return _shardscope.lax.axis_index(list(axes), isinstance(axis_name, (tuple, list)))


def _axis_size(axis_name):
    return _shardscope.lax.axis_size(list(_axis_names(axis_name, 'axis_size')))


# JAX's function is lax.axis_size, and its repr says so.
_axis_size.__name__ = _axis_size.__qualname__ = 'axis_size'


def _pcast(x, axis_name, *, to):
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f'{axis_name=} must be a tuple or a str. Got {axis_name}')
    axes = _axis_names(axis_name, 'pcast')
    if not axis_name:
        return x
    allowed = {'unreduced', 'reduced', 'varying'}
    if to not in allowed:
        raise ValueError(f'Got unexpected `to` value. Allowed `to` values are: {allowed}')
    return _tree_map(lambda leaf: _shardscope.lax.pcast(leaf, list(axes), to), x)


def _pvary(x, axis_name):
    axes = _axis_names(axis_name, 'pvary')
    return _tree_map(lambda leaf: _shardscope.lax.pvary(leaf, list(axes)), x)


def pbroadcast(x, axis_name, source):
    raise NotImplementedError('jax.lax.pbroadcast is not supported by shardscope')


def _stack(operands, axis=0):
    """lax.stack: the operands joined along a new axis (the stack primitive)."""
    import jax.numpy as jnp
    return _shardscope.lax._stack([jnp.asarray(op) for op in operands], int(axis))


def _unstack(x, axis=0):
    """lax.unstack: a tuple of the slices of x along axis (the unstack primitive)."""
    import jax.numpy as jnp
    return _shardscope.lax._unstack(jnp.asarray(x), int(axis))


# JAX's functions are lax.stack and lax.unstack, and their reprs say so.
_stack.__name__ = _stack.__qualname__ = 'stack'
_unstack.__name__ = _unstack.__qualname__ = 'unstack'


def _versioned_collective(name):
    """The collectives that appeared or went away in a JAX release, per the session's JAX version."""
    version = _shardscope.jax_version_info()
    if name == 'axis_size' and version >= (0, 6, 1):
        return _axis_size
    if name == 'pcast' and version >= (0, 8, 2):
        return _pcast
    if name == 'pvary':
        if (0, 6, 0) <= version < (0, 8, 2):
            return _pvary
        if (0, 8, 2) <= version < (0, 10, 0):
            import warnings
            warnings.warn("jax.lax.pvary is deprecated. Use `jax.lax.pcast(..., to='varying')`",
                          DeprecationWarning, stacklevel=3)
            return _pvary
        if (0, 10, 0) <= version < (0, 11, 0):
            raise AttributeError("jax.lax.pvary was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; "
                                 "use `jax.lax.pcast(..., to='varying')")
    # The stack and unstack primitives (and their lax functions) arrived in 0.10.1.
    if name in ('stack', 'unstack') and version >= (0, 10, 1):
        return _stack if name == 'stack' else _unstack
    if name in ('axis_size', 'pcast', 'pvary', 'stack', 'unstack'):
        raise AttributeError(f"module 'jax.lax' has no attribute '{name}'")
    return None


from jax._src.lax_ops import (dot_general, conv_general_dilated, conv, conv_with_general_padding,  # noqa: F401,E402
                              conv_dimension_numbers, ConvDimensionNumbers)
from jax._src.lax_ops import (dynamic_update_slice, dynamic_update_slice_in_dim, dynamic_update_index_in_dim,  # noqa: F401,E402,E501
                              cumsum, cumprod, cummax, cummin)
from jax._src.lax_ops import (select, select_n, broadcast_in_dim, broadcast, reshape, transpose, rev, pad,  # noqa: F401,E402
                              integer_pow, convert_element_type, iota, broadcasted_iota, slice, dynamic_slice,
                              dynamic_slice_in_dim, dynamic_index_in_dim, slice_in_dim, index_in_dim,
                              rsqrt, tanh, log, sqrt, logistic, abs, neg, sign, floor, ceil, log1p, expm1)


from jax._src.lax_more import NAMES as _MORE_NAMES  # noqa: E402

globals().update(_MORE_NAMES)

from jax._src.windowed import NAMES as _WINDOW_NAMES  # noqa: E402

globals().update(_WINDOW_NAMES)


def stop_gradient(x):
    """lax.stop_gradient over a pytree: each array leaf through the stop_gradient primitive, keys as they are."""
    import jax.numpy as jnp

    def stop(leaf):
        if getattr(leaf, 'dtype', None) is not None and str(leaf.dtype).startswith('key<'):
            return leaf
        return _shardscope.lax._stop_gradient(jnp.asarray(leaf))
    return _tree_map(stop, x)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    return tuple(_shardscope.lax.sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1))


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    versioned = _versioned_collective(name)
    if versioned is not None:
        return versioned
    engine = getattr(_shardscope, 'lax', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.lax.{name} is not supported by shardscope')
