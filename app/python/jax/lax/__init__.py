# jax.lax: the engine's primitives with JAX's argument handling.
import _shardscope


def with_sharding_constraint(x, shardings):
    from jax._src import tree as tree_util
    from jax._src.positional_sharding import to_engine_sharding
    leaves, treedef = tree_util.tree_flatten(x)
    targets = tree_util.broadcast_target(shardings, x)
    return tree_util.tree_unflatten(treedef, [
        _shardscope.lax.with_sharding_constraint(leaf, to_engine_sharding(target, len(getattr(leaf, 'shape', ()))))
        for leaf, target in zip(leaves, targets)])


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    engine = getattr(_shardscope, 'lax', None)
    if engine is not None and hasattr(engine, name):
        return getattr(engine, name)
    raise NotImplementedError(f'jax.lax.{name} is not supported by shardscope')
