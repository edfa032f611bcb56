# jit, vmap, grad, jvp, pmap, shard_map and make_jaxpr: pytrees flattened here, the work done by the engine.
import functools
import operator
import inspect

import _shardscope
from jax._src import tree as tree_util
from jax._src.array_methods import ArrayImpl


def _name(fun):
    return getattr(fun, '__name__', 'fun').replace('<lambda>', '<lambda>')


def _flat_function(fun, in_tree, out_store, args_are_leaves=True):
    """`fun` over a flat list of leaves; remembers its output tree in out_store[0]."""
    def flat(leaves):
        args, kwargs = tree_util.tree_unflatten(in_tree, list(leaves))
        out = fun(*args, **kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_store[0] = out_tree
        return out_leaves
    return flat


def _static_split(args, static_argnums):
    dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
    def rebuild(dynamic_args):
        it = iter(dynamic_args)
        return tuple(args[i] if i in static_argnums else next(it) for i in range(len(args)))
    return dynamic, rebuild


def _normalize_argnums(fun, static_argnums, static_argnames):
    if static_argnums is None:
        static_argnums = ()
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)
    if static_argnames:
        names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        try:
            params = list(inspect.signature(fun).parameters)
            static_argnums += tuple(params.index(n) for n in names if n in params)
        except (TypeError, ValueError):
            pass
    return frozenset(static_argnums)


from jax._src.jit import jit, _Jitted  # noqa: E402,F401  (jit and its cache live in jit.py)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    static = _normalize_argnums(fun, static_argnums, None)

    def make(*args, **kwargs):
        dynamic, rebuild = _static_split(args, static)
        leaves, in_tree = tree_util.tree_flatten((tuple(dynamic), kwargs))
        out_store = [None]

        def call(*dyn, **kw):
            from jax import errors
            from jax._src.jit import arg_leaf_names
            with errors.tracing(fun, 'make_jaxpr', arg_leaf_names(fun, args, static)):
                return fun(*rebuild(dyn), **kw)

        handle, consts = _shardscope.make_jaxpr_handle(_flat_function(call, in_tree, out_store), leaves, _name(fun))
        from jax._src.jaxpr_objects import jaxpr_object
        closed = jaxpr_object(handle, consts)
        if not return_shape:
            return closed
        # return_shape=True: the output structure too, as ShapeDtypeStructs.
        import jax
        outvars = closed.jaxpr.outvars
        shapes = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype, weak_type=v.aval.weak_type) for v in outvars]
        return closed, tree_util.tree_unflatten(out_store[0], shapes)
    return make


class Jaxpr:
    """The open jaxpr of jit(f).trace(...).jaxpr's text-only ClosedJaxpr: JAX prints both the same way, constants as
    the outer lambda's binders."""

    def __init__(self, text):
        self._text = text

    def __str__(self):
        return self._text

    __repr__ = __str__

    def pretty_print(self, **_):
        return self._text


class ClosedJaxpr(Jaxpr):
    @property
    def jaxpr(self):
        return Jaxpr(self._text)


def _axes_per_leaf(axes, tree, what):
    if isinstance(axes, list):
        axes = tuple(axes)
    return tree_util.broadcast_prefix(axes, tree)


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
            raise ValueError('vmap in_axes must be an int, None, or a tuple of entries corresponding to the '
                             f'positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, '
                             f'len(args)={len(args)}.')
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        from jax._src.ref import Ref, vmap_over_refs
        if any(isinstance(leaf, Ref) for leaf in leaves) and not _shardscope.debug.in_trace():
            return vmap_over_refs(fun, in_axes, out_axes, args, kwargs)
        axes = in_axes if isinstance(in_axes, (int, type(None))) else tuple(in_axes)
        flat_axes = tree_util.broadcast_prefix((axes, 0), (args, kwargs)) if not isinstance(axes, tuple) or \
            len(axes) == len(args) else tree_util.broadcast_prefix((axes, 0), (args, kwargs))
        out_store = [None]
        flat = _flat_function(fun, in_tree, out_store)

        def flat_out_axes():
            # out_axes is a prefix of the output tree, which the trace has just made known.
            out_tree = out_store[0]
            spec = tuple(out_axes) if isinstance(out_axes, list) else out_axes
            try:
                return tree_util.broadcast_prefix(spec, tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves))
            except ValueError:
                raise ValueError('vmap out_axes specification must be a tree prefix of the corresponding value, '
                                 f'got specification {spec} for value tree {out_tree}.') from None
        # Leaves mapped over no axis go into the function as they are, as JAX passes unmapped arguments: a Python
        # bool stays a bool a branch may test, an outer array stays concrete. Only the mapped ones are traced.
        mapped = [i for i, axis in enumerate(flat_axes) if axis is not None]
        positions = None
        if mapped and len(mapped) < len(leaves):
            positions = mapped
            full = list(leaves)

            def flat_mapped(mapped_leaves, flat=flat):
                merged = list(full)
                for position, leaf in zip(mapped, mapped_leaves):
                    merged[position] = leaf
                return flat(merged)
            call, call_leaves, call_axes = flat_mapped, [leaves[i] for i in mapped], [flat_axes[i] for i in mapped]
        else:
            call, call_leaves, call_axes = flat, leaves, flat_axes
        try:
            outs = _shardscope.vmap_call(call, call_leaves, call_axes,
                                         [out_axes] if isinstance(out_axes, (int, type(None))) else flat_out_axes,
                                         axis_name, _name(fun))
        except ValueError as err:
            raise _with_argument_names(err, fun, args, positions) from None
        return tree_util.tree_unflatten(out_store[0], outs)
    return batched


def _with_argument_names(err, fun, args, positions=None):
    """vmap's size error names each argument by its parameter (`argument a`), as JAX's debug info does; the
    engine only knows leaf positions (`args[0]`), among the mapped leaves when `positions` lists those."""
    import re
    message = str(err)
    if not message.startswith('vmap got inconsistent sizes'):
        return err
    from jax._src.jit import arg_leaf_names
    names = arg_leaf_names(fun, args)

    def named(match):
        index = int(match.group(1))
        if positions is not None and index < len(positions):
            index = positions[index]
        if names and index < len(names):
            return f'of argument {names[index]}'
        return f'of args[{index}]'
    return ValueError(re.sub(r'of args\[(\d+)\]', named, message))


def _check_callable(fun):
    if isinstance(fun, staticmethod):
        raise TypeError(f"staticmethod arguments are not supported, got {fun}")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _ensure_index(x):
    try:
        return operator.index(x)
    except TypeError:
        return tuple(map(operator.index, x))


def _grad_argnums(argnums, args):
    """JAX's checks on argnums against the call (value_and_grad_f, _ensure_inbounds); negatives resolved."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    max_argnum = max(nums) if nums else -1
    if max_argnum >= len(args):
        raise TypeError(f"differentiating with respect to {argnums=} requires at least "
                        f"{max_argnum + 1} positional arguments to be passed by the caller, "
                        f"but got only {len(args)} positional arguments.")
    for i in nums:
        if not -len(args) <= i < len(args):
            raise ValueError("Positional argument indices, e.g. for `static_argnums`, must have "
                             "value greater than or equal to -len(args) and less than len(args), "
                             f"but got value {i} for len(args) == {len(args)}.")
    return tuple(i % len(args) for i in nums)


def _grad_impl(fun, argnums, has_aux, with_value):
    _check_callable(fun)
    argnums = _ensure_index(argnums)
    single = isinstance(argnums, int)

    def wrapped(*args, **kwargs):
        nums = _grad_argnums(argnums, args)
        # Every differentiated argument may be a pytree: its leaves become separate flat arguments. The others are
        # closed over as they are, as JAX's argnums_partial does (they may be functions or other Python values).
        flat_args, trees, positions = [], {}, {}
        for i in sorted(set(nums)):
            leaves, treedef = tree_util.tree_flatten(args[i])
            positions[i] = (len(flat_args), len(leaves))
            flat_args.extend(leaves)
            trees[i] = treedef
        out_store = [None]

        def flat(leaves):
            rebuilt = [tree_util.tree_unflatten(trees[i], leaves[positions[i][0]:positions[i][0] + positions[i][1]])
                       if i in positions else arg for i, arg in enumerate(args)]
            from jax._src import custom_derivatives
            with custom_derivatives.differentiating('grad'):
                out = fun(*rebuilt, **kwargs)
            if has_aux:
                value, aux = out
                aux_leaves, aux_tree = tree_util.tree_flatten(aux)
                out_store[0] = aux_tree
                _check_scalar_output(value)
                return [value] + aux_leaves
            _check_scalar_output(out)
            return [out]

        flat_nums = [start + k for n in nums for start, count in [positions[n]] for k in range(count)]
        try:
            outs = _shardscope.grad_call(flat, flat_args, flat_nums, has_aux, with_value, _name(fun))
        except _NonArrayOutput as error:
            raise _non_array_output_error(
                error, lambda: fun(*args, **kwargs)[0] if has_aux else fun(*args, **kwargs)) from None
        n_grads = len(flat_nums)
        if with_value:
            value = outs[0]
            aux_leaves = outs[1:len(outs) - n_grads]
            grad_leaves = outs[len(outs) - n_grads:]
        else:
            grad_leaves = outs[:n_grads]
            aux_leaves = outs[n_grads:]
        grads, next_leaf = [], 0
        for n in nums:
            start, count = positions[n]
            grads.append(tree_util.tree_unflatten(trees[n], grad_leaves[next_leaf:next_leaf + count]))
            next_leaf += count
        grad = grads[0] if single else tuple(grads)
        aux = tree_util.tree_unflatten(out_store[0], aux_leaves) if has_aux else None
        if with_value:
            return ((value, aux), grad) if has_aux else (value, grad)
        return (grad, aux) if has_aux else grad
    return wrapped


class _NonArrayOutput(TypeError):
    """Raised inside the trace for an output that is no array at all; grad reports it once the trace is left."""

    def __init__(self, out):
        super().__init__(f'Gradient only defined for scalar-output functions. Output was {out}.')


def _check_scalar_output(out):
    """grad's _check_scalar for an output that is no array at all (a tuple, a dict, None)."""
    import numpy as np
    if out is None or isinstance(out, (tuple, list, dict, str)) or not (hasattr(out, 'dtype') or np.isscalar(out)):
        raise _NonArrayOutput(out)


def _non_array_output_error(error, concrete_output):
    """JAX quotes the output's concrete values when grad is called eagerly (its primal values are concrete there);
    shardscope traces, so it runs the function once more, outside any trace, to quote the same."""
    if not _shardscope.debug.in_trace():
        try:
            shown = concrete_output()
        except Exception:  # noqa: BLE001 - the error below is the one to report
            shown = None
        if shown is not None:
            return TypeError(f'Gradient only defined for scalar-output functions. Output was {shown}.')
    return TypeError(str(error))


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    return functools.wraps(fun)(_grad_impl(fun, argnums, has_aux, with_value=False))


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    return functools.wraps(fun)(_grad_impl(fun, argnums, has_aux, with_value=True))


def _check_jvp_tangents(p_leaves, p_tree, t_leaves, t_tree):
    """api._jvp's checks: one tangent per primal, of the primal's shape, and of its dtype where it is inexact."""
    import numpy as np
    if p_tree != t_tree:
        raise TypeError('primal and tangent arguments to jax.jvp must have the same tree structure; primals have '
                        f'tree structure {p_tree} whereas tangents have tree structure {t_tree}.')
    for p, t in zip(p_leaves, t_leaves):
        p_dtype, t_dtype = _leaf_dtype(p), _leaf_dtype(t)
        if p_dtype is not None and t_dtype is not None and p_dtype.kind == 'f' and p_dtype != t_dtype:
            raise TypeError('primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case '
                            'of int/bool primal dtype the tangent dtype must be float0.'
                            f'Got primal dtype {p_dtype} and so expected tangent dtype {p_dtype}, but got '
                            f'tangent dtype {t_dtype} instead.')
        if np.shape(p) != np.shape(t):
            raise ValueError('jvp called with different primal and tangent shapes;'
                             f'Got primal shape {np.shape(p)} and tangent shape as {np.shape(t)}')


def _leaf_dtype(x):
    """The dtype JAX would give an array leaf; None for Python scalars (weakly typed, promoted to fit)."""
    import numpy as np
    if isinstance(x, (bool, int, float, complex)):
        return None
    dtype = getattr(x, 'dtype', None)
    try:
        return np.dtype(dtype) if dtype is not None else None
    except TypeError:
        return None


def jvp(fun, primals, tangents, has_aux=False):
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    _check_jvp_tangents(p_leaves, p_tree, t_leaves, t_tree)
    out_store = [None]
    aux_store = [None, 0]  # aux's tree and leaf count: its leaves follow the outputs' (their tangents are dropped)

    def outputs_then_aux(*args):
        out = fun(*args)
        if not has_aux:
            return out
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError('jvp with has_aux=True requires the function to return a pair (output, aux), '
                            f'got {type(out).__name__}')
        aux_leaves, aux_store[0] = tree_util.tree_flatten(out[1])
        aux_store[1] = len(aux_leaves)
        return (out[0], *aux_leaves)
    flat = _flat_function(outputs_then_aux, tree_util.tree_structure((tuple(primals), {})), out_store)
    def differentiated(leaves):
        from jax._src import custom_derivatives
        with custom_derivatives.differentiating('jvp'):
            return flat(leaves)
    outs = _shardscope.jvp_call(differentiated, p_leaves, t_leaves, _name(fun))
    half = len(outs) // 2
    primal_outs, tangent_outs = outs[:half], outs[half:]
    if not has_aux:
        return (tree_util.tree_unflatten(out_store[0], primal_outs), tree_util.tree_unflatten(out_store[0], tangent_outs))
    out_tree = out_store[0].children()[0]
    n = out_tree.num_leaves
    return (tree_util.tree_unflatten(out_tree, primal_outs[:n]), tree_util.tree_unflatten(out_tree, tangent_outs[:n]),
            tree_util.tree_unflatten(aux_store[0], primal_outs[n:]))


def _flat_specs(specs, tree):
    from jax.sharding import PartitionSpec
    return tree_util.broadcast_prefix(specs, tree, is_leaf=lambda x: isinstance(x, PartitionSpec))


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(), check_vma=True,
              check_rep=None):
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh, axis_names=axis_names,
                                   check_vma=check_vma, check_rep=check_rep)
    if check_rep is not None:
        check_vma = check_rep
    mesh_from_context = mesh is None

    @functools.wraps(f)
    def mapped(*args):
        # JAX looks the context mesh up at the first call, not at decoration, and keeps it for later calls.
        nonlocal mesh
        if mesh is None:
            from jax._src.mesh_context import concrete_mesh
            mesh = concrete_mesh()
            if mesh is None:
                raise ValueError('The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh '
                                 'context')
        leaves, in_tree = tree_util.tree_flatten((args, {}))
        manual = tuple(axis_names) if axis_names else tuple(mesh.axis_names)
        if in_specs is None:
            # From JAX 0.8 on, in_specs may be left out: each argument's spec is its type's (Explicit sharding).
            inferred = tuple(tree_util.tree_map(_type_spec_of, a) for a in args)
            return shard_map(f, out_specs=out_specs, in_specs=inferred, mesh=None if mesh_from_context else mesh,
                             axis_names=axis_names, check_vma=check_vma)(*args)
        _check_specs_name_manual_axes('in', in_specs, mesh, manual)
        specs = (in_specs,) * len(args) if _is_spec(in_specs) else tuple(in_specs)
        try:
            flat_in = tree_util.broadcast_prefix(specs, args, is_leaf=_is_spec)
        except ValueError:
            from jax._src.tree_prefix import prefix_errors
            errors = prefix_errors(in_specs, args)
            if not errors:
                raise
            raise errors[0]('shard_map in_specs') from None
        out_store = [None]
        flat = _flat_function(f, in_tree, out_store)
        flat_out_specs = [None]

        def flat_with_specs(inner_leaves):
            # out_specs is a prefix of the output tree, known once the body has run (JAX broadcasts it there too).
            outs = flat(inner_leaves)
            answer = tree_util.tree_unflatten(out_store[0], outs)
            try:
                flat_out_specs[0] = list(tree_util.broadcast_prefix(out_specs, answer, is_leaf=_is_spec))
            except ValueError:
                from jax._src.tree_prefix import prefix_errors
                errors = prefix_errors(out_specs, answer)
                if not errors:
                    raise
                raise errors[0]('shard_map out_specs') from None
            return outs

        outs = _shardscope.shard_map_call(flat_with_specs, leaves, mesh, flat_in, lambda: flat_out_specs[0],
                                          check_vma, _name(f), _shard_map_arg_paths(f, args, in_specs),
                                          mesh_from_context)
        return tree_util.tree_unflatten(out_store[0], outs)
    return mapped


def _type_spec_of(leaf):
    """The spec of a value's type: a tracer's Explicit sharding, or a placed array's NamedSharding spec."""
    from jax.sharding import NamedSharding, PartitionSpec
    if getattr(leaf, '_is_tracer', False):
        return leaf._type_spec
    sharding = getattr(leaf, 'sharding', None)
    if isinstance(sharding, NamedSharding):
        return sharding.spec
    return PartitionSpec()


def _shard_map_arg_paths(f, args, in_specs):
    """Per argument leaf: its key path in args, its spec's key path in in_specs, and the note naming the
    parameter it is bound to (shard_map's _iter_paths and _try_infer_args)."""
    keystr = tree_util.keystr
    spec_paths, spec_def = tree_util.tree_flatten_with_path(in_specs, is_leaf=_is_spec)
    spec_keys = tree_util.tree_unflatten(spec_def, [keystr(path) for path, _ in spec_paths])
    try:
        leaf_spec_keys = tree_util.broadcast_prefix(spec_keys, args)
    except ValueError:
        return []
    try:
        bound = inspect.signature(f).bind(*args)
        params = [p for p in bound.signature.parameters.values()
                  if p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        params = None
    name = _name(f)
    out = []
    for (path, _), spec_key in zip(tree_util.tree_flatten_with_path(args)[0], leaf_spec_keys):
        note = ''
        if params is not None and path:
            index, first = path[0].idx, keystr(path[:1])
            if index >= len(params) or params[index].kind == params[index].VAR_POSITIONAL:
                note = (f", where args{first} is the index {index - len(params) + 1} component of {name}'s "
                        f"varargs parameter '{params[-1].name}',")
            else:
                note = f", where args{first} is bound to {name}'s parameter '{params[index]}',"
        out.append((keystr(path), spec_key, note))
    return out


def _check_specs_name_manual_axes(prefix, specs, mesh, manual):
    """shard_map._check_specs: every leaf is a PartitionSpec naming only manual axes."""
    paths = tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec)[0]
    keystr = tree_util.keystr
    bad_types = [f'  {prefix}_specs{keystr(key)} is {x} of type {type(x).__name__}, '
                 for key, x in paths if not _is_spec(x)]
    if bad_types:
        raise TypeError(f'shard_map {prefix}_specs argument must be a pytree of `jax.sharding.PartitionSpec` '
                        'instances, but:\n\n' + '\n\n'.join(bad_types) + '\n\n'
                        f'Check the {prefix}_specs values passed to shard_map.')
    msgs = []
    for key, spec in paths:
        for names in spec.partitions:
            names = names if isinstance(names, tuple) else (names,)
            msgs.extend(f'  {prefix}_specs{keystr(key)} refers to {name!r}' for name in names
                        if name is not None and name not in manual)
    if msgs:
        # JAX prints a frozenset, whose order follows string hashes; mesh order keeps the text reproducible.
        ordered = ', '.join(repr(a) for a in mesh.axis_names if a in manual)
        raise ValueError(f'shard_map {prefix}_specs argument must refer to an axis marked as manual '
                         f'(frozenset({{{ordered}}})), but:\n\n' + '\n\n'.join(msgs) + '\n\n'
                         f'Check the {prefix}_specs values passed to shard_map.')


def _is_spec(x):
    from jax.sharding import PartitionSpec
    return isinstance(x, PartitionSpec)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None, backend=None,
         axis_size=None, donate_argnums=(), global_arg_shapes=None):
    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        axes = in_axes if isinstance(in_axes, (int, type(None))) else tuple(in_axes)
        flat_axes = tree_util.broadcast_prefix((axes, 0), (args, kwargs))
        out_store = [None]
        flat = _flat_function(fun, in_tree, out_store)
        def flat_out_axes():
            # out_axes is a prefix of the output tree, which the trace has just made known.
            answer = tree_util.tree_unflatten(out_store[0], [0] * out_store[0].num_leaves)
            try:
                return tree_util.broadcast_prefix(out_axes, answer, is_leaf=lambda x: x is None)
            except ValueError:
                from jax._src.tree_prefix import flatten_axes_error
                raise flatten_axes_error('pmap out_axes', answer, out_axes) from None
        outs = _shardscope.pmap_call(flat, leaves, axis_name, flat_axes,
                                     [out_axes] if isinstance(out_axes, (int, type(None))) else flat_out_axes,
                                     axis_size, devices, _name(fun))
        from jax.interpreters import pxla
        for out in outs:
            pxla.mark_pmap_output(out)
        return tree_util.tree_unflatten(out_store[0], outs)
    return mapped


def linearize(fun, *primals, has_aux=False):
    """jax.linearize: the outputs and the JVP at `primals` as a function of the tangents."""
    out = fun(*primals)
    primals_out, aux = out if has_aux else (out, None)

    def f_jvp(*tangents):
        plain = (lambda *a: fun(*a)[0]) if has_aux else fun
        return jvp(plain, primals, tangents)[1]
    return (primals_out, f_jvp, aux) if has_aux else (primals_out, f_jvp)


def linear_transpose(fun, *primals, reduce_axes=()):
    """jax.linear_transpose: the transpose of a linear function, given example arguments (only their shapes and
    dtypes count). A linear function's vjp at any point is its transpose; shardscope takes it at zeros."""
    import numpy as np
    import jax.numpy as jnp
    leaves, in_tree = tree_util.tree_flatten(primals)
    zeros = [jnp.zeros(np.shape(x), getattr(x, 'dtype', None) or jnp.asarray(x).dtype) for x in leaves]
    zero_primals = tree_util.tree_unflatten(in_tree, zeros)
    from jax._src.jit import eval_shape
    out_shape = eval_shape(fun, *zero_primals)
    out_leaves, out_tree = tree_util.tree_flatten(out_shape)
    in_dtypes = [np.dtype(z.dtype) for z in zeros]
    out_dtypes = [np.dtype(o.dtype) for o in out_leaves]
    if not (all(d.kind in 'fc' for d in in_dtypes + out_dtypes) or all(d.kind in 'iu' for d in in_dtypes + out_dtypes)):
        raise TypeError('linear_transpose only supports [float or complex] -> [float or complex], and integer -> '
                        f'integer functions, but got {in_dtypes} -> {out_dtypes}.')

    def transposed_fun(out_cotangent):
        cts, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(f'cotangent tree does not match function output, expected {out_tree} but got {ct_tree}')
        from jax._src.vjp import vjp
        _, f_vjp = vjp(fun, *zero_primals)
        return f_vjp(out_cotangent)
    return transposed_fun


# The Jacobians build on vmap and jvp above.
from jax._src.jacobians import jacfwd, jacrev, jacobian, hessian  # noqa: E402,F401
