# flax.linen.scan: a module applied `length` times along a carry, its variables stacked along an axis. The
# iterations run one after another here (the same arithmetic as lax.scan's loop body).
import functools

from flax.core import meta
from flax.linen.module import Module
from flax.linen.scope import Scope


def _stack(trees, axis, metadata_params):
    """Per-iteration variable trees stacked along `axis`; boxes gain the axis in their metadata."""
    import jax
    import jax.numpy as jnp

    def stack(*leaves):
        if isinstance(leaves[0], meta.AxisMetadata):
            value = jnp.stack([leaf.unbox(apply_constraint=False) if isinstance(leaf, meta.Partitioned)
                               else leaf.unbox() for leaf in leaves], axis=axis)
            return leaves[0].replace_boxed(value).add_axis(axis, metadata_params)
        return jnp.stack(leaves, axis=axis)
    return jax.tree_util.tree_map(stack, *trees, is_leaf=meta.is_axis_metadata)


def _slice(tree, index, axis, metadata_params):
    import jax

    def take(leaf):
        if isinstance(leaf, meta.AxisMetadata):
            inner = leaf.remove_axis(axis, metadata_params)
            value = leaf.unbox(apply_constraint=False) if isinstance(leaf, meta.Partitioned) else leaf.unbox()
            return inner.replace_boxed(_index(value, index, axis))
        return _index(leaf, index, axis)
    return jax.tree_util.tree_map(take, tree, is_leaf=meta.is_axis_metadata)


def _index(x, index, axis):
    return x[(slice(None),) * axis + (index,)]


def _mutable_copy(tree):
    if isinstance(tree, dict):
        return {k: _mutable_copy(v) for k, v in tree.items()}
    return tree


def scan(target, variable_axes=None, variable_broadcast=False, variable_carry=False, split_rngs=None,
         in_axes=0, out_axes=0, length=None, reverse=False, unroll=1, data_transform=None, metadata_params=None,
         methods=None, _split_transpose=False):
    if not (isinstance(target, type) and issubclass(target, Module)):
        raise NotImplementedError('flax.linen.scan of a function is not supported by shardscope yet')
    variable_axes = dict(variable_axes or {})
    split_rngs = dict(split_rngs or {})
    metadata_params = dict(metadata_params or {})

    def scanned_call(self, carry, *xs):
        n = length if length is not None else _leading_length(xs, in_axes)
        if n is None:
            raise ValueError('flax.linen.scan needs `length` when nothing is scanned over')
        scope = self.scope
        stacked = {col: scope.variables().get(col) for col in variable_axes}
        # As Flax's lifted scan: split streams give iteration i the i-th of `length` keys split from the stream's
        # key (its path suffix kept), other streams the same key every time; the body runs once per iteration on
        # a copy of the counters, which then advance once (lax.scan traces its body once).
        rngs = {}
        for name, (key, suffix) in scope.rngs.items():
            if split_rngs.get(name, False):
                import jax
                keys = jax.random.split(key, n)
                rngs[name] = [(keys[i], suffix) for i in range(n)]
            else:
                rngs[name] = [(key, suffix)] * n
        start_counters = dict(scope.rng_counters)
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__ if f not in ('parent', 'name')}
        order = range(n - 1, -1, -1) if reverse else range(n)
        per_iteration, outputs = {}, []
        for i in order:
            variables = {}
            for col, axis in variable_axes.items():
                if stacked.get(col):
                    variables[col] = _mutable_copy(_slice(stacked[col], i, axis, metadata_params))
            # The iteration's variables form their own tree (a root scope); its keys keep the module's path.
            inner_scope = Scope(variables, {name: keys[i] for name, keys in rngs.items()}, scope.mutable)
            inner_scope.rng_counters = dict(start_counters)
            inner = target(**fields, parent=inner_scope)
            step_xs = _tree_map(lambda x: _index(x, i, in_axes), list(xs))
            carry, y = target.__call__(inner, carry, *step_xs)
            outputs.append(y)
            for col in variable_axes:
                tree = inner_scope._variables.get(col)
                if tree:
                    per_iteration.setdefault(col, {})[i] = tree
        scope.rng_counters.update(inner_scope.rng_counters)
        for col, trees in per_iteration.items():
            if stacked.get(col) and not scope.is_mutable_collection(col):
                continue
            stacked_tree = _stack([trees[i] for i in range(n)], variable_axes[col], metadata_params)
            for name, value in stacked_tree.items():
                scope.put_variable(col, name, value)
        if reverse:
            outputs.reverse()
        return carry, _stack_outputs(outputs, out_axes)

    scanned_call.__name__ = '__call__'
    # Flax names the lifted class Scan<Target>, so instances are auto-named ScanDotReluDot_0 and so on.
    return type('Scan' + target.__name__, (target,), {'__call__': functools.wraps(target.__call__)(scanned_call)})


def _tree_map(f, tree):
    import jax
    return jax.tree_util.tree_map(f, tree)


def _leading_length(xs, axis):
    import jax
    leaves = jax.tree_util.tree_leaves(xs)
    return leaves[0].shape[axis] if leaves else None


def _stack_outputs(outputs, axis):
    import jax
    import jax.numpy as jnp
    if not outputs or all(o is None for o in jax.tree_util.tree_leaves(outputs, is_leaf=lambda x: x is None)):
        return outputs[0] if outputs else None
    return jax.tree_util.tree_map(lambda *ys: jnp.stack(ys, axis=axis), *outputs)
