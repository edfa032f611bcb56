# lax.scan, fori_loop, while_loop, cond, switch and map: pytrees and argument checks here,
# tracing and the control-flow equations in the engine.
import inspect

import numpy as np

import _shardscope
from jax._src import tree as tree_util


def _shape(x):
    shape = getattr(x, 'shape', None)
    return tuple(shape) if shape is not None else np.shape(x)


def _carry_names(body_fun, init):
    """How JAX names each carry leaf in type errors: by the body's first parameter name and the leaf's path."""
    try:
        params = list(inspect.signature(body_fun).parameters)
        carry_name = params[0] if params else None
    except (TypeError, ValueError):
        carry_name = None
    names = []
    for path, _ in tree_util.tree_flatten_with_path(init)[0]:
        keys = tree_util.keystr(path)
        if carry_name:
            names.append(f'the input carry component {carry_name}{keys}' if keys else f'the input carry {carry_name}')
        else:
            names.append(f'the input carry at path {keys}' if keys else 'the input carry')
    return names


def _check_same_structure(what, init_tree, out_tree):
    if init_tree != out_tree:
        raise TypeError(
            f"{what} function carry input and carry output must have the same pytree structure, but they differ:\n\n"
            f"the input tree structure is:\n{init_tree}\nthe output tree structure is:\n{out_tree}\n\n"
            "Revise the function so that the carry output has the same pytree structure as the carry input.")


def _typed_spec(x):
    """The PartitionSpec in x's type (jax.typeof), or None for a value that has none."""
    if not hasattr(x, 'shape') or not hasattr(x, 'dtype'):
        return None
    import jax
    try:
        return jax.typeof(x).sharding.spec
    except (TypeError, AttributeError):
        return None


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    init_leaves, init_tree = tree_util.tree_flatten(init)
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    for x in xs_leaves:
        if not hasattr(x, 'shape') and np.ndim(x) == 0 and not isinstance(x, np.ndarray):
            raise ValueError(f"scan got value with no leading axis to scan over: {x}.")
    lengths = [_shape(x)[0] if len(_shape(x)) else None for x in xs_leaves]
    if any(n is None for n in lengths):
        bad = ', '.join(str(x) for x, n in zip(xs_leaves, lengths) if n is None)
        raise ValueError(f"scan got value with no leading axis to scan over: {bad}.")
    # Only Explicit axes live in an array's type: a leading dim sharded over Auto axes scans as JAX scans it.
    typed_specs = [_typed_spec(x) for x in xs_leaves]
    if any(spec is not None and len(spec) and spec.partitions[0] is not None for spec in typed_specs):
        raise ValueError('0th dimension of all xs should be replicated. Got '
                         + ', '.join(str(spec) for spec in typed_specs))
    if length is not None:
        try:
            length = int(length)
        except TypeError:
            raise TypeError('The `length` argument to `scan` expects a concrete `int` value. For scan-like '
                            'iteration with a dynamic length, use `while_loop` or `fori_loop`.') from None
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes "
                             f"{lengths}.")
    else:
        unique = set(lengths)
        if len(unique) > 1:
            raise ValueError("scan got values with different leading axis sizes: "
                             + ', '.join(str(n) for n in lengths) + ".")
        if not unique:
            raise ValueError("scan got no values to scan over and `length` not provided.")
        length = lengths[0]
    if isinstance(unroll, bool):
        unroll = max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    y_store = [None]

    def flat_body(leaves):
        carry = tree_util.tree_unflatten(init_tree, leaves[:len(init_leaves)])
        x = tree_util.tree_unflatten(xs_tree, leaves[len(init_leaves):])
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair, got {out}.")
        carry_out, y = out
        carry_leaves, carry_tree = tree_util.tree_flatten(carry_out)
        _check_same_structure('scan body', init_tree, carry_tree)
        y_leaves, y_store[0] = tree_util.tree_flatten(y)
        return list(carry_leaves) + list(y_leaves)

    outs = _shardscope.scan_call(flat_body, init_leaves, xs_leaves, length, bool(reverse), unroll,
                                 _carry_names(f, init))
    carry = tree_util.tree_unflatten(init_tree, outs[:len(init_leaves)])
    ys = tree_util.tree_unflatten(y_store[0], outs[len(init_leaves):])
    return carry, ys


def while_loop(cond_fun, body_fun, init_val):
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    init_leaves, init_tree = tree_util.tree_flatten(init_val)

    def flat_cond(leaves):
        out = cond_fun(tree_util.tree_unflatten(init_tree, leaves))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree.kind != 'leaf':
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {out_tree}.")
        return out_leaves

    def flat_body(leaves):
        out = body_fun(tree_util.tree_unflatten(init_tree, leaves))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        _check_same_structure('while_loop body', init_tree, out_tree)
        return out_leaves

    outs = _shardscope.while_call(flat_cond, flat_body, init_leaves, _carry_names(body_fun, init_val))
    return tree_util.tree_unflatten(init_tree, outs)


def _dtype_of(x):
    import jax.numpy as jnp
    return jnp.result_type(x)


def _is_weak(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) or bool(getattr(x, 'weak_type', False))


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    import jax.numpy as jnp
    lower_dtype, upper_dtype = _dtype_of(lower), _dtype_of(upper)
    if lower_dtype == upper_dtype:
        dtype = lower_dtype
    else:
        dtype = None
        if jnp.issubdtype(lower_dtype, jnp.signedinteger) and jnp.issubdtype(upper_dtype, jnp.signedinteger):
            if _is_weak(lower) and not _is_weak(upper):
                dtype = upper_dtype
            elif not _is_weak(lower) and _is_weak(upper):
                dtype = lower_dtype
        if dtype is None:
            raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                            f"{np.dtype(lower_dtype).name} and {np.dtype(upper_dtype).name}")
    if _concrete(lower) and _concrete(upper):
        lower_, upper_ = int(lower), int(upper)
        if unroll is None:
            unroll = False
        length = max(upper_ - lower_, 0)

        def scanned(loop_carry, _):
            i, x = loop_carry
            return (i + 1, body_fun(i, x)), None
        (_, result), _ = scan(scanned, (lower_, init_val), None, length=length, unroll=unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    import jax.lax as lax
    if lower_dtype != dtype:
        lower = lax.convert_element_type(lower, dtype)
    if upper_dtype != dtype:
        upper = lax.convert_element_type(upper, dtype)

    def cond(loop_carry):
        i, up, _ = loop_carry
        return i < up

    def body(loop_carry):
        i, up, x = loop_carry
        return i + 1, up, body_fun(i, x)
    _, _, result = while_loop(cond, body, (lower, upper, init_val))
    return result


def _concrete(x):
    if isinstance(x, (int, float, bool, np.ndarray, np.generic)):
        return True
    try:
        x.__array__()
        return True
    except Exception:
        return False


def map(f, xs, *, batch_size=None):
    if batch_size is not None:
        raise NotImplementedError('jax.lax.map with batch_size is not supported by shardscope')
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys


def _fun_sourceinfo(fun):
    import functools
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    try:
        return f"{fun.__name__} at {fun.__code__.co_filename}:{fun.__code__.co_firstlineno}"
    except AttributeError:
        return "<unknown>"


_no_operand = object()


def _switch_internal(index, branches, operands, api_name, names):
    leaves, in_tree = tree_util.tree_flatten((tuple(operands), {}))
    out_trees = [None] * len(branches)
    ref = 1 if api_name == 'cond' else 0  # cond checks false_fun against true_fun, traced first
    out_paths = [None]

    def make(k, branch):
        def flat(flat_leaves):
            args, kwargs = tree_util.tree_unflatten(in_tree, flat_leaves)
            out = branch(*args, **kwargs)
            pairs, out_trees[k] = tree_util.tree_flatten_with_path(out)
            if k == ref:
                out_paths[0] = [f' at path {tree_util.keystr(p)}' if p else '' for p, _ in pairs]
            elif out_trees[k] != out_trees[ref]:
                raise TypeError(
                    f'{api_name} branch outputs must have the same pytree structure, but they differ:\n\n'
                    f'{names[ref]} is {_fun_sourceinfo(branches[ref])}\n{names[k]} is {_fun_sourceinfo(branch)}\n\n'
                    f'{names[ref]} output is {out_trees[ref]} but {names[k]} output is {out_trees[k]}.\n\n'
                    f'Revise {names[ref]} and/or {names[k]} so that they have the same pytree structure.')
            return [leaf for _, leaf in pairs]
        return flat
    flats = [make(k, b) for k, b in enumerate(branches)]
    # Branch 0's output paths are known once it has been traced (branches are traced in order).
    outs = _shardscope.switch_call(index, flats, leaves, api_name, names,
                                   [_fun_sourceinfo(b) for b in branches], out_paths)
    return tree_util.tree_unflatten(out_trees[ref], outs)


def switch(index, branches, *operands, operand=_no_operand):
    if not all(callable(branch) for branch in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be passed, got "
                            f"operand={operand!r} and positional operands {operands}")
        operands = (operand,)
    if len(np.shape(index)) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    try:
        index_dtype = np.dtype(_dtype_of(index))
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in 'iu':
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if len(branches) == 0:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    names = ['branch 0'] + [f'branch{i}' for i in range(1, len(branches))]
    return _switch_internal(index, branches, operands, 'switch', names)


def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
    if not (callable(true_fun) and callable(false_fun)):
        # The old five-argument form cond(pred, true_operand, true_fun, false_operand, false_fun).
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be passed, got "
                            f"operand={operand!r} and positional operands {operands}")
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    from collections.abc import Sequence
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of " +
                        (f"type {type(pred)}" if isinstance(pred, Sequence) else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = np.dtype(_dtype_of(pred))
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype.kind not in 'biuf':
        raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
    if pred_dtype.kind != 'b':
        import jax.numpy as jnp
        pred = jnp.not_equal(pred, 0)
    # Branches are bound in index order: false first.
    return _switch_internal(pred, (false_fun, true_fun), operands, 'cond', ['false_fun', 'true_fun'])
