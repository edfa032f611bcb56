# flax.linen's lifted transforms: scan (a module applied `length` times along a carry, its variables stacked along
# an axis; the iterations run one after another, the same arithmetic as lax.scan's loop body), vmap, map_variables,
# checkpoint (remat).
import functools
import typing

from flax.core import meta
from flax.linen.module import Module
from flax.linen.scope import Scope, LazyRng, copy_rng_counters


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


def _module_fields(module):
    """A module's dataclass fields other than parent and name: what a lifted copy of it is built with."""
    return {f: getattr(module, f) for f in module.__dataclass_fields__ if f not in ('parent', 'name')}


def _mutable_copy(tree):
    if isinstance(tree, dict):
        return {k: _mutable_copy(v) for k, v in tree.items()}
    return tree


def scan(target, variable_axes=None, variable_broadcast=False, variable_carry=False, split_rngs=None,
         in_axes=0, out_axes=0, length=None, reverse=False, unroll=1, data_transform=None, metadata_params=None,
         methods=None, _split_transpose=False):
    """A module class, or a function fn(module, carry, *xs), scanned along its inputs. Collections in
    variable_axes are stacked per iteration; those in variable_broadcast are shared by every iteration (created
    once, by the first of Flax's two body traces)."""
    if variable_carry:
        raise NotImplementedError('flax.linen.scan(variable_carry=...) is not supported by shardscope')
    settings = _ScanSettings(dict(variable_axes or {}), _collection_filter(variable_broadcast),
                             dict(split_rngs or {}), in_axes, out_axes, length, reverse, dict(metadata_params or {}))
    if isinstance(target, type) and issubclass(target, Module):
        def scanned_call(self, carry, *xs):
            return _scan_module(self, target, lambda inner, c, step: target.__call__(inner, c, *step),
                                carry, xs, settings)
        scanned_call.__name__ = '__call__'
        # Flax names the lifted class Scan<Target>, so instances are auto-named ScanDotReluDot_0 and so on.
        return type('Scan' + target.__name__, (target,), {'__call__': functools.wraps(target.__call__)(scanned_call)})
    if callable(target):
        @functools.wraps(target)
        def scanned_function(module, carry, *xs):
            if not isinstance(module, Module) or module.scope is None:
                raise TypeError('flax.linen.scan of a function takes a module bound to a scope as its first argument, '
                                f'got {type(module).__name__}')
            return _scan_module(module, type(module), lambda inner, c, step: target(inner, c, *step), carry, xs,
                                settings)
        return scanned_function
    raise TypeError(f'flax.linen.scan expects a Module class or a function, got {target!r}')


class _ScanSettings(typing.NamedTuple):
    variable_axes: dict
    broadcast: typing.Callable
    split_rngs: dict
    in_axes: typing.Any
    out_axes: typing.Any
    length: typing.Any
    reverse: bool
    metadata_params: dict


def _scan_module(module, module_class, body, carry, xs, settings):
    """The scan of `body(inner_module, carry, step_xs)` over `module`'s scope: each iteration a copy of `module`
    (same class, fields and name) bound to a root scope holding that iteration's variables."""
    variable_axes, metadata_params = settings.variable_axes, settings.metadata_params
    n = settings.length if settings.length is not None else _leading_length(xs, settings.in_axes)
    if n is None:
        raise ValueError('flax.linen.scan needs `length` when nothing is scanned over')
    scope = module.scope
    outer = scope.variables()
    stacked = {col: outer.get(col) for col in variable_axes}
    shared = {col: tree for col, tree in outer.items() if col not in variable_axes and settings.broadcast(col)}
    # As Flax's lifted scan: split streams give iteration i the i-th of `length` keys split from the stream's key
    # (its path suffix kept), other streams the same key every time. The inner scope shares its RNG counters with
    # the module's, and Flax traces the body twice (once to find broadcast outputs, once in lax.scan), so every
    # iteration sees the counters advanced once already and they end advanced twice.
    rngs = {}
    for name, (key, suffix) in scope.rngs.items():
        if settings.split_rngs.get(name, False):
            import jax
            keys = jax.random.split(key, n)
            rngs[name] = [LazyRng(keys[i], suffix) for i in range(n)]
        else:
            rngs[name] = [LazyRng(key, suffix)] * n
    fields = _module_fields(module)
    order = list(range(n - 1, -1, -1) if settings.reverse else range(n))

    def run_body(i, counters):
        variables = {col: _mutable_copy(tree) for col, tree in shared.items()}
        for col, axis in variable_axes.items():
            if stacked.get(col):
                variables[col] = _mutable_copy(_slice(stacked[col], i, axis, metadata_params))
        # The iteration's variables form their own tree (a root scope); its keys keep the module's path.
        inner_scope = Scope(variables, {name: keys[i] for name, keys in rngs.items()}, scope.mutable,
                            flags=scope.flags)
        inner_scope.rng_counters = counters
        inner = module_class(**fields, name=module.name, parent=inner_scope)
        step_xs = _tree_map(lambda x: _index(x, i, settings.in_axes), list(xs))
        return inner_scope, body(inner, carry, step_xs)

    traced = copy_rng_counters(scope.rng_counters)
    first_scope, _ = run_body(order[0], traced)  # the first trace: its counters, and the broadcast variables
    created = {col: tree for col, tree in first_scope._variables.items()
               if col not in variable_axes and settings.broadcast(col) and col not in shared and tree}
    shared.update(created)
    per_iteration, outputs, counters = {}, [], traced
    for i in order:
        counters = copy_rng_counters(traced)
        inner_scope, (carry, y) = run_body(i, counters)
        outputs.append(y)
        for col in variable_axes:
            tree = inner_scope._variables.get(col)
            if tree:
                per_iteration.setdefault(col, {})[i] = tree
    scope.rng_counters.clear()
    scope.rng_counters.update(counters)
    for col, tree in created.items():
        if scope.is_mutable_collection(col):
            for name, value in tree.items():
                scope.put_variable(col, name, value)
    for col, trees in per_iteration.items():
        if stacked.get(col) and not scope.is_mutable_collection(col):
            continue
        stacked_tree = _stack([trees[i] for i in range(n)], variable_axes[col], metadata_params)
        for name, value in stacked_tree.items():
            scope.put_variable(col, name, value)
    if settings.reverse:
        outputs.reverse()
    return carry, _stack_outputs(outputs, settings.out_axes)


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


def _stream_filter_matches(filter_, name):
    # A collection or stream filter: True (all), a name, or a collection of names.
    if filter_ is True:
        return True
    if isinstance(filter_, str):
        return filter_ == name
    if isinstance(filter_, (list, tuple, set, frozenset)):
        return name in filter_
    return False


def _axis_of(mapping, name):
    """The entry of `mapping` (filter -> value) whose filter takes `name`, first match as Flax groups them."""
    for filter_, value in mapping.items():
        if _stream_filter_matches(filter_, name):
            return True, value
    return False, None


def _per_arg_axes(in_axes, args):
    if isinstance(in_axes, (list, tuple)):
        if len(in_axes) != len(args):
            raise ValueError(f'vmap in_axes has {len(in_axes)} entries for {len(args)} positional arguments')
        return list(in_axes)
    return [in_axes] * len(args)


def vmap(target, variable_axes=None, split_rngs=None, in_axes=0, out_axes=0, axis_size=None, axis_name=None,
         spmd_axis_name=None, metadata_params=None, methods=None):
    """A module mapped over a batch axis. As Flax's lifted vmap: the inner module sees only the collections in
    `variable_axes` (sliced along their axis, or whole for None) and the streams in `split_rngs`; a split stream
    gives example i the i-th of `axis_size` keys split from the stream's key (its module-path suffix kept), an
    unsplit one the same key everywhere. The examples run one after another (jax.vmap traces the body once, so
    the RNG counters advance once)."""
    if not (isinstance(target, type) and issubclass(target, Module)):
        raise NotImplementedError('flax.linen.vmap of a function is not supported by shardscope yet')
    variable_axes = dict(variable_axes or {})
    split_rngs = dict(split_rngs or {})
    metadata_params = dict(metadata_params or {})

    def mapped_call(self, *args, **kwargs):
        import jax
        scope = self.scope
        arg_axes = _per_arg_axes(in_axes, args)
        outer_variables = scope.variables()
        lifted = {col: axis for col in outer_variables for found, axis in [_axis_of(variable_axes, col)] if found}
        sizes = set()
        for arg, axis in zip(args, arg_axes):
            leaves = jax.tree_util.tree_leaves(arg)
            if axis is not None and leaves:
                sizes.add(leaves[0].shape[axis])
        for col, axis in lifted.items():
            leaves = jax.tree_util.tree_leaves(outer_variables[col], is_leaf=meta.is_axis_metadata)
            if axis is not None and leaves:
                sizes.add(meta.unbox(leaves[0]).shape[axis])
        if axis_size is None and len(sizes) == 1:
            (n,) = sizes
        elif len(sizes) > 1:
            raise ValueError(f'Inconsistent batch axis sizes: {sizes}')
        elif axis_size is None:
            raise ValueError('axis_size should be specified manually.')
        else:
            n = axis_size
        rngs = {}
        for name, (key, suffix) in scope.rngs.items():
            found, split = _axis_of(split_rngs, name)
            if not found:
                continue  # streams outside split_rngs are not lifted into the mapped module
            if split:
                keys = jax.random.split(key, n)
                rngs[name] = [LazyRng(keys[i], suffix) for i in range(n)]
            else:
                rngs[name] = [LazyRng(key, suffix)] * n
        fields = _module_fields(self)
        per_example, outputs, counters = {}, [], scope.rng_counters
        for i in range(n):
            variables = {}
            for col, axis in lifted.items():
                tree = outer_variables[col]
                variables[col] = _mutable_copy(tree if axis is None else _slice(tree, i, axis, metadata_params))
            inner_scope = Scope(variables, {name: keys[i] for name, keys in rngs.items()}, scope.mutable,
                                flags=scope.flags)
            # The inner scope shares the module's counters (children's included): each example starts from them.
            inner_scope.rng_counters = copy_rng_counters(scope.rng_counters)
            inner = target(**fields, name=self.name, parent=inner_scope)
            example = [arg if axis is None else _tree_map(lambda x, a=axis: _index(x, i, a), arg)
                       for arg, axis in zip(args, arg_axes)]
            outputs.append(target.__call__(inner, *example, **kwargs))
            counters = inner_scope.rng_counters
            for col, tree in inner_scope._variables.items():
                found, _ = _axis_of(variable_axes, col)
                if found and tree:
                    per_example.setdefault(col, []).append(tree)
        counters = copy_rng_counters(counters)
        scope.rng_counters.clear()
        scope.rng_counters.update(counters)
        for col, trees in per_example.items():
            if not scope.is_mutable_collection(col):
                continue
            axis = _axis_of(variable_axes, col)[1]
            # Flax's lifted vmap returns the collections from jax.vmap, whose dicts come back in sorted key order;
            # a broadcast collection too (bias before kernel).
            merged = (jax.tree_util.tree_map(lambda x: x, trees[0], is_leaf=meta.is_axis_metadata) if axis is None
                      else _stack(trees, axis, metadata_params))
            for name, value in merged.items():
                scope.put_variable(col, name, value)
        if out_axes is None:
            return outputs[0]
        return _stack_outputs(outputs, out_axes)

    mapped_call.__name__ = '__call__'
    # Flax names the lifted class Vmap<Target>, so instances are auto-named VmapDense_0 and so on.
    return type('Vmap' + target.__name__, (target,), {'__call__': functools.wraps(target.__call__)(mapped_call)})


def _collection_filter(collections):
    """A collection filter as lifted transforms take it: True (every one), False (none), a name, or names."""
    if isinstance(collections, bool):
        return lambda col: collections
    if isinstance(collections, str):
        return lambda col: col == collections
    names = set(collections)
    return lambda col: col in names


def _identity(tree):
    return tree


def map_variables(target, mapped_collections=True, trans_in_fn=_identity, trans_out_fn=_identity, init=False,
                  mutable=False, rngs=True, variables=True, methods=None):
    """A module whose variables in `mapped_collections` pass through trans_in_fn on their way in (a dict of those
    collections, as stored) and, when `mutable` or `init`, through trans_out_fn on their way back out, so the
    stored form can differ from the form the module computes with. As Flax's lifted map_variables: the wrapped
    module keeps its own name and path, shares its RNG streams and counters with the outside, and without
    `mutable`/`init` the mapped collections are read-only inside."""
    if isinstance(target, functools.partial):
        # A partially applied module class (functools.partial(nn.Dense, features=4)): transform the class.
        return functools.partial(map_variables(target.func, mapped_collections, trans_in_fn, trans_out_fn, init,
                                               mutable, rngs, variables, methods), *target.args, **target.keywords)
    if not (isinstance(target, type) and issubclass(target, Module)):
        raise NotImplementedError('flax.linen.map_variables of a function is not supported by shardscope')
    if methods is not None:
        raise NotImplementedError('flax.linen.map_variables(methods=...) is not supported by shardscope')
    mapped = _collection_filter(mapped_collections)
    visible = _collection_filter(variables)
    lifted_streams = _collection_filter(rngs)
    writes_back = bool(mutable or init)

    def mapped_call(self, *args, **kwargs):
        scope = self.scope
        outer = scope.variables()
        target_in = {col: _mutable_copy(tree) for col, tree in outer.items() if mapped(col)}
        others = {col: _mutable_copy(tree) for col, tree in outer.items() if not mapped(col) and visible(col)}
        fields = _module_fields(self)
        streams = {name: stream for name, stream in scope.rngs.items() if lifted_streams(name)}

        def run(collections, inner_mutable):
            inner_scope = Scope({**others, **collections}, streams, inner_mutable, flags=scope.flags)
            inner_scope.rng_counters = scope.rng_counters  # one set of counters, inside and out
            inner = target(**fields, name=self.name, parent=inner_scope)
            return inner_scope, target.__call__(inner, *args, **kwargs)

        if init and scope.flags.get('initializing'):
            # init=True: the module runs once on the stored form to create what is missing, mapped out.
            created, _ = run(dict(target_in), scope.mutable)
            target_in = trans_out_fn({col: tree for col, tree in created._variables.items() if mapped(col)})
        inner_mutable = scope.mutable if writes_back else _without(scope.mutable, mapped)
        inner_scope, out = run(trans_in_fn(target_in), inner_mutable)
        produced = inner_scope._variables
        if writes_back:
            for col, tree in trans_out_fn({col: tree for col, tree in produced.items() if mapped(col)}).items():
                if scope.is_mutable_collection(col):
                    for name, value in tree.items():
                        scope.put_variable(col, name, value)
        for col, tree in produced.items():
            if not mapped(col) and scope.is_mutable_collection(col):
                for name, value in tree.items():
                    scope.put_variable(col, name, value)
        return out

    mapped_call.__name__ = '__call__'
    # Flax names a lifted class after the transform's function, capitalized: Map_variables<Target>.
    return type('Map_variables' + target.__name__, (target,),
                {'__call__': functools.wraps(target.__call__)(mapped_call)})


def _without(mutable, mapped):
    """The `mutable` filter less the mapped collections: what the module may change inside a read-only mapping."""
    from flax.linen.scope import _mode_allows

    class _Filter:
        def __contains__(self, col):
            return not mapped(col) and _mode_allows(mutable, col)
    return False if mutable is False or mutable is None else _Filter()


def checkpoint(target, variables=True, rngs=True, concrete=False, prevent_cse=True, static_argnums=(), policy=None,
               methods=None):
    """A module whose call runs under jax.checkpoint, as Flax's lifted checkpoint: its variables go in as the
    checkpointed function's first argument and the collections it may change come back as outputs, so gradients
    recompute its activations. static_argnums count `self` as 0, as Flax's do; those arguments stay Python values."""
    if isinstance(target, functools.partial):
        return functools.partial(checkpoint(target.func, variables, rngs, concrete, prevent_cse, static_argnums, policy,
                                            methods), *target.args, **target.keywords)
    if not (isinstance(target, type) and issubclass(target, Module)):
        raise NotImplementedError('flax.linen.checkpoint of a function is not supported by shardscope')
    if methods is not None:
        raise NotImplementedError('flax.linen.checkpoint(methods=...) is not supported by shardscope')
    if concrete:
        raise NotImplementedError('flax.linen.checkpoint(concrete=True) is not supported by shardscope (JAX '
                                  'deprecated it for static_argnums)')
    visible = _collection_filter(variables)
    lifted_streams = _collection_filter(rngs)
    static = {static_argnums - 1} if isinstance(static_argnums, int) else {n - 1 for n in static_argnums}

    def checkpointed_call(self, *args, **kwargs):
        import jax
        scope = self.scope
        outer = {col: tree for col, tree in scope.variables().items() if visible(col)}
        streams = {name: stream for name, stream in scope.rngs.items() if lifted_streams(name)}
        fields = _module_fields(self)
        dynamic = [a for i, a in enumerate(args) if i not in static]
        counters_before = copy_rng_counters(scope.rng_counters)
        counters_after = []

        def body(collections, dynamic_args, call_kwargs):
            it = iter(dynamic_args)
            call_args = [args[i] if i in static else next(it) for i in range(len(args))]
            inner_scope = Scope(_mutable_copy(collections), streams, scope.mutable, flags=scope.flags)
            # Each trace starts from the counters the call began with; the first trace's end state is kept.
            inner_scope.rng_counters = copy_rng_counters(counters_before)
            inner = target(**fields, name=self.name, parent=inner_scope)
            out = target.__call__(inner, *call_args, **call_kwargs)
            if not counters_after:
                counters_after.append(inner_scope.rng_counters)
            changed = {col: tree for col, tree in inner_scope._variables.items() if scope.is_mutable_collection(col)}
            return out, changed

        out, changed = jax.checkpoint(body, prevent_cse=prevent_cse, policy=policy)(outer, dynamic, kwargs)
        if counters_after:
            scope.rng_counters.clear()
            scope.rng_counters.update(counters_after[0])
        for col, tree in changed.items():
            for name, value in tree.items():
                scope.put_variable(col, name, value)
        return out

    checkpointed_call.__name__ = '__call__'
    # Flax names a lifted class after the transform's function, capitalized: Checkpoint<Target>.
    return type('Checkpoint' + target.__name__, (target,),
                {'__call__': functools.wraps(target.__call__)(checkpointed_call)})


remat = checkpoint
