"""jax.pure_callback and jax.experimental.io_callback: the host function gets numpy arrays and returns results of
the declared shapes and dtypes; core binds one pure_callback / io_callback equation (exec/host_callbacks)."""
import numpy as np

import _shardscope
from jax._src import tree as tree_util


class _FlatCallback:
    """What JAX's jaxprs show as the callback param: an object wrapping the user's function."""

    def __init__(self, fn):
        self.fn = fn

    def __repr__(self):
        return f'<jax._src.callback._FlatCallback object at {hex(id(self))}>'


def _result_specs(result_shape_dtypes):
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    shapes, dtypes = [], []
    for leaf in leaves:
        shapes.append(tuple(int(d) for d in np.shape(leaf)) if not hasattr(leaf, 'shape') else tuple(leaf.shape))
        dtypes.append(str(np.dtype(leaf.dtype) if hasattr(leaf, 'dtype') else np.result_type(leaf)))
    return shapes, dtypes, tree


def _call(primitive, callback, result_shape_dtypes, args, kwargs, vmap_method='', ordered=False):
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    shapes, dtypes, out_tree = _result_specs(result_shape_dtypes)

    def host(*arrays):
        call_args, call_kwargs = tree_util.tree_unflatten(in_tree, list(arrays))
        out = callback(*call_args, **call_kwargs)
        out_leaves = tree_util.tree_leaves(out)
        return [np.asarray(leaf) for leaf in out_leaves]

    import jax.numpy as jnp
    flat_args = [jnp.asarray(a) if isinstance(a, (np.ndarray, np.generic, float, int, bool)) else a for a in flat_args]
    outs = _shardscope.debug.host_callback_call(host, flat_args, shapes, dtypes, primitive, vmap_method or '',
                                                ordered, repr(_FlatCallback(callback)))
    return tree_util.tree_unflatten(out_tree, outs)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, vectorized=None, **kwargs):
    if vectorized is not None:
        raise ValueError('The vectorized argument of jax.pure_callback was removed in JAX v0.6.0. Use the more '
                         'general `vmap_method` argument instead.')
    if vmap_method not in (None, 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all',
                           'legacy_vectorized'):
        raise ValueError(f'Invalid vmap_method: {vmap_method}')
    return _call('pure_callback', callback, result_shape_dtypes, args, kwargs, vmap_method=vmap_method or '')


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    return _call('io_callback', callback, result_shape_dtypes, args, kwargs, ordered=ordered)
