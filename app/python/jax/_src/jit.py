# jax.jit: a cache of traced programs per argument signature, so a repeated call runs without re-tracing.
import functools
import weakref
import inspect

import _shardscope
from jax import errors
from jax._src import tree as tree_util
from jax._src.array_methods import ArrayImpl

# The cache stores this as the output structure of a function returning one array.
_SINGLE_LEAF = None


def _name(fun):
    return getattr(fun, '__name__', 'fun')


def _source_info(fun):
    """JAX's "name at file:line" description of a traced function (api_util.fun_sourceinfo)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, '__code__', None)
    if code is None:
        return '<unknown>'
    return f'{fun.__name__} at {code.co_filename}:{code.co_firstlineno}'


def _index_tuple(argnums):
    if argnums is None:
        return ()
    if isinstance(argnums, int):
        return (argnums,)
    return tuple(argnums)


def _name_tuple(argnames):
    if argnames is None:
        return ()
    if isinstance(argnames, str):
        return (argnames,)
    return tuple(argnames)


def _parameters(fun):
    try:
        return list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None


def _static_positions_and_names(fun, static_argnums, static_argnames):
    """Static arguments by position and by name, each completed from the other as JAX does."""
    nums = _index_tuple(static_argnums)
    names = _name_tuple(static_argnames)
    params = _parameters(fun)
    if params is not None:
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        nums = nums + tuple(positional.index(n) for n in names if n in positional and positional.index(n) not in nums)
        names = names + tuple(positional[i] for i in nums if 0 <= i < len(positional) and positional[i] not in names)
    return frozenset(nums), frozenset(names)


def _validate_argnums(fun, argnums, what):
    """api_util.validate_argnums: argnums must name positional parameters (any, for a *args function)."""
    argnums = _index_tuple(argnums)
    params = _parameters(fun)
    if not argnums or params is None or any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    count = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    if -min(argnums) > count or max(argnums) >= count:
        raise ValueError(f'Jitted function has {what}={argnums}, but only accepts {count} positional arguments.')


def _check_argument_ranks(leaves, shardings, names):
    """pjit_check_aval_sharding on the arguments: a spec longer than an argument's rank names its key path."""
    for i, (leaf, sharding) in enumerate(zip(leaves, shardings)):
        if isinstance(sharding, _shardscope.NamedSharding) and hasattr(leaf, 'shape'):
            name = names[i] if names and i < len(names) else f'args[{i}]'
            _shardscope.check_annotation_rank('pjit arguments', name, sharding, len(leaf.shape))


def _check_committed_arguments(leaves, shardings):
    """pjit's resolve_in_shardings: a committed array whose sharding differs from the one jit was given is an
    error, not a silent reshard."""
    for leaf, sharding in zip(leaves, shardings):
        if sharding is None or not isinstance(sharding, _shardscope.NamedSharding) or type(leaf) is not ArrayImpl:
            continue
        if leaf._is_tracer or not leaf.committed:
            continue
        held = leaf.sharding
        if not held.is_equivalent_to(sharding, leaf.ndim):
            import jax
            raise ValueError('Sharding passed to jit does not match the sharding on the respective arg. '
                             f'Got jit sharding: {sharding},\narg sharding: {held} for arg type: '
                             f'{jax.typeof(leaf)}')


def _check_shardings(shardings, what):
    from jax.sharding import PartitionSpec
    leaves = tree_util.tree_leaves(shardings, is_leaf=lambda x: x is None)
    for leaf in leaves:
        if leaf is None or isinstance(leaf, (PartitionSpec, _shardscope.NamedSharding,
                                             _shardscope.SingleDeviceSharding)):
            continue
        raise TypeError(f'{what} leaf specifications are expected to be PartitionSpec instances or None, '
                        f'but got {leaf}')


def _shardings_list(shardings, count, what):
    """Per-leaf shardings (a single sharding applies to all); PartitionSpecs use the mesh in context."""
    if shardings is None:
        return None
    leaves = tree_util.tree_leaves(shardings, is_leaf=lambda x: x is None)
    if len(leaves) == 1 and count != 1:
        leaves = leaves * count
    from jax.sharding import PartitionSpec
    if any(isinstance(leaf, PartitionSpec) for leaf in leaves):
        mesh = _shardscope.get_concrete_mesh()
        if mesh is None:
            raise RuntimeError(f'jit requires a non-empty mesh in context if you are passing `PartitionSpec`s to '
                               f'{what}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, '
                               f'provide `Sharding`s to {what} and then the mesh context manager is not required.')
        leaves = [_shardscope.NamedSharding(mesh, leaf) if isinstance(leaf, PartitionSpec) else leaf
                  for leaf in leaves]
    return leaves


def _in_shardings_per_leaf(shardings, args, static_nums, count):
    """in_shardings as a tree prefix of the positional arguments (pjit's flatten_axis_resources): an entry of
    a tuple covers every leaf of its argument, None there leaving them unconstrained."""
    from jax.sharding import PartitionSpec
    dynamic = tuple(a for i, a in enumerate(args) if i not in static_nums)
    if (isinstance(shardings, (tuple, list)) and not isinstance(shardings, PartitionSpec)
            and len(shardings) == len(dynamic)):
        shardings = tree_util.broadcast_prefix(tuple(shardings), dynamic,
                                               is_leaf=lambda x: isinstance(x, PartitionSpec))
    return _shardings_list(shardings, count, 'in_shardings')


def _check_in_shardings_arity(shardings, num_args):
    """api_util.flatten_axis_resources: a tuple of in_shardings has one entry per positional argument."""
    if not isinstance(shardings, (tuple, list)) or len(shardings) == num_args:
        return
    what = 'pjit in_shardings'
    msg = (f'{what} specification must be a tree prefix of the positional arguments tuple. In particular, {what} '
           'must either be a Sharding, a PartitionSpec, or a tuple of length equal to the number of positional '
           'arguments.')
    if type(shardings) is not tuple:
        msg += f' But {what} is not a tuple: got {type(shardings)} instead.'
    else:
        msg += (f' But {what} is the wrong length: got a tuple or list of length {len(shardings)} for an args tuple '
                f'of length {num_args}.')
    raise ValueError(msg)


def _check_output_ranks(out, shardings):
    """pjit_check_aval_sharding on the outputs: a spec longer than an output's rank names its key path."""
    paths_and_leaves = tree_util.tree_flatten_with_path(out)[0]
    for i, (path, leaf) in enumerate(paths_and_leaves):
        sharding = shardings[i] if i < len(shardings) else shardings[-1]
        if sharding is not None:
            _shardscope.check_annotation_rank('pjit outputs', 'result' + tree_util.keystr(path), sharding,
                                              len(getattr(leaf, 'shape', ())))
            if isinstance(sharding, _shardscope.NamedSharding) and hasattr(leaf, 'shape'):
                _shardscope.check_annotation_divisible('pjit outputs', 'result' + tree_util.keystr(path), sharding,
                                                       tuple(leaf.shape))


def _static_key(value, where, fun):
    try:
        hash(value)
    except TypeError as err:
        # jit's C++ dispatch hashes the static arguments and reports the TypeError it met.
        raise ValueError(f'Non-hashable static arguments are not supported. An error occurred while trying to '
                         f'hash an object of type {type(value)}, {value}. The error was:\nTypeError: {err}\n') from None
    # Equal values of different types (1, 1.0, True) trace differently.
    return (type(value), value)


def _valid_output(x):
    return _shardscope.invalid_jit_leaf([x]) < 0


# jax_debug_nans and jax_debug_infs as jax.config.update sets them, read on every jitted call without a config lookup.
debug_nans = [False]
debug_infs = [False]


def _holds_special(out):
    """Whether a jitted function's concrete floating outputs hold a NaN (under jax_debug_nans) or an infinity (under
    jax_debug_infs)."""
    import numpy as np
    for leaf in tree_util.tree_leaves(out):
        if getattr(leaf, '_is_tracer', False) or not hasattr(leaf, 'dtype') or leaf.dtype.kind != 'f':
            continue
        values = np.asarray(leaf)
        if (debug_nans[0] and np.isnan(values).any()) or (debug_infs[0] and np.isinf(values).any()):
            return True
    return False


def arg_leaf_names(fun, args, static_nums=()):
    """JAX's debug names of the dynamic argument leaves: the parameter name, then the path inside it."""
    params = _parameters(fun)
    if params is None:
        return None
    names = []
    for i, arg in enumerate(args):
        if i in static_nums:
            continue
        base = params[i].name if i < len(params) and params[i].kind != params[i].VAR_POSITIONAL else f'args[{i}]'
        names.extend(base + suffix for suffix in _leaf_paths(arg))
    return names


# Traces are cached per function and jit parameters, not per jit object, as JAX does: `jit(f)(x)` twice traces
# f once, and a global f reads is seen as it was at that first trace.
_caches_by_function = weakref.WeakKeyDictionary()


def clear_all_caches():
    """jax.clear_caches: every jitted function's traces dropped."""
    for per_params in list(_caches_by_function.values()):
        for cache in per_params.values():
            cache.clear()


# jax_disable_jit (config.update or jax.disable_jit): jitted functions run their Python directly.
disable_jit = [False]


def _shared_cache(fun, params):
    try:
        per_params = _caches_by_function.setdefault(fun, {})
        return per_params.setdefault(params, _shardscope.JitCache())
    except TypeError:  # a function that takes no weak reference, or parameters that do not hash
        return _shardscope.JitCache()


class _Jitted:
    # Set when the function touches an array ref made outside it: it then runs eagerly on every call.
    _runs_eagerly = False

    def __init__(self, fun, in_shardings=None, out_shardings=None, static_argnums=None, static_argnames=None):
        if not callable(fun):
            raise TypeError(f'Expected a callable value, got {fun!r}')
        functools.update_wrapper(self, fun)
        self._fun = fun
        from jax._src import layout as layout_lib
        # Formats (layout + sharding): the shardings go to the engine, the layouts stay with lowering.
        self._in_formats = in_shardings if layout_lib.has_formats(in_shardings) else None
        self._out_formats = out_shardings if layout_lib.has_formats(out_shardings) else None
        in_shardings = layout_lib.strip_formats(in_shardings)
        out_shardings = layout_lib.strip_formats(out_shardings)
        _check_shardings(in_shardings, 'in_shardings')
        _check_shardings(out_shardings, 'out_shardings')
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._static_nums, self._static_names = _static_positions_and_names(fun, static_argnums, static_argnames)
        self._has_static = bool(self._static_nums or self._static_names)
        self._cache = _shared_cache(fun, (in_shardings, out_shardings, self._static_nums, self._static_names))

    def _split(self, args, kwargs):
        """(dynamic positional args, dynamic kwargs, static kwargs, cache key part for the static values)."""
        fun = self._fun
        dynamic = tuple(a for i, a in enumerate(args) if i not in self._static_nums)
        statics = tuple((i, _static_key(a, f'index {i}', fun)) for i, a in enumerate(args) if i in self._static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_names}
        static_kwargs = {k: v for k, v in kwargs.items() if k in self._static_names}
        statics += tuple((k, _static_key(static_kwargs[k], f'name {k}', fun)) for k in sorted(static_kwargs))
        return dynamic, dyn_kwargs, static_kwargs, statics

    def __call__(self, *args, **kwargs):
        if self._runs_eagerly or disable_jit[0]:
            return self._fun(*args, **kwargs)
        out = self._call(*args, **kwargs)
        if (debug_nans[0] or debug_infs[0]) and not _shardscope.debug.in_trace() and _holds_special(out):
            # JAX's debug_nans/debug_infs: report the jit's bad value (JAX says "nan" for an infinity too), then run
            # the function op by op so the op that made it raises.
            print('Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized '
                  'version.')
            return self._fun(*args, **kwargs)
        return out

    def _call(self, *args, **kwargs):
        if self._has_static:
            dynamic, dyn_kwargs, static_kwargs, statics = self._split(args, kwargs)
        else:
            dynamic, dyn_kwargs, static_kwargs, statics = args, kwargs, None, ()
        if not dyn_kwargs and all(type(a) is ArrayImpl for a in dynamic):
            # Only arrays as positional arguments: the count stands for the tree structure.
            leaves, in_tree = list(dynamic), len(dynamic)
        else:
            leaves, in_tree = tree_util.tree_flatten((dynamic, dyn_kwargs))
        key = (in_tree, statics)
        hit = self._cache.call(key, leaves)
        if hit is None:
            from jax._src.ref import RefEffectEscape
            try:
                return self._trace_and_run(args, key, leaves, in_tree, static_kwargs)
            except RefEffectEscape:
                if _shardscope.debug.in_trace():
                    raise  # an enclosing trace decides
                # The function reads or writes a ref made outside it: its effects must happen on every call.
                self._runs_eagerly = True
                return self._fun(*args, **kwargs)
        out_tree, outs = hit
        return outs[0] if out_tree is _SINGLE_LEAF else tree_util.tree_unflatten(out_tree, outs)

    def _trace_and_run(self, args, key, leaves, in_tree, static_kwargs):
        bad = _shardscope.invalid_jit_leaf(leaves)
        if bad >= 0:
            self._raise_invalid_argument(args, leaves, bad)
        _check_in_shardings_arity(self._in_shardings, len(args) - sum(1 for i in range(len(args))
                                                                      if i in self._static_nums))
        in_shardings = _in_shardings_per_leaf(self._in_shardings, args, self._static_nums, len(leaves))
        if in_shardings:
            _check_argument_ranks(leaves, in_shardings, self._leaf_names(args))
            _check_committed_arguments(leaves, in_shardings)
        out_shardings = _shardings_list(self._out_shardings, 1, 'out_shardings')
        fun, static_nums, out_store = self._fun, self._static_nums, [None]

        def flat(flat_leaves):
            if isinstance(in_tree, int):
                dyn, kw = list(flat_leaves), {}
            else:
                dyn, kw = tree_util.tree_unflatten(in_tree, list(flat_leaves))
            if static_nums:
                it = iter(dyn)
                dyn = [args[i] if i in static_nums else next(it) for i in range(len(args))]
            with errors.tracing(fun, 'jit', self._leaf_names(args)):
                out = fun(*dyn, **kw, **(static_kwargs or {}))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            for leaf in out_leaves:
                if not _valid_output(leaf):
                    raise TypeError(f'function {_source_info(fun)} traced for jit returned a value of type '
                                    f'{type(leaf)}, which is not a valid JAX type')
            if out_shardings:
                _check_output_ranks(out, out_shardings)
            out_store[0] = out_tree
            return out_leaves

        from jax._src import ref
        ref.jit_depth[0] += 1
        try:
            names = self._leaf_names(args)
            program = _shardscope.jit_trace(flat, leaves, _name(fun), in_shardings, out_shardings,
                                            names if names is not None and len(names) == len(leaves) else None)
        finally:
            ref.jit_depth[0] -= 1
        out_tree = out_store[0]
        single = out_tree.kind == 'leaf'
        self._cache.insert(key, leaves, program, _SINGLE_LEAF if single else out_tree)
        outs = program(leaves)
        return outs[0] if single else tree_util.tree_unflatten(out_tree, outs)

    def _raise_invalid_argument(self, args, leaves, index):
        value = leaves[index]
        names = self._leaf_names(args)
        path = names[index] if names is not None and index < len(names) else 'unknown'
        raise TypeError(f'Error interpreting argument to {self._fun} as an abstract array. The problematic value is '
                        f'of type {type(value)} and was passed to the function at path {path}.\n'
                        'This typically means that a jit-wrapped function was called with a non-array argument, and '
                        'this argument was not marked as static using the static_argnums or static_argnames '
                        'parameters of jax.jit.')

    def _leaf_names(self, args):
        return arg_leaf_names(self._fun, args, self._static_nums)

    def _cache_size(self):
        return len(self._cache)

    def clear_cache(self):
        self._cache.clear()

    def _abstract_call(self, args, kwargs):
        """(leaves, flat function, out_store, in_tree) for tracing without the cache (eval_shape, lower)."""
        if self._has_static:
            dynamic, dyn_kwargs, static_kwargs, _ = self._split(args, kwargs)
        else:
            dynamic, dyn_kwargs, static_kwargs = args, kwargs, None
        leaves, in_tree = tree_util.tree_flatten((dynamic, dyn_kwargs))
        fun, static_nums, out_store = self._fun, self._static_nums, [None]

        def flat(flat_leaves):
            dyn, kw = tree_util.tree_unflatten(in_tree, list(flat_leaves))
            if static_nums:
                it = iter(dyn)
                dyn = [args[i] if i in static_nums else next(it) for i in range(len(args))]
            out_leaves, out_store[0] = tree_util.tree_flatten(fun(*dyn, **kw, **(static_kwargs or {})))
            return out_leaves
        return leaves, flat, out_store, in_tree

    def eval_shape(self, *args, **kwargs):
        """Output shapes and dtypes as ShapeDtypeStructs; nothing runs, so shapes of any size work."""
        leaves, flat, out_store, _ = self._abstract_call(args, kwargs)
        typed = []
        input_mesh = _input_type_mesh(leaves)

        def flat_typed(flat_leaves):
            out_leaves = flat(flat_leaves)
            typed[:] = [_explicit_sharding(leaf, input_mesh) for leaf in out_leaves]
            return out_leaves
        outs = _shardscope.eval_shape_trace(flat_typed, leaves, _name(self._fun))
        return tree_util.tree_unflatten(out_store[0], [_shape_dtype_struct(*out, sharding=sharding)
                                                       for out, sharding in zip(outs, typed)])

    def lower(self, *args, **kwargs):
        """jit(f).lower(*args): shardscope's lowering (shardings decided, collectives planned, nothing run)."""
        leaves, flat, out_store, in_tree = self._abstract_call(args, kwargs)
        in_shardings = _in_shardings_per_leaf(self._in_shardings, args, self._static_nums, len(leaves))
        out_shardings = _shardings_list(self._out_shardings, 1, 'out_shardings')
        lowered = _shardscope.jit_lower(flat, leaves, _name(self._fun), in_shardings, out_shardings)
        return Lowered(lowered, in_tree, out_store[0], self._layouts(args, kwargs, leaves, flat))

    def _layouts(self, args, kwargs, leaves, flat):
        """(input layouts per leaf, a function giving output layouts per leaf) of this lowering."""
        from jax._src import layout as layout_lib
        ranks = [len(getattr(leaf, 'shape', ())) for leaf in leaves]  # Python scalars are rank 0

        def auto():
            return layout_lib.auto_layouts(flat, leaves, _name(self._fun))
        in_layouts = layout_lib.resolve_layouts(layout_lib.layouts_per_leaf(self._in_formats, len(leaves)),
                                                ranks, auto, leaves)

        def out_layouts():
            out_ranks = [len(o.shape) for o in tree_util.tree_leaves(self.eval_shape(*args, **kwargs))]
            requested = layout_lib.layouts_per_leaf(self._out_formats, len(out_ranks))
            # XLA leaves an AUTO output in the default layout unless a consumer asks otherwise.
            return layout_lib.resolve_layouts([None if isinstance(r, layout_lib.AutoLayoutSingleton) else r
                                               for r in requested], out_ranks, None)
        # Without out Formats every output has the default layout, which is never recorded on an array: a
        # compiled call then has nothing to record (and no need to trace the outputs' ranks).
        return in_layouts, out_layouts, self._out_formats is not None

    def trace(self, *args, **kwargs):
        return Traced(self, args, kwargs)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


class Traced:
    """jit(f).trace(*args): the staged function; lower() finishes the lowering."""

    def __init__(self, jitted, args, kwargs):
        self._jitted, self._args, self._kwargs = jitted, args, kwargs

    @property
    def jaxpr(self):
        from jax._src.api import ClosedJaxpr
        leaves, flat, _, _ = self._jitted._abstract_call(self._args, self._kwargs)
        return ClosedJaxpr(_shardscope.typed_jaxpr_text(flat, leaves, _name(self._jitted._fun)))

    @property
    def input_formats(self):
        return self.lower().input_formats

    @property
    def output_formats(self):
        return self.lower().output_formats

    def lower(self):
        return self._jitted.lower(*self._args, **self._kwargs)


class Lowered:
    def __init__(self, lowered, in_tree, out_tree, layouts):
        self._lowered, self._in_tree, self._out_tree = lowered, in_tree, out_tree
        self._layouts = layouts

    def as_text(self, dialect=None, **_):
        return self._lowered.as_text()

    def cost_analysis(self):
        """What XLA's cost analysis reports for the unpartitioned program before optimization."""
        return self._lowered.cost_analysis()

    @property
    def input_formats(self):
        return self.compile().input_formats

    @property
    def output_formats(self):
        return self.compile().output_formats

    def compile(self, compiler_options=None):
        return Compiled(self._lowered.compile(), self._in_tree, self._out_tree, self._layouts)


class _MemoryStats:
    """compiled.memory_analysis(): sizes per device, as attributes like jaxlib's CompiledMemoryStats."""

    def __init__(self, stats):
        self.__dict__.update(stats)

    def __repr__(self):
        return 'CompiledMemoryStats(' + ', '.join(f'{k}={v}' for k, v in self.__dict__.items()) + ')'


class Compiled:
    def __init__(self, compiled, in_tree, out_tree, layouts):
        self._compiled, self._in_tree, self._out_tree = compiled, in_tree, out_tree
        self._in_layouts, self._out_layouts_fn, self._records_out_layouts = layouts
        self._out_layouts = None

    def _output_layouts(self):
        if self._out_layouts is None:
            self._out_layouts = self._out_layouts_fn()
        return self._out_layouts

    @property
    def input_formats(self):
        from jax._src.layout import Format
        formats = [Format(layout, sharding) for layout, sharding in zip(self._in_layouts,
                                                                         self._compiled.input_shardings)]
        args, kwargs = tree_util.tree_unflatten(self._in_tree, formats)
        return (args, kwargs)

    @property
    def output_formats(self):
        from jax._src.layout import Format
        formats = [Format(layout, sharding) for layout, sharding in zip(self._output_layouts(),
                                                                         self._compiled.output_shardings)]
        return tree_util.tree_unflatten(self._out_tree, formats)

    def as_text(self):
        return self._compiled.as_text()

    def cost_analysis(self):
        return self._compiled.cost_analysis()

    def memory_analysis(self):
        return _MemoryStats(self._compiled.memory_analysis())

    @property
    def input_shardings(self):
        args, kwargs = tree_util.tree_unflatten(self._in_tree, self._compiled.input_shardings)
        return (args, kwargs)

    @property
    def output_shardings(self):
        return tree_util.tree_unflatten(self._out_tree, self._compiled.output_shardings)

    def __call__(self, *args, **kwargs):
        from jax._src import layout as layout_lib
        leaves, _ = tree_util.tree_flatten((args, kwargs))
        layout_lib.check_arg_layouts(leaves, self._in_layouts)
        outs = self._compiled(leaves)
        if self._records_out_layouts:
            for out, layout in zip(outs, self._output_layouts()):
                layout_lib.set_array_layout(out, layout, committed=False)
        return tree_util.tree_unflatten(self._out_tree, outs)


def _shape_dtype_struct(shape, dtype_name, weak_type, sharding=None):
    import jax
    import jax.numpy as jnp
    return jax.ShapeDtypeStruct(shape, getattr(jnp, dtype_name) if dtype_name == 'bfloat16' else dtype_name,
                                weak_type=weak_type, sharding=sharding)


def _input_type_mesh(leaves):
    """The AbstractMesh the arguments' types name: that of the first argument (an array or a ShapeDtypeStruct)
    placed on a mesh whose axes are all Explicit or Manual; JAX's types carry it to every value of the trace."""
    from jax.sharding import AxisType
    for leaf in leaves:
        mesh = getattr(getattr(leaf, 'sharding', None), 'mesh', None)
        types = tuple(getattr(mesh, 'axis_types', ()) or ())
        if types and all(t in (AxisType.Explicit, AxisType.Manual) for t in types):
            return getattr(mesh, 'abstract_mesh', mesh)
    return None


def _explicit_sharding(value, input_mesh=None):
    """Traced.out_info's sharding of an output. From 0.7.2 (JAX's _traced_out_info): its type's sharding when every
    axis of the type's mesh is Explicit or Manual, else none (nothing is compiled to decide one); a value whose
    type names no mesh of its own belongs to the arguments' `input_mesh`. Before 0.7.2, the type's spec over the
    mesh in context when that mesh is all Explicit."""
    from jax.sharding import AxisType
    if _shardscope.jax_version_info() >= (0, 7, 2):
        import jax
        from jax._src.array_methods import _TypeSharding
        try:
            sharding = getattr(jax.typeof(value), 'sharding', None)
        except TypeError:
            return None
        if sharding is None:
            return None
        if not tuple(getattr(sharding.mesh, 'axis_types', ()) or ()) and input_mesh is not None:
            sharding = _TypeSharding(input_mesh, sharding.spec)
        types = tuple(getattr(sharding.mesh, 'axis_types', ()) or ())
        if not types or any(t not in (AxisType.Explicit, AxisType.Manual) for t in types):
            return None
        return sharding
    from jax._src.mesh_context import concrete_mesh
    mesh = concrete_mesh()
    spec = getattr(value, '_type_spec', None)
    types = tuple(getattr(mesh, 'axis_types', ()) or ()) if mesh is not None else ()
    if spec is None or not types or any(t != AxisType.Explicit for t in types):
        return None
    return _shardscope.NamedSharding(mesh, spec)


def eval_shape(fun, *args, **kwargs):
    """jax.eval_shape: fun's output structure as ShapeDtypeStructs for array or ShapeDtypeStruct arguments."""
    return _Jitted(fun).eval_shape(*args, **kwargs)


def _leaf_paths(tree):
    """Key-path suffixes ('', '[0]', "['a']", '.kernel.value') of a pytree's leaves, in flattening order."""
    return [tree_util.keystr(path) for path, _ in tree_util.tree_flatten_with_path(tree)[0]]


def jit(fun=None, *, in_shardings=None, out_shardings=None, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, keep_unused=False, device=None, backend=None, inline=False,
        abstracted_axes=None, compiler_options=None):
    if fun is None:
        return lambda f: jit(f, in_shardings=in_shardings, out_shardings=out_shardings,
                             static_argnums=static_argnums, static_argnames=static_argnames)
    _validate_argnums(fun, static_argnums, 'static_argnums')
    _validate_argnums(fun, donate_argnums, 'donate_argnums')
    return _Jitted(fun, in_shardings=in_shardings, out_shardings=out_shardings, static_argnums=static_argnums,
                   static_argnames=static_argnames)
