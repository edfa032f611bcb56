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
    return Ref(jnp.asarray(init_val))


def freeze(ref):
    """The ref's current value as an array; the ref may not be used afterwards."""
    value = ref._live()
    ref._frozen = True
    return value
