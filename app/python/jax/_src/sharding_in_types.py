# reshard, auto_axes and explicit_axes: pytrees flattened here, the work done by the engine.
import functools

import _shardscope
from jax._src import tree as tree_util
from jax._src.api import _flat_function


def _spec_list(shardings, count):
    if shardings is None:
        return None
    specs = [s.spec if isinstance(s, _shardscope.NamedSharding) else s
             for s in tree_util.tree_leaves(shardings, is_leaf=lambda x: x is None)]
    return specs * count if len(specs) == 1 and count != 1 else specs


def _axes_list(axes):
    if axes is None:
        return []
    return [axes] if isinstance(axes, str) else list(axes)


def reshard(xs, out_shardings):
    leaves, treedef = tree_util.tree_flatten(xs)
    targets = tree_util.broadcast_target(out_shardings, xs)
    return tree_util.tree_unflatten(treedef, [_shardscope.reshard(x, t) for x, t in zip(leaves, targets)])


def place_out_sharding(x, sharding):
    """Where an out_sharding (or device) argument puts a new array: a traced value gets the sharding in its type,
    as JAX's creation ops take it through their sharding parameter; a concrete one is placed as device_put places
    it (a bare PartitionSpec on the mesh set with jax.set_mesh)."""
    if sharding is None:
        return x
    if getattr(x, '_is_tracer', False) and not isinstance(sharding, _shardscope.Device):
        return reshard(x, sharding)
    import jax
    return jax.device_put(x, sharding)


def _mode_switch(engine_call, sharding_keyword, fun, axes, default_shardings):
    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        shardings = kwargs.pop(sharding_keyword, default_shardings)
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        out_store = [None]
        flat = _flat_function(fun, in_tree, out_store)
        count = len(leaves) if sharding_keyword == 'in_sharding' else 1
        outs = engine_call(flat, leaves, _spec_list(shardings, count), _axes_list(axes))
        return tree_util.tree_unflatten(out_store[0], outs)
    return wrapper


def _eager_auto_axes(fun, axes, out_sharding, args, kwargs):
    """auto_axes called outside any trace on placed arrays: as JAX does eagerly, the function runs on concrete
    arrays mesh_cast onto the mesh with the axes made Auto (their values stay, their types lose those axes), under
    that abstract mesh; its results are placed as out_sharding says on the original mesh."""
    import jax
    from jax.sharding import AxisType, Mesh, NamedSharding
    mesh = jax.sharding.get_abstract_mesh()
    names = _axes_list(axes) or list(mesh.axis_names)

    def auto_mesh_of(concrete):
        types = tuple(AxisType.Auto if n in names else t for n, t in zip(concrete.axis_names, concrete.axis_types))
        return Mesh(concrete.devices, concrete.axis_names, axis_types=types)

    def cast(leaf):
        sharding = getattr(leaf, 'sharding', None)
        if not isinstance(sharding, NamedSharding) or getattr(leaf, '_is_tracer', False):
            return leaf
        return jax.device_put(leaf, NamedSharding(auto_mesh_of(sharding.mesh), sharding.spec))

    args, kwargs = tree_util.tree_map(cast, (args, kwargs))
    with _shardscope.axes_typed(names, AxisType.Auto):
        out = fun(*args, **kwargs)
    leaves, treedef = tree_util.tree_flatten(out)
    targets = tree_util.broadcast_target(out_sharding, out)
    return tree_util.tree_unflatten(treedef, [place_out_sharding(leaf, t) for leaf, t in zip(leaves, targets)])


def _eager(leaves):
    """No trace is running and every array argument is a concrete, placed value."""
    if _shardscope.debug.in_trace():
        return False
    arrays = [leaf for leaf in leaves if hasattr(leaf, 'sharding') or getattr(leaf, '_is_tracer', False)]
    return bool(arrays) and not any(getattr(leaf, '_is_tracer', False) for leaf in arrays)


def auto_axes(fun=None, *, axes=None, out_sharding=None):
    if fun is None:
        return lambda f: auto_axes(f, axes=axes, out_sharding=out_sharding)
    traced = _mode_switch(_shardscope.auto_axes_call, 'out_sharding', fun, axes, out_sharding)

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        shardings = kwargs.pop('out_sharding', out_sharding)
        import jax
        if (shardings is not None and _eager(tree_util.tree_leaves((args, kwargs)))
                and len(jax.sharding.get_abstract_mesh().axis_names) > 0
                and _shardscope.get_concrete_mesh() is not None):
            return _eager_auto_axes(fun, axes, shardings, args, kwargs)
        return traced(*args, out_sharding=shardings, **kwargs)
    return wrapper


def explicit_axes(fun=None, *, axes=None, in_sharding=None):
    if fun is None:
        return lambda f: explicit_axes(f, axes=axes, in_sharding=in_sharding)
    return _mode_switch(_shardscope.explicit_axes_call, 'in_sharding', fun, axes, in_sharding)


def with_out_sharding(fun, out_sharding, *args):
    """fun(*args), or with an out_sharding= argument run under auto_axes over the Explicit axes of the sharding's
    mesh (the context mesh for a bare PartitionSpec) and typed out_sharding, as JAX's ops that take one do."""
    if out_sharding is None:
        return fun(*args)
    mesh = getattr(out_sharding, 'mesh', None)
    if mesh is None:
        import jax
        mesh = jax.sharding.get_abstract_mesh()
    kinds = getattr(mesh, 'axis_types', None)
    axes = None if kinds is None else [n for n, kind in zip(mesh.axis_names, kinds) if 'Explicit' in str(kind)]
    # Traced even on concrete operands: the op's own partitioning (a contraction left unreduced) must run.
    return _mode_switch(_shardscope.auto_axes_call, 'out_sharding', fun, axes, out_sharding)(*args)
