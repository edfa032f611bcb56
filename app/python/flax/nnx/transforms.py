# flax.nnx transforms (jit, grad, value_and_grad, eval_shape, vmap, remat): graph nodes in the arguments travel as
# (GraphDef, State) through the jax transform, are merged inside, and their new state is written back to the
# caller's objects afterwards, which re-inserts their attributes in sorted order as Flax's merge does.
import functools

import jax

from flax.nnx import graphlib, statelib
from flax.nnx.variablelib import Variable, Param


class _NodeState:
    """A graph node as a pytree: its State's leaves are children, its GraphDef rides in the treedef."""

    def __init__(self, graphdef, state):
        self.graphdef = graphdef
        self.state = state


jax.tree_util.register_pytree_node(_NodeState, lambda n: ((n.state,), n.graphdef),
                                   lambda graphdef, children: _NodeState(graphdef, children[0]))


def _is_node(x):
    return graphlib.is_graph_node(x) and not isinstance(x, Variable)


def _to_pure(tree):
    return jax.tree.map(lambda x: _NodeState(*graphlib.split(x)) if _is_node(x) else x, tree, is_leaf=_is_node)


def _from_pure(tree):
    return jax.tree.map(lambda x: graphlib.merge(x.graphdef, x.state) if isinstance(x, _NodeState) else x, tree,
                        is_leaf=lambda x: isinstance(x, _NodeState))


def _nodes_of(tree):
    return [x for x in jax.tree.leaves(tree, is_leaf=_is_node) if _is_node(x)]


def _write_back(originals, states):
    for node, state in zip(originals, states):
        graphlib.update(node, state)
        graphlib.reorder(node)


def _pure_call(f, pure_args, pure_kwargs):
    args = _from_pure(pure_args)
    kwargs = _from_pure(pure_kwargs)
    out = f(*args, **kwargs)
    inner = _nodes_of((args, kwargs))
    return _to_pure(out), [graphlib.state(n) for n in inner]


class _Jitted:
    def __init__(self, f, **jit_kwargs):
        functools.update_wrapper(self, f)
        self.fun = f
        self._jitted = jax.jit(lambda a, k: _pure_call(f, a, k), **jit_kwargs)

    def __call__(self, *args, **kwargs):
        originals = _nodes_of((args, kwargs))
        out, states = self._jitted(_to_pure(args), _to_pure(kwargs))
        _write_back(originals, states)
        return _from_pure(out)

    def lower(self, *args, **kwargs):
        return self._jitted.lower(_to_pure(args), _to_pure(kwargs))

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


def jit(fun=None, *, in_shardings=None, out_shardings=None, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, **kwargs):
    if fun is None:
        return lambda f: jit(f, in_shardings=in_shardings, out_shardings=out_shardings)
    return _Jitted(fun)


def value_and_grad(f, argnums=0, has_aux=False, *, wrt=Param, **kwargs):
    single = isinstance(argnums, int)
    argnums_t = (argnums,) if single else tuple(argnums)

    def wrapper(*args):
        diffs, defs = [], {}
        for i in argnums_t:
            if _is_node(args[i]):
                graphdef, diff, rest = graphlib.split(args[i], wrt, ...)
                defs[i] = (graphdef, rest)
                diffs.append(diff)
            else:
                diffs.append(args[i])

        def pure(diff_args):
            new_args = list(args)
            for i, d in zip(argnums_t, diff_args):
                new_args[i] = graphlib.merge(defs[i][0], d, defs[i][1]) if i in defs else d
            return f(*new_args)

        value, grads = jax.value_and_grad(pure, has_aux=has_aux)(tuple(diffs))
        for i in defs:
            graphlib.reorder(args[i])
        return value, (grads[0] if single else grads)

    return wrapper


def grad(f, argnums=0, has_aux=False, *, wrt=Param, **kwargs):
    vg = value_and_grad(f, argnums, has_aux, wrt=wrt)

    def wrapper(*args):
        value, grads = vg(*args)
        if has_aux:
            return grads, value[1]
        return grads
    return wrapper


def eval_shape(f, *args, **kwargs):
    graphdefs = []

    def pure(*pargs, **pkwargs):
        out = f(*_from_pure(pargs), **_from_pure(pkwargs))
        pure_out = _to_pure(out)
        leaves, treedef = jax.tree_util.tree_flatten(pure_out)
        graphdefs.append(treedef)
        return leaves

    leaves = jax.eval_shape(pure, *_to_pure(args), **_to_pure(kwargs))
    return _from_pure(jax.tree_util.tree_unflatten(graphdefs[-1], leaves))


def vmap(f=None, *, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None,
         transform_metadata=None):
    if f is None:
        return lambda g: vmap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, axis_size=axis_size,
                              spmd_axis_name=spmd_axis_name, transform_metadata=transform_metadata)

    def wrapper(*args):
        # Graph nodes among the arguments, each with the axis its argument is mapped over: their state after the
        # call (updated Variables, and attributes a lazy init added) is mapped back out over the same axis and
        # written to the caller's objects, as NNX transforms propagate graph updates.
        per_arg = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        tracked = [(node, axis) for arg, axis in zip(args, per_arg) if axis is None or isinstance(axis, int)
                   for node in _nodes_of(arg)]

        def pure(*pargs):
            fargs = _from_pure(pargs)
            out = f(*fargs)
            inner = [node for arg, axis in zip(fargs, per_arg) if axis is None or isinstance(axis, int)
                     for node in _nodes_of(arg)]
            return _to_pure(out), [graphlib.state(n) for n in inner]
        out, states = jax.vmap(pure, in_axes=in_axes, out_axes=(out_axes, [axis for _, axis in tracked]),
                               axis_name=axis_name, axis_size=axis_size)(*_to_pure(args))
        _write_back([node for node, _ in tracked], states)
        out = _from_pure(out)
        if transform_metadata:
            from flax.nnx import spmd
            axis = out_axes if isinstance(out_axes, int) else 0
            for node in _nodes_of(out):
                spmd.add_axis(graphlib.state(node), axis, transform_metadata)
        return out
    return wrapper


def remat(f=None, **kwargs):
    if f is None:
        return lambda g: remat(g, **kwargs)
    return f


del statelib
