"""jax.custom_jvp and jax.custom_vjp: pytrees flattened here, the function and its rules traced and bound in core
(custom_jvp_call / custom_vjp_call)."""
import functools

import _shardscope
from jax._src import tree as tree_util


# The differentiations (grad, jvp, vjp...) whose traces are open, innermost last: "jvp" for forward mode only,
# "grad" otherwise. JAX runs a custom function's rule once per differentiation that reaches the call, on the
# primal values one level down, and runs the function itself only where nothing differentiates it: a rule that
# calls its own function (`primal_out = f(x)`) therefore runs the function's body, not the rule again.
_differentiations = []


class differentiating:
    """Context manager around a differentiated function's trace."""

    def __init__(self, kind):
        self._kind = kind

    def __enter__(self):
        _differentiations.append(self._kind)

    def __exit__(self, *exc):
        _differentiations.pop()
        return False


def _one_level_down(rule):
    """`rule` run on the primals, below the differentiation that asked for it."""
    def traced(*args):
        kind = _differentiations.pop()
        try:
            return rule(*args)
        finally:
            _differentiations.append(kind)
    return traced


def _evaluated_eagerly(leaves):
    """JAX's eval-level call, where the function runs on the values as given: no trace open and no traced
    argument, or, with no differentiation reaching the call, arguments whose values a grad or jvp of concrete
    values carries (a rule's `f(x)` on its primals)."""
    tracers = [x for x in leaves if getattr(x, '_is_tracer', False)]
    if not tracers:
        return not _shardscope.debug.in_trace()
    return not _differentiations and all(x._concrete_kind for x in tracers)


def _name(fun):
    return getattr(fun, '__name__', type(fun).__name__)


def _split_nondiff(args, nondiff_argnums):
    nondiff = [args[i] for i in nondiff_argnums]
    diff = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, diff


def _merge(nondiff_argnums, nondiff, diff, total):
    out, nd, d = [], iter(nondiff), iter(diff)
    for i in range(total):
        out.append(next(nd) if i in nondiff_argnums else next(d))
    return out


def _resolve_kwargs(fun, args, kwargs):
    """JAX's resolve_kwargs: every argument by position, defaults filled in (a nondiff argument may be one)."""
    import inspect
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):
        if kwargs:
            raise
        return tuple(args)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError('keyword arguments could not be resolved to positions')
    return tuple(bound.args)


class _CustomFunction:
    """What custom_jvp and custom_vjp share: the wrapped function, its static arguments, and method binding."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def _split_args(self, args):
        """The static (nondiff) arguments, and the leaves and tree of the differentiated ones."""
        nondiff, diff = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_util.tree_flatten(tuple(diff))
        return nondiff, diff, leaves, in_tree

    def _full_args(self, nondiff, in_tree, flat_leaves, count):
        """Every argument in call order, the differentiated ones rebuilt from `flat_leaves`."""
        return _merge(self.nondiff_argnums, nondiff, tree_util.tree_unflatten(in_tree, flat_leaves), count)


class custom_jvp(_CustomFunction):
    """A function with a custom JVP rule (jax.custom_jvp)."""

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            tangents_out = [rule(t, primal_out, *primals) for rule, t in zip(jvps, tangents) if rule is not None]
            if not tangents_out:
                return primal_out, tree_util.tree_map(lambda x: x * 0, primal_out)
            # JAX starts the sum from symbolic zeros, which add no equation.
            total = functools.reduce(lambda a, b: tree_util.tree_map(lambda x, y: x + y, a, b), tangents_out)
            return primal_out, total
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        nondiff, diff, leaves, in_tree = self._split_args(args)
        if _evaluated_eagerly(leaves):
            return self.fun(*args)
        out_store = [None]

        def flat_fun(flat_leaves):
            full = self._full_args(nondiff, in_tree, flat_leaves, len(args))
            out_leaves, out_store[0] = tree_util.tree_flatten(self.fun(*full))
            return out_leaves

        def flat_jvp(flat_leaves):
            n = len(flat_leaves) // 2
            primals = tree_util.tree_unflatten(in_tree, flat_leaves[:n])
            tangents = tree_util.tree_unflatten(in_tree, flat_leaves[n:])
            out = self.jvp(*nondiff, tuple(primals), tuple(tangents))
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"Custom JVP rule {_name(self.jvp)} for function {name} must produce a pair "
                                f"(list or tuple of length two) representing primal and tangent outputs, but got "
                                f"{out}.")
            primal_out, tangent_out = out
            p_leaves, p_tree = tree_util.tree_flatten(primal_out)
            if out_store[0] is None:
                out_store[0] = p_tree
            t_leaves, t_tree = tree_util.tree_flatten(tangent_out)
            if p_tree != t_tree:
                raise TypeError(f"Custom JVP rule {_name(self.jvp)} for function {name} must produce primal and "
                                f"tangent outputs with equal container (pytree) structures, but got {p_tree} and "
                                f"{t_tree} respectively.")
            return list(p_leaves) + list(t_leaves)

        if _differentiations:
            outs = _shardscope.custom_jvp_call(None, _one_level_down(flat_jvp), leaves, name, _name(self.jvp))
        else:
            outs = _shardscope.custom_jvp_call(flat_fun, None, leaves, name, _name(self.jvp))
        return tree_util.tree_unflatten(out_store[0], outs)


class custom_vjp(_CustomFunction):
    """A function with a custom VJP rule (jax.custom_vjp)."""

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        nondiff, diff, leaves, in_tree = self._split_args(args)
        if _evaluated_eagerly(leaves):
            return self.fun(*args)
        out_store = [None]
        res_store = [None]

        def full_args(flat_leaves):
            return self._full_args(nondiff, in_tree, flat_leaves, len(args))

        def flat_fun(flat_leaves):
            out_leaves, out_store[0] = tree_util.tree_flatten(self.fun(*full_args(flat_leaves)))
            return out_leaves

        def flat_fwd(flat_leaves):
            out = self.fwd(*full_args(flat_leaves))
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"Custom VJP fwd rule {_name(self.fwd)} for function {name} must produce a pair "
                                f"(list or tuple of length two) where the first element represents the primal "
                                f"output (equal to the output of the custom_vjp-decorated function {name}) and the "
                                f"second element represents residuals (i.e. values stored from the forward pass "
                                f"for use on the backward pass), but instead the fwd rule output's type was "
                                f"{type(out)}.")
            primal_out, res = out
            p_leaves, p_tree = tree_util.tree_flatten(primal_out)
            if out_store[0] is None:
                out_store[0] = p_tree
            r_leaves, res_store[0] = tree_util.tree_flatten(res)
            return list(p_leaves) + list(r_leaves)

        def flat_bwd(flat_leaves):
            n_res = res_store[0].num_leaves
            res = tree_util.tree_unflatten(res_store[0], flat_leaves[:n_res])
            ct = tree_util.tree_unflatten(out_store[0], flat_leaves[n_res:])
            cts = self.bwd(*nondiff, res, ct)
            if not isinstance(cts, (tuple, list)):
                raise TypeError(f"Custom VJP bwd rule must produce a tuple (list or tuple of length equal to the "
                                f"number of arguments to the primal function), but got {type(cts)}.")
            out = []
            for arg, ct_arg in zip(diff, cts):
                arg_leaves, arg_tree = tree_util.tree_flatten(arg)
                if ct_arg is None:
                    out.extend(_shardscope_zeros_like(a) for a in arg_leaves)
                    continue
                ct_leaves = tree_util.tree_leaves(ct_arg, is_leaf=lambda x: x is None)
                out.extend(_shardscope_zeros_like(a) if c is None else c for a, c in zip(arg_leaves, ct_leaves))
            return out

        # How many of the forward rule's outputs are primal outputs: known once it is traced.
        fwd_out_count = [None]

        def flat_fwd_counted(flat_leaves):
            out = flat_fwd(flat_leaves)
            fwd_out_count[0] = len(out) - res_store[0].num_leaves
            return out

        names = (name, _name(self.fwd), _name(self.bwd))
        if not _differentiations:
            outs = _shardscope.custom_vjp_call(flat_fun, None, None, leaves, lambda: None, *names)
        elif _differentiations[-1] == 'jvp':
            # Forward mode reaches the call: JAX runs the forward rule, then refuses.
            _one_level_down(flat_fwd)(leaves)
            raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")
        else:
            outs = _shardscope.custom_vjp_call(None, _one_level_down(flat_fwd_counted), _one_level_down(flat_bwd),
                                               leaves, lambda: fwd_out_count[0], *names)
        return tree_util.tree_unflatten(out_store[0], outs)


def _shardscope_zeros_like(x):
    import jax.numpy as jnp
    return jnp.zeros_like(x)


def custom_gradient(fun):
    """jax.custom_gradient: fun returns (value, vjp_fn)."""
    @custom_vjp
    def wrapped(*args):
        value, _ = fun(*args)
        return value

    def fwd(*args):
        value, vjp_fn = fun(*args)
        return value, (args,)

    def bwd(res, g):
        (args,) = res
        _, vjp_fn = fun(*args)
        out = vjp_fn(g)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)
    wrapped.defvjp(fwd, bwd)
    return functools.wraps(fun)(wrapped)
