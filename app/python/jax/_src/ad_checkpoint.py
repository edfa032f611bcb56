# jax.checkpoint (remat), its policies, checkpoint_name and saved_residuals: pytrees and policy objects here,
# the policy-driven split of forward and backward work in the engine.
import re
import types
import weakref

import _shardscope
from jax._src import tree as tree_util


# ---- policies: JAX's objects, each also described to the engine (_policy_spec) ----

def everything_saveable(*_, **__):
    return True


def nothing_saveable(*_, **__):
    return False


def _dimension_numbers_without_batch(params):
    try:
        (_, _), (lhs_batch, rhs_batch) = params['dimension_numbers']
    except (KeyError, TypeError, ValueError):
        return False
    return not lhs_batch and not rhs_batch


class DotsSaveable:
    def __init__(self, only_if_no_batch_dims):
        self.only_if_no_batch_dims = only_if_no_batch_dims

    def __call__(self, prim, *args, **params):
        name = getattr(prim, 'name', prim)
        if self.only_if_no_batch_dims:
            return name == 'dot_general' and _dimension_numbers_without_batch(params)
        return name in ('dot_general', 'conv_general_dilated')

    def __eq__(self, other):
        return isinstance(other, DotsSaveable) and other.only_if_no_batch_dims == self.only_if_no_batch_dims

    def __hash__(self):
        return hash((DotsSaveable, self.only_if_no_batch_dims))

    def __repr__(self):
        return f'DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})'


dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


class Offloadable(tuple):
    """What an offloading policy answers: keep the value, moved from memory `src` to `dst`."""

    def __new__(cls, src, dst):
        return super().__new__(cls, (src, dst))

    src = property(lambda self: self[0])
    dst = property(lambda self: self[1])

    def __repr__(self):
        return f'Offloadable(src={self.src!r}, dst={self.dst!r})'


class _Recompute:
    def __repr__(self):
        return 'Recompute'


class _Saveable:
    def __repr__(self):
        return 'Saveable'


Recompute = _Recompute()
Saveable = _Saveable()


class OffloadDotWithNoBatchDims:
    def __init__(self, offload_src, offload_dst):
        self.offload_src, self.offload_dst = offload_src, offload_dst

    def __call__(self, prim, *_, **params):
        if getattr(prim, 'name', prim) == 'dot_general' and _dimension_numbers_without_batch(params):
            return Offloadable(self.offload_src, self.offload_dst)
        return Recompute

    def __repr__(self):
        return f'OffloadDotWithNoBatchDims(offload_src={self.offload_src!r}, offload_dst={self.offload_dst!r})'


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    return OffloadDotWithNoBatchDims(offload_src, offload_dst)


class SaveOnlyTheseNames:
    def __init__(self, saveable_names):
        self.saveable_names = saveable_names

    def __call__(self, prim, *_, **params):
        return getattr(prim, 'name', prim) == 'name' and params.get('name') in self.saveable_names

    def __repr__(self):
        return f'SaveOnlyTheseNames(saveable_names={self.saveable_names!r})'


class SaveAnyNamesButThese:
    def __init__(self, names):
        self.names = names

    def __call__(self, prim, *_, **params):
        return getattr(prim, 'name', prim) == 'name' and params.get('name') not in self.names

    def __repr__(self):
        return f'SaveAnyNamesButThese(names={self.names!r})'


def save_only_these_names(*names):
    return SaveOnlyTheseNames(frozenset(names))


def save_any_names_but_these(*names):
    return SaveAnyNamesButThese(frozenset(names))


def save_anything_except_these_names(*names):
    # JAX's version saves everything: the names are ignored.
    policy = lambda *_, **__: True  # noqa: E731
    policy._shardscope_spec = ('everything',)
    return policy


class SaveAndOffloadOnlyTheseNames:
    def __init__(self, names_which_can_be_saved, names_which_can_be_offloaded, offload_src, offload_dst):
        self.names_which_can_be_saved = names_which_can_be_saved
        self.names_which_can_be_offloaded = names_which_can_be_offloaded
        self.offload_src = offload_src
        self.offload_dst = offload_dst

    def __call__(self, prim, *_, **params):
        if getattr(prim, 'name', prim) == 'name' and params.get('name') in self.names_which_can_be_saved:
            return Saveable
        if getattr(prim, 'name', prim) == 'name' and params.get('name') in self.names_which_can_be_offloaded:
            return Offloadable(self.offload_src, self.offload_dst)
        return Recompute

    def __repr__(self):
        return (f'SaveAndOffloadOnlyTheseNames(names_which_can_be_saved={self.names_which_can_be_saved!r}, '
                f'names_which_can_be_offloaded={self.names_which_can_be_offloaded!r}, '
                f'offload_src={self.offload_src!r}, offload_dst={self.offload_dst!r})')


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    names_which_can_be_saved = frozenset(names_which_can_be_saved)
    names_which_can_be_offloaded = frozenset(names_which_can_be_offloaded)
    intersection = names_which_can_be_saved & names_which_can_be_offloaded
    if intersection:
        raise ValueError(
            "The names should be exclusive and should not intersect in"
            " `names_which_can_be_saved` and `names_which_can_be_offloaded`. Got"
            f" names_which_can_be_saved={set(names_which_can_be_saved)},"
            f" names_which_can_be_offloaded={set(names_which_can_be_offloaded)} and"
            f" the intersection={set(intersection)}")
    return SaveAndOffloadOnlyTheseNames(names_which_can_be_saved, names_which_can_be_offloaded, offload_src,
                                        offload_dst)


def save_from_both_policies(policy_1, policy_2):
    def policy(prim, *args, **params):
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got:"
                f" {out1} and {out2}. Please write a custom policy function directly,"
                " rather than using this helper function.")
        return out1 or out2
    policy._shardscope_both = (policy_1, policy_2)
    return policy


checkpoint_policies = types.SimpleNamespace(
    SaveOnlyTheseNames=SaveOnlyTheseNames,
    SaveAnyNamesButThese=SaveAnyNamesButThese,
    SaveAndOffloadOnlyTheseNames=SaveAndOffloadOnlyTheseNames,
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


def _policy_spec(policy):
    """The engine's description of a policy: a built-in's kind and names, or ('custom', fn) for anything else."""
    if hasattr(policy, '_shardscope_spec'):
        return policy._shardscope_spec
    if hasattr(policy, '_shardscope_both'):
        first, second = policy._shardscope_both
        return ('either', _policy_spec(first), _policy_spec(second))
    if policy is everything_saveable:
        return ('everything',)
    if policy is nothing_saveable:
        return ('nothing',)
    if isinstance(policy, DotsSaveable):
        return ('dots_no_batch',) if policy.only_if_no_batch_dims else ('dots',)
    if isinstance(policy, SaveOnlyTheseNames):
        return ('only_names', sorted(policy.saveable_names))
    if isinstance(policy, SaveAnyNamesButThese):
        return ('any_names_but', sorted(policy.names))
    if isinstance(policy, SaveAndOffloadOnlyTheseNames):
        return ('save_and_offload', sorted(policy.names_which_can_be_saved),
                sorted(policy.names_which_can_be_offloaded))
    if isinstance(policy, OffloadDotWithNoBatchDims):
        return ('offload_dots',)
    return ('custom', policy)


class _PolicyPrimitive:
    """The primitive a custom policy is asked about: compare its `name` ('dot_general', 'name', 'sin', ...)."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return getattr(other, 'name', other) == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name


def _ask_policy(policy, primitive, shapes, params):
    import jax
    avals = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in shapes]
    answer = policy(_PolicyPrimitive(primitive), *avals, **params)
    if isinstance(answer, bool):
        return answer
    if answer is Saveable:
        return True
    if answer is Recompute:
        return False
    if isinstance(answer, Offloadable):
        return 'offload'
    msg = ("Value returned by a remat policy should be a bool or `ad_checkpoint.Recompute`, "
           "`ad_checkpoint.Saveable` or `ad_checkpoint.Offloadable(...)`."
           f" Got {answer} of type {type(answer)}.")
    if answer is Offloadable:
        msg += "Did you return `Offloadable` instead of an instantiated `Offloadable(...)`?"
    raise TypeError(msg)


def _policy_text(policy):
    # Printed as str(policy) with addresses masked, as jaxprs print them.
    return re.sub(r' at 0x([0-9a-fA-F]+)', lambda m: ' at 0x' + 'X' * len(m.group(1)), str(policy))


# ---- jax.checkpoint ----

def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    import functools
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if not isinstance(prevent_cse, (tuple, list, bool)):
        raise TypeError(f"prevent_cse must be a bool or tuple of bools, got type(prevent_cse)={type(prevent_cse)}")
    if static_argnums:
        raise NotImplementedError('jax.checkpoint with static_argnums is not supported by shardscope')
    described = None if policy is None else (_policy_text(policy), _policy_spec(policy))

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        out_store = [None]

        def flat(flat_leaves):
            a, kw = tree_util.tree_unflatten(in_tree, flat_leaves)
            _active_policies.append(policy)  # what a custom_remat function traced inside is told
            try:
                out_leaves, out_store[0] = tree_util.tree_flatten(fun(*a, **kw))
            finally:
                _active_policies.pop()
            return out_leaves
        cse = prevent_cse if isinstance(prevent_cse, bool) else True
        body, out_tree = _traced_body(fun, flat, leaves, in_tree, out_store)
        outs = _shardscope.checkpoint_bind(body, leaves, cse, described, _ask_policy)
        return tree_util.tree_unflatten(out_tree, outs)
    return fun_remat


# Traced checkpoint bodies per function and argument types, as JAX's _trace_to_jaxpr caches them: a function
# checkpointed again on the same types reuses its first trace (closed-over values and redefined globals it read
# included), unless that trace closed over values of an enclosing trace.
_traces_by_function = weakref.WeakKeyDictionary()


def _traced_body(fun, flat, leaves, in_tree, out_store):
    try:
        from jax.sharding import get_abstract_mesh
        # The context a trace depends on beyond the types: the mesh in effect and the JAX profile.
        key = (in_tree, _shardscope.aval_keys(leaves), repr(get_abstract_mesh()), _shardscope.jax_version())
        per_function = _traces_by_function.setdefault(fun, {})
        cached = per_function.get(key)
    except TypeError:  # a function that takes no weak reference, or types that do not hash
        per_function, key, cached = None, None, None
    if cached is not None:
        return cached
    body = _shardscope.checkpoint_trace(flat, leaves)
    entry = (body, out_store[0])
    if per_function is not None and body.reusable:
        per_function[key] = entry
    return entry


# The policies of the checkpoints being traced, innermost last.
_active_policies = []


def custom_remat(f, f_fwd, f_rem, f_bwd, *, static_argnums=(), static_argnames=()):
    """jax.custom_remat: under a checkpoint, the forward pass runs f_fwd(policy, *args) -> (out, res) with the
    enclosing checkpoint's policy, and the backward pass recomputes with f_rem(res, *args) -> (out, res2) and takes
    the cotangents from f_bwd(res2, out_ct). Elsewhere the function is f (forward mode differentiates f)."""
    if static_argnums or static_argnames:
        raise NotImplementedError('jax.custom_remat with static arguments is not supported by shardscope')
    from jax._src.custom_derivatives import custom_vjp
    import functools
    helper = custom_vjp(lambda _, *args: f(*args))
    helper.defvjp(f_rem, lambda res, g: (None, *f_bwd(res, g)))

    @functools.wraps(f)
    def call(*args, **kwargs):
        if kwargs:
            raise NotImplementedError('jax.custom_remat functions take positional arguments in shardscope')
        if not _active_policies:
            return f(*args)
        _, res = f_fwd(_active_policies[-1], *args)
        return helper(res, *args)
    return call


def remat(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)


def checkpoint_name(x, name):
    return tree_util.tree_map(lambda leaf: _shardscope.checkpoint_name(leaf, name), x)


# ---- what the backward pass keeps ----

class _ResidualType:
    """A residual's type, printed as JAX's ShapedArray prints."""

    def __init__(self, shape, dtype, short_text, text):
        import numpy as np
        self.shape = shape
        self.dtype = np.dtype(dtype) if dtype != 'bfloat16' else dtype
        self._short, self._text = short_text, text

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return self._short if short_dtypes else self._text

    def __repr__(self):
        return f'ShapedArray({self._text})'


def _argument_names(f, args, kwargs):
    from jax._src.jit import arg_leaf_names
    from jax._src.jit import _leaf_paths
    names = arg_leaf_names(f, args)
    if names is None:
        names = [f'args{suffix}' for suffix in _leaf_paths(tuple(args))]
    for key in sorted(kwargs):
        names.extend(key + suffix for suffix in _leaf_paths(kwargs[key]))
    return names


def saved_residuals(f, *args, **kwargs):
    """The values jax.vjp(f, *args) keeps for the backward pass: [(type, where it comes from), ...]."""
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))

    def flat(flat_leaves):
        a, kw = tree_util.tree_unflatten(in_tree, flat_leaves)
        return tree_util.tree_leaves(f(*a, **kw))
    names = _argument_names(f, args, kwargs)
    if len(names) != len(leaves):
        names = ['unknown'] * len(leaves)
    return [(_ResidualType(shape, dtype, short, text), source)
            for shape, dtype, short, text, source in _shardscope.saved_residuals(flat, leaves, names)]


def print_saved_residuals(f, *args, **kwargs):
    for aval, source in saved_residuals(f, *args, **kwargs):
        print(f'{aval.str_short(short_dtypes=True)} {source}')
