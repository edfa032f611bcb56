# jax.new_ref / jax.freeze: mutable array references. A ref made inside a trace holds that trace's values and
# behaves functionally there; a ref made outside that a jitted function reads or writes makes the function run
# eagerly (every call), so its writes land in the ref as JAX's effects would.
import _shardscope


class RefEffectEscape(Exception):
    """Raised inside a trace that touches a ref created outside it; jit catches it and runs the function eagerly."""


# How many jit traces are running: a ref made outside one may not be read or written inside it (the program would
# bake its value in), so such a function runs eagerly instead.
jit_depth = [0]


def _check_access(ref, writing=False, update=None):
    if not ref._outside or not _shardscope.debug.in_trace():
        return
    if jit_depth[0] > 0:
        raise RefEffectEscape()
    if writing and getattr(update, '_is_tracer', False):
        # Other transformations (vmap) see the outside ref as one unbatched value.
        raise Exception(f'performing a set/swap operation with vmapped value on an unbatched array reference of '
                        f'type Ref{{{ref._value.aval.str_short()}}}. Move the array reference to be an argument to '
                        'the vmapped function?')


class Ref:
    __slots__ = ('_value', '_outside', '_frozen')
    _shardscope_is_ref = True  # jnp functions refuse refs (they are not arrays) by this mark

    def __init__(self, value):
        self._value = value
        self._outside = not _shardscope.debug.in_trace()
        self._frozen = False

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def size(self):
        return self._value.size

    def __len__(self):
        return self._value.shape[0]

    def _live(self, writing=False, update=None):
        if self._frozen:
            raise ValueError('Cannot use a ref after it was frozen with jax.freeze.')
        _check_access(self, writing, update)
        return self._value

    def __getitem__(self, index):
        value = self._live()
        return value if index is Ellipsis else value[index]

    def __setitem__(self, index, update):
        import jax.numpy as jnp
        value = self._live(True, update)
        update = jnp.asarray(update, dtype=value.dtype)
        if index is Ellipsis:
            self._value = jnp.broadcast_to(update, value.shape)
        else:
            self._value = value.at[index].set(update)

    def get(self):
        return self[...]

    def set(self, update):
        self[...] = update

    def __repr__(self):
        text = repr(self._value)
        if not text.startswith('Array('):
            return f'Ref({text})'
        # Continuation lines align under the opening bracket, two columns further left than Array('s.
        lines = text.split('\n')
        return '\n'.join(['Ref(' + lines[0][len('Array('):]] + [line[2:] for line in lines[1:]])

    def __array__(self, dtype=None, copy=None):
        import numpy as np
        return np.asarray(self._live(), dtype=dtype)


def new_ref(init_val, *, memory_space=None, kind=None):
    import jax.numpy as jnp
    value = jnp.asarray(init_val)
    if value.weak_type:
        # A ref's type is never weak (Ref{float32[]} for new_ref(0.0)).
        value = _shardscope.lax._convert_element_type(value, value.dtype, False)
    return Ref(value)


def freeze(ref):
    """The ref's current value as an array; the ref may not be used afterwards."""
    value = ref._live()
    ref._frozen = True
    return value


class _RefRow:
    """Instance `index` of a ref mapped along its leading axis: reads and writes address that row of the parent."""
    __slots__ = ('_parent', '_index')

    def __init__(self, parent, index):
        self._parent, self._index = parent, index

    def _key(self, index):
        if index is Ellipsis:
            return self._index
        return (self._index,) + (index if isinstance(index, tuple) else (index,))

    def __getitem__(self, index):
        return self._parent[self._key(index)]

    def __setitem__(self, index, update):
        self._parent[self._key(index)] = update

    @property
    def shape(self):
        return self._parent.shape[1:]

    @property
    def dtype(self):
        return self._parent.dtype


def vmap_over_refs(fun, in_axes, out_axes, args, kwargs):
    """vmap of a function given refs, run eagerly one instance at a time: a mapped ref gives each instance its
    row (so each writes its own entry, as JAX's batched refs do); arrays are sliced along their in_axes."""
    import jax.numpy as jnp
    from jax._src import tree as tree_util
    axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    if kwargs or out_axes != 0 or any(a not in (0, None) for a in axes):
        raise NotImplementedError('vmap with array-ref arguments is simulated for in_axes of 0 or None, out_axes=0 '
                                  'and positional arguments only')
    sizes = {len(leaf) if isinstance(leaf, Ref) else leaf.shape[0]
             for arg, axis in zip(args, axes) if axis == 0
             for leaf in tree_util.tree_leaves(arg, is_leaf=lambda x: isinstance(x, Ref))}
    if len(sizes) != 1:
        raise ValueError(f'vmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}')
    size = sizes.pop()
    results = []
    for i in range(size):
        instance = [arg if axis is None else tree_util.tree_map(
            lambda leaf: _RefRow(leaf, i) if isinstance(leaf, Ref) else leaf[i], arg,
            is_leaf=lambda x: isinstance(x, Ref)) for arg, axis in zip(args, axes)]
        results.append(fun(*instance))
    if all(r is None for r in results):
        return None
    return tree_util.tree_map(lambda *xs: jnp.stack(xs), *results)
