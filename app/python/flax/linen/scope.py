# The variable scope behind a bound Linen module: its slice of the variable collections, its PRNG streams
# (keys folded with the module path and a per-stream counter, as Flax's LazyRng does) and child scopes.
import hashlib

from flax.core import meta


class ScopeParamNotFoundError(ValueError):
    pass


class ScopeParamShapeError(ValueError):
    pass


def _fold_in_path(key, suffix):
    """Flax's fold of static data into a key: SHA-1 over the strings and big-endian ints, first 4 bytes."""
    if not suffix:
        return key
    import jax.numpy as jnp
    from jax import random
    digest = hashlib.sha1()
    for part in suffix:
        if isinstance(part, str):
            digest.update(part.encode('utf-8'))
        elif isinstance(part, int):
            digest.update(part.to_bytes((part.bit_length() + 7) // 8, byteorder='big'))
        else:
            raise ValueError(f'Expected int or string, got: {part}')
    return random.fold_in(key, jnp.uint32(int.from_bytes(digest.digest()[:4], byteorder='big')))


class Scope:
    def __init__(self, variables, rngs=None, mutable=False, path=(), root=None):
        # variables: {collection: nested dict}; only the root holds it, children reach it through `path`.
        self._variables = variables
        self.rngs = dict(rngs or {})   # stream name -> (key, suffix)
        self.rng_counters = {name: 0 for name in self.rngs}
        self.mutable = mutable
        self.path = path
        self.root = root if root is not None else self
        self.reservations = set()
        self.children = {}

    @property
    def name(self):
        return self.path[-1] if self.path else None

    def is_mutable_collection(self, col):
        if self.mutable is True:
            return True
        if self.mutable is False or self.mutable is None:
            return False
        if isinstance(self.mutable, str):
            return self.mutable == col
        return col in self.mutable

    def push(self, name):
        """The child scope `name` (the same one when a compact method runs again)."""
        if name in self.children:
            return self.children[name]
        self.reservations.add(name)
        rngs = {stream: (key, suffix + (name,)) for stream, (key, suffix) in self.rngs.items()}
        child = Scope(None, rngs, self.mutable, self.path + (name,), self.root)
        self.children[name] = child
        return child

    def _collection(self, col, create):
        node = self.root._variables.get(col)
        if node is None:
            if not create:
                return None
            node = self.root._variables[col] = {}
        for part in self.path:
            if part not in node:
                if not create:
                    return None
                node[part] = {}
            node = node[part]
        return node

    def variables(self):
        out = {}
        for col in self.root._variables:
            node = self._collection(col, False)
            if node is not None:
                out[col] = node
        return out

    def has_variable(self, col, name):
        node = self._collection(col, False)
        return node is not None and name in node

    def get_variable(self, col, name, default=None):
        node = self._collection(col, False)
        return node[name] if node is not None and name in node else default

    def put_variable(self, col, name, value):
        if not self.is_mutable_collection(col):
            raise ValueError(f'Cannot update variable "{name}" in "{"/" + "/".join(self.path)}" because collection '
                             f'"{col}" is immutable.')
        self._collection(col, True)[name] = value

    def has_rng(self, name):
        return name in self.rngs

    def make_rng(self, name='params'):
        if not self.has_rng(name):
            if self.has_rng('params'):
                name = 'params'
            else:
                raise ValueError(f'{self.name} needs PRNG for "{name}"')
        self.rng_counters[name] += 1
        key, suffix = self.rngs[name]
        return _fold_in_path(key, suffix + (self.rng_counters[name],))

    def param(self, name, init_fn, *init_args, unbox=True, **init_kwargs):
        if self.has_variable('params', name):
            value = self.get_variable('params', name)
        else:
            if not self.is_mutable_collection('params'):
                path = '/' + '/'.join(self.path)
                raise ScopeParamNotFoundError(f'Could not find parameter named "{name}" in scope "{path}".')
            value = init_fn(self.make_rng('params'), *init_args, **init_kwargs)
            self.put_variable('params', name, value)
        return meta.unbox(value) if unbox else value

    def variable(self, col, name, init_fn=None, *init_args, unbox=True, **init_kwargs):
        if not self.has_variable(col, name):
            if not self.is_mutable_collection(col) or init_fn is None:
                raise ValueError(f'No variable named "{name}" in collection "{col}".')
            self.put_variable(col, name, init_fn(*init_args, **init_kwargs))
        return Variable(self, col, name, unbox)


class Variable:
    def __init__(self, scope, collection, name, unbox=True):
        self.scope, self.collection, self.name, self._unbox = scope, collection, name, unbox

    @property
    def value(self):
        value = self.scope.get_variable(self.collection, self.name)
        return meta.unbox(value) if self._unbox else value

    @value.setter
    def value(self, new):
        old = self.scope.get_variable(self.collection, self.name)
        if self._unbox and isinstance(old, meta.AxisMetadata):
            new = old.replace_boxed(new)
        self.scope.put_variable(self.collection, self.name, new)

    def is_mutable(self):
        return self.scope.is_mutable_collection(self.collection)
