# The Scope behind a bound Linen module: its slice of the variable collections, its PRNG streams, its children.
import hashlib
import typing

from flax.core import meta


class ScopeParamNotFoundError(ValueError):
    pass


class ScopeParamShapeError(ValueError):
    pass


def _hash_to_uint32(parts):
    """Flax's digest of static data: SHA-1 over UTF-8 strings and minimal big-endian ints, first 4 bytes; with
    flax_fix_rng_separator a zero byte before each part, so ('ab', 'c') and ('a', 'bc') differ."""
    from flax.configurations import config
    separate = config.flax_fix_rng_separator
    digest = hashlib.sha1()
    for part in parts:
        if separate:
            digest.update(b'\0')
        if isinstance(part, str):
            chunk = part.encode('utf-8')
        elif isinstance(part, int):
            chunk = part.to_bytes(-(-part.bit_length() // 8), 'big')
        else:
            raise ValueError(f'Expected int or string, got: {part}')
        digest.update(chunk)
    return int.from_bytes(digest.digest()[:4], 'big')


def _derive_key(key, path_data):
    # As Flax's LazyRng: a stream's key is folded once with the digest of the module path plus the draw count,
    # so keys match real Flax's for the same model.
    if not path_data:
        return key
    import jax.numpy as jnp
    from jax import random
    return random.fold_in(key, jnp.uint32(_hash_to_uint32(path_data)))


# Key of a child's counters inside its parent's rng_counters (Flax's child_rng_token).
class LazyRng(typing.NamedTuple):
    """A stream's base key and the path data folded into it on each draw (Flax's LazyRng). A tuple, so
    `key, data = stream` unpacks it; tutorials replace the key with `scope.rngs[name].replace(rng=...)`."""
    rng: typing.Any
    suffix: tuple = ()

    def replace(self, **changes):
        return self._replace(**changes)

    def as_jax_rng(self):
        return _derive_key(self.rng, self.suffix)


_CHILD_COUNTERS = 'child'


def copy_rng_counters(counters):
    """A deep copy of a scope's counters, its children's included."""
    return {key: copy_rng_counters(value) if isinstance(value, dict) else value for key, value in counters.items()}


class DenyList:
    """A collection filter taking every collection except those `deny` takes (init's default leaves out
    'intermediates', so sow() stores nothing while initializing)."""

    def __init__(self, deny):
        self.deny = deny

    def __repr__(self):
        return f'DenyList(deny={self.deny!r})'

    def __eq__(self, other):
        return isinstance(other, DenyList) and other.deny == self.deny

    def __hash__(self):
        return hash(('DenyList', repr(self.deny)))


def _mode_allows(mutable, col):
    # `mutable` as apply() takes it: a bool (None reads as False), one collection name, or a collection of them.
    if isinstance(mutable, DenyList):
        return not _mode_allows(mutable.deny, col)
    if isinstance(mutable, bool) or mutable is None:
        return bool(mutable)
    return mutable == col if isinstance(mutable, str) else col in mutable


class Scope:
    def __init__(self, variables, rngs=None, mutable=False, path=(), root=None, flags=None):
        self.root = self if root is None else root
        # {'initializing': True} under init(); lifted transforms hand their flags to the inner scopes.
        self.flags = dict(flags or {}) if root is None else root.flags
        if root is None:
            # {collection: nested dict}, held by the root only; a child finds its part through `path`.
            self._store = variables
        # stream name -> (key, path data folded into the key); each draw also folds in the stream's counter.
        self.rngs = dict(rngs) if rngs else {}
        self.rng_counters = dict.fromkeys(self.rngs, 0)
        self.mutable = mutable
        self.path = path
        self._child_scopes = {}

    def root_collections(self):
        """Every collection of the whole variable tree, as apply() and init() hand them back."""
        return self.root._store

    @property
    def _variables(self):
        # The name flax.linen.transforms reads an iteration's variables by.
        return self.root._store

    @property
    def name(self):
        return self.path[-1] if self.path else None

    def is_mutable_collection(self, col):
        return _mode_allows(self.mutable, col)

    def push(self, name):
        """The child scope `name`; the same object again when a compact method runs a second time. As in Flax,
        a child's RNG counters live in its parent's counters (under ('child', name)), so they carry on across
        calls, and across the inner scopes of a lifted transform that shares its counters with the outer one."""
        child = self._child_scopes.get(name)
        if child is None:
            streams = {stream: LazyRng(key, data + (name,)) for stream, (key, data) in self.rngs.items()}
            child = Scope(None, streams, self.mutable, self.path + (name,), self.root)
            counters = self.rng_counters.get((_CHILD_COUNTERS, name))
            if counters is None:
                counters = self.rng_counters[(_CHILD_COUNTERS, name)] = dict.fromkeys(streams, 0)
            child.rng_counters = counters
            self._child_scopes[name] = child
        return child

    def _subtree(self, col, create=False):
        """This scope's dict in collection `col`; None when some level is missing and `create` is off."""
        node = self.root._store
        for key in (col,) + tuple(self.path):
            below = node.get(key)
            if below is None:
                if not create:
                    return None
                below = node[key] = {}
            node = below
        return node

    def variables(self):
        found = {}
        for col in self.root._store:
            subtree = self._subtree(col)
            if subtree is not None:
                found[col] = subtree
        return found

    def has_variable(self, col, name):
        subtree = self._subtree(col)
        return subtree is not None and name in subtree

    def get_variable(self, col, name, default=None):
        subtree = self._subtree(col)
        if subtree is None:
            return default
        return subtree.get(name, default)

    def put_variable(self, col, name, value):
        if not _mode_allows(self.mutable, col):
            where = '/' + '/'.join(self.path)
            raise ValueError(f'Cannot update variable "{name}" in "{where}" because collection '
                             f'"{col}" is immutable.')
        self._subtree(col, create=True)[name] = value

    def has_rng(self, name):
        return name in self.rngs

    def make_rng(self, name='params'):
        stream = name
        if stream not in self.rngs:
            # Flax falls back to the params stream for any stream the caller did not supply.
            if 'params' not in self.rngs:
                raise ValueError(f'{self.name} needs PRNG for "{name}"')
            stream = 'params'
        count = self.rng_counters.get(stream, 0) + 1
        self.rng_counters[stream] = count
        key, data = self.rngs[stream]
        return _derive_key(key, data + (count,))

    def param(self, name, init_fn, *init_args, unbox=True, **init_kwargs):
        subtree = self._subtree('params')
        if subtree is not None and name in subtree:
            stored = subtree[name]
        elif _mode_allows(self.mutable, 'params'):
            stored = init_fn(self.make_rng('params'), *init_args, **init_kwargs)
            self.put_variable('params', name, stored)
        else:
            where = '/' + '/'.join(self.path)
            raise ScopeParamNotFoundError(f'Could not find parameter named "{name}" in scope "{where}".')
        return meta.unbox(stored) if unbox else stored

    def variable(self, col, name, init_fn=None, *init_args, unbox=True, **init_kwargs):
        subtree = self._subtree(col)
        if subtree is None or name not in subtree:
            if init_fn is None or not _mode_allows(self.mutable, col):
                raise ValueError(f'No variable named "{name}" in collection "{col}".')
            self.put_variable(col, name, init_fn(*init_args, **init_kwargs))
        return Variable(self, col, name, unbox)


class Variable:
    def __init__(self, scope, collection, name, unbox=True):
        self.scope, self.collection, self.name = scope, collection, name
        self._unboxes = unbox

    @property
    def value(self):
        stored = self.scope.get_variable(self.collection, self.name)
        return meta.unbox(stored) if self._unboxes else stored

    @value.setter
    def value(self, new):
        stored = self.scope.get_variable(self.collection, self.name)
        # Writing through an unboxing Variable keeps the box (and its partitioning names) around the new value.
        if self._unboxes and meta.is_axis_metadata(stored):
            new = stored.replace_boxed(new)
        self.scope.put_variable(self.collection, self.name, new)

    def is_mutable(self):
        return _mode_allows(self.scope.mutable, self.collection)
