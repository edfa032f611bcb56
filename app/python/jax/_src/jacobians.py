# jax.jacfwd, jax.jacrev, jax.jacobian and jax.hessian as JAX builds them: the JVP (or the VJP's pullback) vmapped
# over an identity basis of the inputs (or outputs), unravelled into the input and output pytrees.
import functools

import _shardscope
from jax._src import tree as tree_util
from jax._src.api import _check_callable, jvp, vmap


def _argnums_partial(fun, argnums, args, kwargs):
    """fun of the arguments at `argnums` only (the others and the keywords fixed), and those arguments."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -len(args) <= i < len(args):
            raise ValueError(f"argnums {i} is out of bounds for a function called with {len(args)} positional "
                             "arguments")
    nums = tuple(i % len(args) for i in nums)

    def f_partial(*dyn_args):
        full = list(args)
        for i, a in zip(nums, dyn_args):
            full[i] = a
        return fun(*full, **kwargs)
    return f_partial, tuple(args[i] for i in nums)


def _dtype_of(x):
    import jax.numpy as jnp
    return jnp.result_type(x)


def _require_complex(name, what, dtype):
    """holomorphic=True: the inputs or outputs (`what`) must be complex."""
    import jax.numpy as jnp
    if not jnp.issubdtype(dtype, jnp.complexfloating):
        raise TypeError(f"{name} with holomorphic=True requires {what} with complex dtype, but got {dtype.name}.")


def _check_input_dtype_jacfwd(holomorphic, x):
    import jax.numpy as jnp
    dtype = _dtype_of(x)
    if holomorphic:
        _require_complex('jacfwd', 'inputs', dtype)
    elif not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
                        f"but got {dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex inputs or integer inputs, "
                        "use jax.jvp directly.")


def _check_output_dtype_jacfwd(holomorphic, x):
    if holomorphic:
        _require_complex('jacfwd', 'outputs', _dtype_of(x))


def _check_input_dtype_jacrev(holomorphic, allow_int, x):
    import jax.numpy as jnp
    dtype = _dtype_of(x)
    if holomorphic:
        _require_complex('jacrev', 'inputs', dtype)
    if jnp.issubdtype(dtype, jnp.integer) or jnp.issubdtype(dtype, jnp.bool_):
        if not allow_int:
            raise TypeError("jacrev requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                            f"np.inexact), but got {dtype.name}. If you want to use Boolean- or integer-valued "
                            "inputs, use vjp or set allow_int to True.")
    elif not jnp.issubdtype(dtype, jnp.inexact):
        raise TypeError("jacrev requires numerical-valued inputs (input dtype that is a sub-dtype of np.bool_ or "
                        f"np.number), but got {dtype.name}.")


def _check_output_dtype_jacrev(holomorphic, x):
    import jax.numpy as jnp
    dtype = _dtype_of(x)
    if holomorphic:
        _require_complex('jacrev', 'outputs', dtype)
    elif jnp.issubdtype(dtype, jnp.complexfloating):
        raise TypeError("jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex outputs, use jax.vjp "
                        "directly.")


def _split_along(x, indices, axis):
    import numpy as np
    import jax.numpy as jnp
    if isinstance(x, np.ndarray):
        return np.split(x, indices, axis)
    return jnp.split(x, indices, axis)


def _matching_type(x, example):
    """x cast to the example leaf's dtype and weak type (the real part where the example is not complex)."""
    import jax.numpy as jnp
    dtype = _dtype_of(example)
    if jnp.issubdtype(x.dtype, jnp.complexfloating) and not jnp.issubdtype(dtype, jnp.complexfloating):
        x = x.real
    from jax.dtypes import is_weakly_typed
    weak = is_weakly_typed(example)
    if x.dtype == dtype and bool(getattr(x, 'weak_type', False)) == weak:
        return x
    return _shardscope.lax._convert_element_type(x, dtype, weak)


def _unravel_into(pytree, axis, example, arr):
    """arr split along `axis` into one piece per leaf of `pytree` (its size there), each shaped as the leaf is
    at that axis and typed as `example` (or as the leaf, without one), in pytree's structure."""
    import numpy as np
    leaves, treedef = tree_util.tree_flatten(pytree)
    shapes = [arr.shape[:axis] + np.shape(leaf) + arr.shape[axis + 1:] for leaf in leaves]
    parts = _split_along(arr, list(np.cumsum([np.size(leaf) for leaf in leaves[:-1]])), axis)
    pieces = [_matching_type(np.reshape(part, shape), leaf if example is None else example)
              for part, shape, leaf in zip(parts, shapes, leaves)]
    return tree_util.tree_unflatten(treedef, pieces)


def _std_basis(pytree):
    """The identity over every element of pytree's leaves, cut into the leaves' shapes along axis 1."""
    import numpy as np
    import jax.numpy as jnp
    leaves, _ = tree_util.tree_flatten(pytree)
    size = sum(int(np.size(leaf)) for leaf in leaves)
    return _unravel_into(pytree, 1, None, jnp.eye(size, dtype=jnp.result_type(*leaves)))


def _none_spec_tree(pytree):
    # JAX builds a PartitionSpec per leaf of the structure it unravels into, through the leaves' own pytree
    # constructors: a constructor that converts its contents (jnp.asarray(P(None))) fails there as it does in JAX.
    from jax.sharding import PartitionSpec
    import numpy as np
    return tree_util.tree_map(lambda leaf: PartitionSpec(*[None] * len(np.shape(leaf))), pytree)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """jax.jacfwd: the JVP vmapped over the identity basis of the inputs; the basis axis ends up last."""
    _check_callable(fun)

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        tree_util.tree_map(functools.partial(_check_input_dtype_jacfwd, holomorphic), dyn_args)
        pushfwd = functools.partial(jvp, f_partial, dyn_args, has_aux=has_aux)
        if has_aux:
            y, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(_std_basis(dyn_args))
        else:
            (y, jac), aux = vmap(pushfwd, out_axes=(None, -1))(_std_basis(dyn_args)), None
        tree_util.tree_map(functools.partial(_check_output_dtype_jacfwd, holomorphic), y)
        example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args

        def unravel(y_leaf, arr):
            _none_spec_tree(example_args)
            return _unravel_into(example_args, arr.ndim - 1, y_leaf, arr)
        jac_tree = tree_util.tree_map(unravel, y, jac)
        return (jac_tree, aux) if has_aux else jac_tree
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """jax.jacrev: the VJP's pullback vmapped over the identity basis of the outputs; that axis comes first."""
    from jax._src.tree_extras import tree_transpose
    from jax._src.vjp import vjp
    _check_callable(fun)

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        tree_util.tree_map(functools.partial(_check_input_dtype_jacrev, holomorphic, allow_int), dyn_args)
        if has_aux:
            y, pullback, aux = vjp(f_partial, *dyn_args, has_aux=True)
        else:
            (y, pullback), aux = vjp(f_partial, *dyn_args), None
        tree_util.tree_map(functools.partial(_check_output_dtype_jacrev, holomorphic), y)
        jac = vmap(pullback)(_std_basis(y))
        jac = jac[0] if isinstance(argnums, int) else jac
        example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args

        def unravel(arg_leaf, arr):
            _none_spec_tree(y)
            return _unravel_into(y, 0, arg_leaf, arr)
        jac_tree = tree_util.tree_map(unravel, example_args, jac)
        jac_tree = tree_transpose(tree_util.tree_structure(example_args), tree_util.tree_structure(y), jac_tree)
        return (jac_tree, aux) if has_aux else jac_tree
    return jacfun


def jacobian(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    return jacrev(fun, argnums, has_aux, holomorphic, allow_int)


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """jax.hessian: jacfwd of jacrev."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)
