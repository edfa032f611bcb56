# jax.vjp and jax.fwd_and_bwd: the forward pass runs once and keeps its residuals; the pullback is a pytree of them.
import dataclasses
import functools

import _shardscope
from jax._src import tree as tree_util
from jax._src.tree_extras import register_dataclass, Partial


@dataclasses.dataclass(frozen=True, slots=True)
class NotNeeded:
    """An argument the backward pass does not read: nothing of it is kept."""


@dataclasses.dataclass(frozen=True, slots=True)
class NotSaveable:
    """An argument the backward pass reads but saveable_args said not to keep: the caller restores it."""


for _sentinel in (NotNeeded, NotSaveable):
    _sentinel.__module__ = 'jax._src.api'
    register_dataclass(_sentinel, data_fields=[], meta_fields=[])


def _is_sentinel(x):
    return isinstance(x, (NotNeeded, NotSaveable))


class _VjpFunction:
    """What the pullback is made of besides its residuals: the backward program and the trees around it. Compared by
    identity, as JAX's partial is, so a pullback returned by the same jitted forward pass hits the same cache entry."""

    __slots__ = ('program', 'name', 'source_info', 'out_primal_types', 'aux_count', '__weakref__')

    def __init__(self, program, name, source_info, out_primal_types):
        self.program = program
        self.name = name
        self.source_info = source_info
        self.out_primal_types = out_primal_types

    def __repr__(self):
        return f'<vjp of {self.source_info}>'


class VJP:
    """The function jax.vjp returns: applied to output cotangents it gives the input cotangents. It is a pytree whose
    leaves are the residuals (the arguments it keeps, then the values the forward pass computed), so it can be
    returned from and passed to jitted functions."""

    __slots__ = ('fun', 'in_tree', 'out_tree', 'args_res', 'opaque_residuals', 'structured_residuals', 'want_logs',
                 '__weakref__')

    def __init__(self, fun, in_tree, out_tree, args_res, opaque_residuals, structured_residuals, want_logs=False):
        self.fun = fun
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.args_res = args_res
        self.opaque_residuals = opaque_residuals
        self.structured_residuals = structured_residuals
        self.want_logs = want_logs

    @property
    def out_nzs(self):
        return tuple(not zero for zero in self.fun.program.output_zeros)

    def __call__(self, out_ct, *extra_args):
        if extra_args:
            name = self.fun.source_info.split(' ')[0]
            raise TypeError(_too_many_args(name, len(extra_args) + 1))
        return _apply(self.fun, self.in_tree, self.out_tree, self.args_res, self.opaque_residuals, out_ct)

    def replace(self, **changes):
        fields = {name: getattr(self, name) for name in self.__slots__ if name != '__weakref__'}
        fields.update(changes)
        return VJP(**fields)

    def __repr__(self):
        return (f'VJP(fun={self.fun!r}, in_tree={self.in_tree!r}, out_tree={self.out_tree!r}, '
                f'args_res={self.args_res!r}, opaque_residuals={self.opaque_residuals!r}, '
                f'structured_residuals={self.structured_residuals!r}, want_logs={self.want_logs!r})')


VJP.__module__ = 'jax._src.api'
tree_util.register_pytree_node(
    VJP,
    lambda v: ((v.args_res, v.opaque_residuals, v.structured_residuals), (v.fun, v.in_tree, v.out_tree, v.want_logs)),
    lambda meta, children: VJP(*meta[:3], *children, meta[3]))


def _too_many_args(name, count):
    return f"""
The function returned by `jax.vjp` applied to {name} was called with {count} arguments,
but functions returned by `jax.vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, if we have:

  def f(x):
    return (x, x)
  _, f_vjp = jax.vjp(f, 1.0)

the function `f` returns a single tuple as output, and so we call `f_vjp` with a
single tuple as its argument:

  x_bar, = f_vjp((2.0, 2.0))

If we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as
arguments rather than in a tuple, this error can arise.
"""


def _arg_name(fun, in_tree, index):
    """api._vjp_arg_name: where flat argument `index` sits among the differentiated function's arguments."""
    try:
        dummy = tree_util.tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
        path, _ = tree_util.tree_flatten_with_path(dummy)[0][index]
        position = f'args{tree_util.keystr(path)}'
    except Exception:  # a custom node may reject integer leaves
        position = f'flat argument index {index}'
    return f'the argument at position {position} of the differentiated function {fun.source_info}'


def _not_saveable_error(fun, in_tree, indices):
    message = """the VJP function was applied before restoring its not-saveable residuals.

Because `saveable_args` was passed to `jax.vjp`, some argument values that
would have been saved for the backward pass were instead replaced with
`NotSaveable()` sentinels. Before the VJP function can be applied, these
values must be restored, e.g. by assigning to the VJP function's `args_res`
attribute. The values not yet restored correspond to:
"""
    message += '\n'.join(f'  * {_arg_name(fun, in_tree, i)};' for i in indices)
    raise ValueError(message)


def _cotangent_tree_error(fun, out_tree, ct_tree):
    from jax._src.tree_prefix import equality_errors_pytreedef
    message = f"""unexpected tree structure.

The argument to a VJP function returned by `jax.vjp` must match the pytree
structure of the differentiated function {fun.source_info}.

But the tree structures differ:
"""
    message += '\n'.join(f'  * out{tree_util.keystr(path)} was a {thing1} in the original output, but a {thing2} '
                         f'here, so {explanation}.'
                         for path, thing1, thing2, explanation in equality_errors_pytreedef(out_tree, ct_tree))
    raise ValueError(message)


def _apply(fun, in_tree, out_tree, args_res, opaque_residuals, out_ct):
    import jax.numpy as jnp
    ct_leaves, ct_tree = tree_util.tree_flatten(out_ct)
    if ct_tree != out_tree:
        _cotangent_tree_error(fun, out_tree, ct_tree)
    _check_cotangent_types(ct_leaves, fun.out_primal_types)
    args = tree_util.tree_leaves(args_res, is_leaf=_is_sentinel)
    program = fun.program
    unrestored = sorted({i for i in program.residual_primal if i is not None and isinstance(args[i], NotSaveable)})
    if unrestored:
        _not_saveable_error(fun, in_tree, unrestored)
    opaque = iter(opaque_residuals)
    residuals = [args[i] if i is not None else next(opaque) for i in program.residual_primal]
    ct_leaves = [ct if _is_inexact_dtype(dtype) else jnp.zeros(shape, dtype)
                 for ct, (shape, dtype) in zip(ct_leaves, program.output_types)]
    return tuple(tree_util.tree_unflatten(in_tree, program(residuals, ct_leaves)))


def _check_cotangent(ct, shape, dtype, expected):
    """api._vjp_check_ct_avals for one cotangent: its output's shape, and its dtype where both are arrays (`dtype`
    None: a Python scalar output). `expected()` gives the output's type text, asked only for the error."""
    import numpy as np
    import jax
    from jax._src.api import _leaf_dtype
    ct_dtype = _leaf_dtype(ct)
    if np.shape(ct) != tuple(shape) or (ct_dtype is not None and dtype is not None and ct_dtype != dtype):
        text = expected()
        raise ValueError('unexpected JAX type (e.g. shape/dtype) for argument to VJP function: '
                         f'got {jax.typeof(ct).str_short()}, but expected {text} because the corresponding '
                         f'output of the differentiated function had JAX type {text}')


def _check_cotangent_types(ct_leaves, out_types):
    """Each cotangent against the type its output had."""
    from jax._src.api import _leaf_dtype
    for ct, out_type in zip(ct_leaves, out_types):
        _check_cotangent(ct, out_type.shape, _leaf_dtype(out_type), out_type.str_short)


def _tuptree_map(f, treedef, *flat):
    """Maps `f` over the leaves of `treedef`, every container becoming a tuple of its children."""
    iterators = [iter(values) for values in flat]

    def walk(node):
        if node.kind == 'leaf':
            return f(*(next(it) for it in iterators))
        return tuple(walk(child) for child in node.children())
    return walk(treedef)


def _tuptree_flags(prefix, treedef, name, full_name):
    """api.tuptree_flags: one bool per leaf from a bool, a pytree prefix with bool leaves, or a tuple-tree."""
    if isinstance(prefix, bool):
        return [prefix] * treedef.num_leaves
    try:
        dummy = tree_util.tree_unflatten(treedef, list(range(treedef.num_leaves)))
        flags = tree_util.broadcast_prefix(prefix, dummy)
    except ValueError:
        pass
    else:
        if all(isinstance(flag, bool) for flag in flags):
            return list(flags)
    out = []
    _tuptree_flags_into(prefix, treedef, name, full_name, (), out)
    return out


def _tuptree_flags_into(prefix, node, name, full_name, path, out):
    if isinstance(prefix, bool):
        out.extend([prefix] * node.num_leaves)
        return
    where = name + ''.join(f'[{i}]' for i in path)
    if not isinstance(prefix, tuple):
        raise ValueError(f'{full_name} must be a pytree prefix with bool leaves or a tuple-tree of bools (made of '
                         f'bools and tuples only), but {where} is {prefix!r} of type {type(prefix).__name__}')
    if node.kind == 'leaf':
        raise ValueError(f'{full_name} must form a tree prefix of the corresponding values (up to pytree node types), '
                         f'but {where} is a tuple while the corresponding part of the values is a leaf; use a single '
                         'bool there instead')
    children = node.children()
    if len(prefix) != len(children):
        raise ValueError(f'{full_name} must form a tree prefix of the corresponding values (up to pytree node types, '
                         f'so containers need only match in their number of children), but {where} has '
                         f'{len(prefix)} children while the corresponding container has {len(children)}')
    for i, (flag, child) in enumerate(zip(prefix, children)):
        _tuptree_flags_into(flag, child, name, full_name, (*path, i), out)


def vjp(fun, *primals, has_aux=False, reduce_axes=(), saveable_args=True, in_nzs=None):
    """jax.vjp: the outputs and the VJP function. The forward pass runs now (Python control flow on known primals
    takes its path once) and keeps the residuals the backward pass reads; the VJP function applies the backward
    program to them, so it may be called, jitted or vmapped later without running `fun` again."""
    from jax._src.api import _check_callable, _name
    from jax._src.jit import _source_info
    if reduce_axes:
        raise NotImplementedError('reduce_axes argument to vjp is deprecated')
    _check_callable(fun)
    version = _shardscope.jax_version_info()
    if saveable_args is not True or in_nzs is not None:
        if version < (0, 11, 0):
            bad = 'saveable_args' if saveable_args is not True else 'in_nzs'
            raise TypeError(f"vjp() got an unexpected keyword argument '{bad}'")
    leaves, in_tree = tree_util.tree_flatten(primals)
    if not all(_is_inexact_leaf(leaf) for leaf in leaves):
        return _vjp_by_grad(fun, primals, has_aux)
    saveable = _tuptree_flags(saveable_args, in_tree, 'saveable_args', 'the saveable_args argument to jax.vjp')
    nonzero = ([True] * len(leaves) if in_nzs is None else
               _tuptree_flags(in_nzs, in_tree, 'in_nzs', 'the in_nzs argument to jax.vjp'))
    stores = {}

    def flat(flat_leaves):
        from jax._src import custom_derivatives
        with custom_derivatives.differentiating('grad'):  # custom rules apply, as under grad
            out = fun(*tree_util.tree_unflatten(in_tree, flat_leaves))
        if has_aux and (not isinstance(out, (list, tuple)) or len(out) != 2):
            raise TypeError('expected function with aux output to return a two-element tuple, but got type '
                            f'{type(out)} with value {out!r}')
        value, aux = out if has_aux else (out, None)
        out_leaves, stores['out'] = tree_util.tree_flatten(value)
        aux_leaves, stores['aux'] = tree_util.tree_flatten(aux)
        stores['count'] = len(out_leaves)
        return out_leaves + aux_leaves
    # has_aux's leaves follow the differentiated ones and take no cotangent.
    outs, program, opaque = _shardscope.vjp_call(flat, leaves, _name(fun), lambda: stores['count'], nonzero)
    count = stores['count']
    out_tree = stores['out']
    primals_out = tree_util.tree_unflatten(out_tree, outs[:count])
    aux = tree_util.tree_unflatten(stores['aux'], outs[count:]) if has_aux else None
    import jax
    function = _VjpFunction(program, _name(fun), _source_info(fun), [jax.typeof(o) for o in outs[:count]])
    used = {i for i in program.residual_primal if i is not None}
    if version < (0, 8, 1):
        # Before JAX's vjp3, the VJP function was a tree_util.Partial whose leaves are the residuals.
        args_res = [leaf if i in used else NotNeeded() for i, leaf in enumerate(leaves)]
        pullback = Partial(functools.partial(_apply, function, in_tree, out_tree), args_res, list(opaque))
    else:
        args_res = _tuptree_map(
            lambda i, s: (leaves[i] if s else NotSaveable()) if i in used else NotNeeded(),
            in_tree, range(len(leaves)), saveable)
        pullback = VJP(function, in_tree, out_tree, list(args_res), list(opaque), [])
    return (primals_out, pullback, aux) if has_aux else (primals_out, pullback)


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """jax.fwd_and_bwd: `fwd(*args)` is jax.vjp of `fun` in the argnums, `bwd(f_vjp, cotangent)` applies it; both
    jitted by default, so the backward pass compiles once however many forward passes feed it."""
    from jax._src.api import _check_callable, _ensure_index
    from jax._src.jit import jit
    _check_callable(fun)
    argnums = _ensure_index(argnums)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def fwd(*args, **kwargs):
        def partial_fun(*dyn_args):
            full = list(args)
            for i, value in zip(nums, dyn_args):
                full[i] = value
            return fun(*full, **kwargs)
        return vjp(partial_fun, *(args[i] for i in nums), has_aux=has_aux)

    def bwd(f_vjp, outgrad):
        grads = f_vjp(outgrad)
        return grads[0] if isinstance(argnums, int) else grads
    if jitted:
        fwd, bwd = jit(fwd), jit(bwd)
    return fwd, bwd


def _is_inexact_dtype(dtype):
    import numpy as np
    try:
        return np.issubdtype(np.dtype(dtype), np.inexact)
    except TypeError:
        return str(dtype) == 'bfloat16'


def _is_inexact_leaf(leaf):
    dtype = getattr(leaf, 'dtype', None)
    if dtype is None:
        return isinstance(leaf, float)
    return _is_inexact_dtype(dtype) if not hasattr(dtype, '_shardscope_dtype') else 'float' in str(dtype)


def _vdot_leaves(outs, cts):
    """sum over leaves of <out, ct>: the scalar whose gradient is the VJP with cotangent `cts`."""
    import jax.numpy as jnp
    out_leaves, out_tree = tree_util.tree_flatten(outs)
    ct_leaves, ct_tree = tree_util.tree_flatten(cts)
    if out_tree != ct_tree:
        raise ValueError(f"Tree structure of cotangent input {ct_tree}, does not match structure of primal output "
                         f"{out_tree}.")
    total = 0.0
    for o, c in zip(out_leaves, ct_leaves):
        if jnp.shape(o) != jnp.shape(c):
            raise ValueError(f"Shape of cotangent input to vjp pullback function {jnp.shape(c)} must be the same "
                             f"as the shape of corresponding primal input {jnp.shape(o)}.")
        total = total + jnp.sum(o * c)
    return total


def _vjp_by_grad(fun, primals, has_aux):
    """vjp of integer (or key) primals: the pullback differentiates <fun(*primals), ct> with grad when called."""
    from jax._src.api import grad
    out = fun(*primals)
    primals_out, aux = out if has_aux else (out, None)

    def pullback(cts):
        _check_vjp_cotangents(primals_out, cts)

        def paired(*args):
            result = fun(*args)
            value = result[0] if has_aux else result
            return _vdot_leaves(value, cts)
        if not primals:
            return ()
        cts_in = grad(paired, argnums=tuple(range(len(primals))))(*primals)
        return tuple(cts_in)
    functools.update_wrapper(pullback, fun, assigned=('__module__',), updated=())
    return (primals_out, pullback, aux) if has_aux else (primals_out, pullback)


def _check_vjp_cotangents(outs, cts):
    """Each cotangent against its output's value (the grad-based pullback of integer primals)."""
    import numpy as np
    import jax
    from jax._src.api import _leaf_dtype
    out_leaves = tree_util.tree_leaves(outs)
    ct_leaves = tree_util.tree_leaves(cts)
    if len(out_leaves) != len(ct_leaves):
        return
    for out, ct in zip(out_leaves, ct_leaves):
        _check_cotangent(ct, np.shape(out), _leaf_dtype(out), lambda out=out: jax.typeof(out).str_short())
