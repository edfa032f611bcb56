# flax.linen.Module: dataclass modules bound to a Scope, with compact (ClassName_N) and setup-named submodules.
import dataclasses
import functools
import inspect
import typing
from contextlib import contextmanager

from flax.linen.scope import Scope, DenyList, LazyRng
from flax.core import frozen_dict
from flax import _versions

# init()'s default: every collection is mutable except 'intermediates', which sow() fills only when asked.
_INIT_MUTABLE = DenyList('intermediates')

# Modules whose setup() or method is running, innermost last: a module constructed meanwhile takes the innermost
# one as its parent (None at top level).
_running = []


@contextmanager
def _entered(module):
    _running.append(module)
    try:
        yield
    finally:
        _running.pop()


class _NoParentGiven:
    """Default of the `parent` field, telling __post_init__ to take the enclosing running module."""

    def __repr__(self):
        return '_ParentType.UNSPECIFIED'


_NO_PARENT_GIVEN = _NoParentGiven()

# Function attributes that steer method wrapping; functools.wraps copies them along with the function's __dict__.
_COMPACT_MARK = '_linen_compact'
_NOWRAP_MARK = '_linen_nowrap'
_WRAPPED_MARK = '_linen_wrapped'

_UNBOUND_VARIABLES = "Can't access variables on unbound modules"
_UNBOUND_RNGS = "Can't use RNGs on unbound modules"


def compact(fun):
    setattr(fun, _COMPACT_MARK, True)
    return fun


def nowrap(fun):
    setattr(fun, _NOWRAP_MARK, True)
    return fun


def _field_text(value):
    # Initializers and activations print by name, as Flax's repr shows them.
    if callable(value) and not isinstance(value, Module) and getattr(value, '__name__', None):
        return value.__name__
    return repr(value)


def _describe(module, spaces=4):
    cls = type(module)
    entries = []
    shown = [f.name for f in dataclasses.fields(cls) if f.repr and f.name not in ('parent', 'name')]
    if shown:
        entries.append('# attributes')
        entries.extend(f'{attr} = {_field_text(module.__dict__.get(attr))}' for attr in shown)
    kids = [(key, sub) for key, sub in module._book.submodules.items() if isinstance(sub, Module)]
    if kids:
        entries.append('# children')
        entries.extend(f'{key} = {_describe(sub, spaces)}' for key, sub in kids)
    if not entries:
        return cls.__name__ + '()'
    pad = ' ' * spaces
    # A child's repr spans lines; every one of them is indented once more.
    body = ''.join(pad + line + '\n' for entry in entries for line in entry.split('\n'))
    return cls.__name__ + '(\n' + body + ')'


class _Book:
    """Per-instance bookkeeping, kept outside the dataclass fields so that equality and hashing ignore it."""

    def __init__(self):
        self.next_index = {}    # class name -> N of the next auto-named ClassName_N child
        self.submodules = {}    # bound children by name (the repr's "# children")
        self.in_setup = False
        self.setup_done = False
        self.in_compact = False


def _wants_wrapper(attr, member, field_names):
    """Whether a class attribute is a method that must run bound (setup first, parent tracking, compact naming)."""
    if attr == 'setup' or attr in field_names or not inspect.isfunction(member):
        # A field's default, even a function such as an initializer, is data.
        return False
    if attr.startswith('__') and attr != '__call__':
        return False
    return not (getattr(member, _NOWRAP_MARK, False) or getattr(member, _WRAPPED_MARK, False))


def _as_linen_method(fun):
    @functools.wraps(fun)
    def linen_method(self, *args, **kwargs):
        return self._run_method(fun, args, kwargs)
    setattr(linen_method, _WRAPPED_MARK, True)
    return linen_method


class Module:
    """Base class of Linen modules: subclasses become dataclasses with `parent` and `name` keyword fields."""

    parent: typing.Any = dataclasses.field(default=_NO_PARENT_GIVEN, kw_only=True, repr=False, compare=True,
                                           hash=True)
    name: typing.Optional[str] = dataclasses.field(default=None, kw_only=True)

    def __init_subclass__(cls, **options):
        super().__init_subclass__(**options)
        # parent and name stay Module's keyword-only fields even where a subclass annotates them.
        own = {k: v for k, v in cls.__dict__.get('__annotations__', {}).items() if k not in ('parent', 'name')}
        cls.__annotations__ = own
        for attr, member in list(vars(cls).items()):
            if _wants_wrapper(attr, member, own):
                setattr(cls, attr, _as_linen_method(member))
        dataclasses.dataclass(cls, unsafe_hash='__hash__' not in vars(cls), repr=False)

    def __post_init__(self):
        object.__setattr__(self, '_book', _Book())
        object.__setattr__(self, 'scope', None)
        if self.parent is _NO_PARENT_GIVEN:
            object.__setattr__(self, 'parent', _running[-1] if _running else None)
        owner = self.parent
        if isinstance(owner, Scope):
            object.__setattr__(self, 'scope', owner)
            return
        if not isinstance(owner, Module):
            return
        if self.name is None:
            if owner._book.in_setup:
                return  # setup() names it when assigning it to an attribute
            if not owner._book.in_compact and owner.scope is not None:
                raise AssignSubModuleError(type(self).__name__)
        self._attach(owner, self.name)

    def _attach(self, owner, name):
        book = owner._book
        if name is None:
            prefix = type(self).__name__
            index = book.next_index.get(prefix, 0)
            book.next_index[prefix] = index + 1
            name = f'{prefix}_{index}'
        object.__setattr__(self, 'name', name)
        object.__setattr__(self, 'parent', owner)
        book.submodules[name] = self
        if owner.scope is not None:
            object.__setattr__(self, 'scope', owner.scope.push(name))

    def __setattr__(self, attr, value):
        book = self.__dict__.get('_book')
        if book is not None and book.in_setup:
            # Modules assigned in setup() are named after the attribute, with the path to them inside containers:
            # attr_2 for a list's third item (non-modules count), attr_key for a dict's, attr_0_1 nested.
            for suffix, sub in _modules_in(value):
                if sub.name is None and sub.parent is self:
                    sub._attach(self, attr + suffix)
        object.__setattr__(self, attr, value)

    def __repr__(self):
        return _describe(self)

    def _setup_once(self):
        book = self._book
        if book.setup_done or book.in_setup or self.scope is None:
            return
        book.in_setup = True
        try:
            with _entered(self):
                self.setup()
        finally:
            book.in_setup = False
            book.setup_done = True

    def __getattr__(self, attr):
        # Attributes that setup() defines exist only after it has run, which first access triggers.
        book = self.__dict__.get('_book')
        if (not attr.startswith('_') and attr not in ('scope', 'parent') and book is not None
                and not (book.setup_done or book.in_setup) and self.__dict__.get('scope') is not None):
            self._setup_once()
            if attr in self.__dict__:
                return self.__dict__[attr]
        raise AttributeError(f'"{type(self).__name__}" object has no attribute "{attr}".')

    def _run_method(self, fun, args, kwargs):
        if self.scope is None:
            return fun(self, *args, **kwargs)
        self._setup_once()
        book = self._book
        compact_body = getattr(fun, _COMPACT_MARK, False)
        if compact_body:
            book.in_compact = True
        try:
            with _entered(self):
                return fun(self, *args, **kwargs)
        finally:
            if compact_body:
                # A later call builds the same submodules again, so their auto-names must start over at _0.
                book.in_compact = False
                book.next_index = {}

    def setup(self):
        pass

    def _bound_scope(self, message=_UNBOUND_VARIABLES):
        if self.scope is None:
            raise ValueError(message)
        return self.scope

    @property
    def variables(self):
        return self._bound_scope().variables()

    def param(self, name, init_fn, *init_args, unbox=True, **init_kwargs):
        scope = self._bound_scope()
        if name in self._book.submodules:
            raise NameInUseError(name, type(self).__name__)
        return scope.param(name, init_fn, *init_args, unbox=unbox, **init_kwargs)

    def variable(self, col, name, init_fn=None, *init_args, unbox=True, **init_kwargs):
        return self._bound_scope().variable(col, name, init_fn, *init_args, unbox=unbox, **init_kwargs)

    def has_variable(self, col, name):
        return self.scope is not None and self.scope.has_variable(col, name)

    def make_rng(self, name='params'):
        return self._bound_scope(_UNBOUND_RNGS).make_rng(name)

    def get_variable(self, col, name, default=None):
        return self._bound_scope().get_variable(col, name, default)

    def put_variable(self, col, name, value):
        self._bound_scope().put_variable(col, name, value)

    def sow(self, col, name, value, reduce_fn=lambda xs, x: xs + (x,), init_fn=lambda: ()):
        """Adds `value` to variable `name` of collection `col` when that collection is mutable (a tuple of the
        values sown by default); False and nothing stored otherwise."""
        scope = self._bound_scope("Can't store variables on unbound modules")
        if not scope.is_mutable_collection(col):
            return False
        xs = scope.get_variable(col, name) if scope.has_variable(col, name) else init_fn()
        scope.put_variable(col, name, reduce_fn(xs, value))
        return True

    def is_initializing(self):
        """True inside init() and init_with_output() (not apply(), whatever it makes mutable)."""
        return self.scope is not None and bool(self.scope.flags.get('initializing', False))

    def is_mutable_collection(self, col):
        return self.scope is not None and self.scope.is_mutable_collection(col)

    def clone(self, *, parent=None, **updates):
        settings = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        settings.update(updates, parent=parent)
        return type(self)(**settings)

    def bind(self, variables, *args, rngs=None, mutable=False):
        return self.clone(parent=_root_scope(variables, rngs, mutable))

    def _run_bound(self, variables, rngs, mutable, method, args, kwargs, initializing=False):
        scope = _root_scope(variables, rngs, mutable, {'initializing': True} if initializing else None)
        bound = self.clone(parent=scope)
        if method is None:
            method = '__call__'
        entry = getattr(bound, method) if isinstance(method, str) else functools.partial(method, bound)
        return entry(*args, **kwargs), scope

    def apply(self, variables, *args, rngs=None, method=None, mutable=False, capture_intermediates=False,
              **kwargs):
        out, scope = self._run_bound(variables, rngs, mutable, method, args, kwargs)
        if mutable is None or mutable is False:
            return out
        changed = {col: tree for col, tree in scope.root_collections().items() if scope.is_mutable_collection(col)}
        return out, _as_returned(changed)

    def init_with_output(self, rngs, *args, method=None, mutable=_INIT_MUTABLE, capture_intermediates=False,
                         **kwargs):
        # A bare key seeds the params stream.
        streams = rngs if isinstance(rngs, dict) else {'params': rngs}
        out, scope = self._run_bound({}, streams, mutable, method, args, kwargs, initializing=True)
        # Collections that stayed empty are left out.
        return out, _as_returned({col: tree for col, tree in scope.root_collections().items() if tree})

    def init(self, rngs, *args, method=None, mutable=_INIT_MUTABLE, capture_intermediates=False, **kwargs):
        return self.init_with_output(rngs, *args, method=method, mutable=mutable, **kwargs)[1]

    @property
    def path(self):
        return () if self.scope is None else self.scope.path


def merge_param(name, a, b):
    """The one of a module attribute `a` and a call argument `b` that was given."""
    if a is None and b is None:
        raise ValueError(f'Parameter "{name}" must be passed to the constructor or at call time.')
    if a is not None and b is not None:
        raise ValueError(f'Parameter "{name}" was passed to the constructor and at call time. Should be passed '
                         'just once.')
    return b if a is None else a


class AssignSubModuleError(AttributeError):
    def __init__(self, cls):
        super().__init__(f'Submodule {cls} must be defined in `setup()` or in a method wrapped in `@compact`')


class NameInUseError(ValueError):
    def __init__(self, name, module):
        super().__init__(f'Could not create param "{name}" in Module {module}: Name in use.')


dataclasses.dataclass(Module, unsafe_hash=True, repr=False)


def _modules_in(value, suffix=''):
    """(name suffix, module) for each module in `value`: itself, or inside nested lists, tuples and dicts, the
    suffix joining the keys and indices on the way ('_0', '_a_1'), in Flax's sorted-key order."""
    if isinstance(value, Module):
        return [(suffix, value)]
    if isinstance(value, (list, tuple)):
        items = [(str(i), v) for i, v in enumerate(value)]
    elif isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    else:
        return []
    found = []
    for key, item in sorted(items, key=lambda kv: kv[0]):
        found.extend(_modules_in(item, f'{suffix}_{key}'))
    return found


def _mutable_copy(tree):
    """Nested plain dicts (FrozenDicts thawed), so running a module never writes into the caller's dicts."""
    if isinstance(tree, (dict, frozen_dict.FrozenDict)):
        return {key: _mutable_copy(tree[key]) for key in tree}
    return tree


def _root_scope(variables, rngs, mutable, flags=None):
    # Streams start with no path data: the module path is folded in as scopes are pushed.
    if rngs is None:
        streams = {}
    else:
        named = rngs if isinstance(rngs, dict) else {'params': rngs}
        streams = {stream: LazyRng(key, ()) for stream, key in named.items()}
    return Scope(_mutable_copy(variables), streams, mutable, flags=flags)


def _as_returned(variables):
    return frozen_dict.freeze(variables) if _versions.returns_frozen_dicts() else variables
