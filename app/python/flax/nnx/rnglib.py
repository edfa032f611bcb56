# flax.nnx.Rngs: named RNG streams, each a key and a counter; a stream's next key is fold_in(key, count), as Flax
# derives it, so keys match the engine's threefry bit for bit.
import jax
import jax.numpy as jnp
from jax import random

from flax.nnx import filterlib
from flax.nnx.pytreelib import Pytree
from flax.nnx.variablelib import Variable


class RngState(Variable):
    pass


class RngCount(RngState):
    pass


class RngKey(RngState):
    pass


def _zeros_count(shape):
    # jnp.array for the scalar case: the engine's jnp.zeros(()) stays an unmaterialized literal.
    return jnp.zeros(shape, dtype=jnp.uint32) if shape else jnp.array(0, dtype=jnp.uint32)


def _random_method(name):
    # Looked up when called: jax.random raises for samplers the engine does not simulate.
    def method(self, *args, **kwargs):
        return getattr(random, name)(self(), *args, **kwargs)
    method.__name__ = name
    return method


def _initializer_method(constructor_name):
    def method(self, *args, **kwargs):
        from flax.nnx.nn import initializers
        init_fn = getattr(initializers, constructor_name)(*args, **kwargs)

        def keyless(*init_args, **init_kwargs):
            return init_fn(self(), *init_args, **init_kwargs)
        return keyless
    return method


_RANDOM_FUNCTIONS = ('bits', 'uniform', 'randint', 'permutation', 'choice', 'normal', 'truncated_normal',
                     'bernoulli', 'categorical', 'gumbel', 'exponential', 'laplace', 'logistic', 'rademacher')
_INITIALIZERS = ('glorot_normal', 'glorot_uniform', 'he_normal', 'he_uniform', 'kaiming_normal', 'kaiming_uniform',
                 'lecun_normal', 'lecun_uniform', 'variance_scaling', 'xavier_normal', 'xavier_uniform')


def _add_methods(cls):
    for name in _RANDOM_FUNCTIONS:
        setattr(cls, name, _random_method(name))
    for name in _INITIALIZERS:
        setattr(cls, name, _initializer_method(name))
    return cls


@_add_methods
class RngStream(Pytree):
    def __init__(self, key, *, tag):
        if isinstance(key, int):
            key = random.key(key)
        elif isinstance(key, jax.Array) and key.dtype == jnp.uint32:
            key = random.wrap_key_data(key)
        self.tag = tag
        self.key = RngKey(key, tag=tag)
        self.count = RngCount(_zeros_count(key.shape), tag=tag)

    def __call__(self):
        key = random.fold_in(self.key[...], self.count[...])
        self.count[...] = self.count[...] + 1
        return key

    def split(self, k):
        return type(self)(random.split(self(), k), tag=self.tag)

    def fork(self, *, split=None):
        key = self()
        if split is not None:
            key = random.split(key, split)
        return type(self)(key, tag=self.tag)


@_add_methods
class Rngs(Pytree):
    """RNG streams by name; a stream not given falls back to `default`."""

    def __init__(self, default=None, **rngs):
        if default is not None:
            if isinstance(default, dict):
                rngs = {**default, **rngs}
            else:
                rngs['default'] = default
        for tag, key in rngs.items():
            if isinstance(key, RngStream):
                key = key.key.get_value()
            setattr(self, tag, RngStream(key, tag=tag))

    def _get_stream(self, name, error_type):
        streams = vars(self)
        if name not in streams:
            if 'default' not in streams:
                raise error_type(f"No RngStream named '{name}' found in Rngs.")
            return streams['default']
        return streams[name]

    def __getitem__(self, name):
        return self._get_stream(name, KeyError)

    def __getattr__(self, name):
        if name.startswith('__') and name.endswith('__'):
            raise AttributeError(name)
        return self._get_stream(name, AttributeError)

    def __call__(self):
        return self.default()

    def __iter__(self):
        return (name for name, s in vars(self).items() if isinstance(s, RngStream))

    def __len__(self):
        return sum(1 for s in vars(self).values() if isinstance(s, RngStream))

    def __contains__(self, name):
        return name in vars(self)

    def items(self):
        return ((name, s) for name, s in vars(self).items() if isinstance(s, RngStream))

    def _per_stream(self, spec, method):
        if spec is None or isinstance(spec, (int, tuple)):
            spec = {...: spec}
        predicates = [(filterlib.to_predicate(k), v) for k, v in spec.items()]
        streams = {}
        for name, stream in self.items():
            for predicate, arg in predicates:
                if predicate((), stream):
                    streams[name] = stream if arg is None else getattr(stream, method)(arg)
                    break
            else:
                streams[name] = stream
        return Rngs(**streams)

    def split(self, k):
        return self._per_stream(k, 'split')

    def fork(self, *, split=None):
        if split is None:
            return Rngs(**{name: stream.fork() for name, stream in self.items()})
        return self._per_stream(split, 'split')


class SplitBackups:
    """What split_rngs replaced: each stream's key and count, put back when a `with split_rngs(...)` block ends (a
    plain call leaves the streams split)."""

    def __init__(self, backups):
        self.backups = backups

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        restore_rngs(self)
        return False


def restore_rngs(backups):
    for stream, key, count in backups.backups:
        stream.key.set_value(key)
        stream.count.set_value(count)


_MISSING = object()


def split_rngs(node=_MISSING, /, *, splits, only=..., squeeze=False):
    """Replaces each matching stream's key in `node` by `splits` keys split from its next key (counts restart at
    zero, one per key), so a vmap or scan over the new leading axis gives each step its own stream. As a decorator
    it splits the streams in the call's arguments for the call only."""
    import functools
    if node is _MISSING:
        def decorator(f):
            @functools.wraps(f)
            def wrapper(*args, **kwargs):
                with split_rngs((args, kwargs), splits=splits, only=only, squeeze=squeeze):
                    return f(*args, **kwargs)
            return wrapper
        return decorator
    if squeeze and splits != 1:
        raise ValueError('squeeze=True is only supported for splits=1')
    from flax.nnx import graphlib
    predicate = filterlib.to_predicate(only)
    backups = []
    for path, stream in graphlib.iter_graph(node):
        if not (isinstance(stream, RngStream) and predicate((*path, 'key'), stream.key)
                and predicate((*path, 'count'), stream.count)):
            continue
        key = stream()
        backups.append((stream, stream.key[...], stream.count[...]))
        key = random.split(key, splits)
        if squeeze:
            key = key[0]
        stream.key.set_value(key)
        if squeeze:
            counts_shape = stream.count.shape
        elif isinstance(splits, int):
            counts_shape = (splits, *stream.count.shape)
        else:
            counts_shape = (*splits, *stream.count.shape)
        stream.count.set_value(jnp.zeros(counts_shape, dtype=jnp.uint32))
    return SplitBackups(backups)


def reseed(node, /, **stream_keys):
    """Restarts the named streams anywhere in `node`'s graph: the new key (an int seeds random.key), count 0."""
    from flax.nnx import graphlib
    for _, stream in graphlib.iter_graph(node):
        if isinstance(stream, RngStream) and stream.tag in stream_keys:
            if stream.key.shape != ():
                raise ValueError(f'Cannot reseed stream {stream.tag!r} with a non-scalar key,  found key with '
                                 f'shape {stream.key.shape}.')
            key = stream_keys[stream.tag]
            if isinstance(key, int):
                key = random.key(key)
            stream.key.set_value(key)
            stream.count.set_value(jnp.array(0, dtype=jnp.uint32))
