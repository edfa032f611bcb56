# flax.linen.Module: dataclass modules bound to a Scope; submodules made inside @compact methods are named
# ClassName_N per parent, those assigned in setup() take the attribute name.
import dataclasses
import functools
import inspect
import typing

from flax.linen.scope import Scope
from flax.core import frozen_dict
from flax import _versions

_module_stack = [None]


class _Unspecified:
    def __repr__(self):
        return '_ParentType.UNSPECIFIED'


_unspecified_parent = _Unspecified()


def compact(fun):
    fun.compact = True
    return fun


def nowrap(fun):
    fun.nowrap = True
    return fun


def _attr_repr(value):
    if callable(value) and not isinstance(value, Module) and getattr(value, '__name__', None):
        return value.__name__
    return repr(value)


def _indent(text, spaces):
    pad = ' ' * spaces
    lines = text.split('\n')
    return '\n'.join(pad + line for line in lines[:-1]) + '\n'


def _module_repr(module, spaces=4):
    cls = type(module)
    attributes = [f.name for f in dataclasses.fields(cls) if f.name not in ('parent', 'name') and f.repr]
    children = {k: v for k, v in module._state.children.items() if isinstance(v, Module)}
    rep = ''
    if attributes:
        rep += '# attributes\n'
        rep += ''.join(f'{name} = {_attr_repr(module.__dict__.get(name))}\n' for name in attributes)
    if children:
        rep += '# children\n'
        rep += ''.join(f'{name} = {_module_repr(child, spaces)}\n' for name, child in children.items())
    return f'{cls.__name__}(\n{_indent(rep, spaces)})' if rep else f'{cls.__name__}()'


class _ModuleState:
    def __init__(self):
        self.autoname_cursor = {}
        self.children = {}
        self.in_setup = False
        self.setup_called = False
        self.in_compact_method = False


def _wrap_method(fun):
    @functools.wraps(fun)
    def wrapped(self, *args, **kwargs):
        return self._call_wrapped_method(fun, args, kwargs)
    wrapped.method_handler_wrapped = True
    return wrapped


class Module:
    """Base class of Linen modules: subclasses become dataclasses with `parent` and `name` keyword fields."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        annotations = dict(cls.__dict__.get('__annotations__', {}))
        for reserved in ('parent', 'name'):
            annotations.pop(reserved, None)
        cls.__annotations__ = annotations
        for name, value in list(cls.__dict__.items()):
            # Methods only: a dataclass field's default (an initializer function) stays as it is.
            if name in ('setup',) or name in annotations or not inspect.isfunction(value):
                continue
            if name.startswith('__') and name != '__call__':
                continue
            if getattr(value, 'nowrap', False) or getattr(value, 'method_handler_wrapped', False):
                continue
            setattr(cls, name, _wrap_method(value))
        dataclasses.dataclass(cls, unsafe_hash='__hash__' not in cls.__dict__, repr=False)

    def __post_init__(self):
        object.__setattr__(self, '_state', _ModuleState())
        object.__setattr__(self, 'scope', None)
        parent = self.parent
        if parent is _unspecified_parent:
            parent = _module_stack[-1]
            object.__setattr__(self, 'parent', parent)
        if isinstance(parent, Scope):
            object.__setattr__(self, 'scope', parent)
        elif isinstance(parent, Module):
            if parent._state.in_setup and self.name is None:
                return  # named when setup() assigns it to an attribute
            if not parent._state.in_setup and not parent._state.in_compact_method and parent.scope is not None \
                    and self.name is None:
                raise AssignSubModuleError(type(self).__name__)
            self._bind_to(parent, self.name)

    def _bind_to(self, parent, name):
        if name is None:
            prefix = type(self).__name__
            cursor = parent._state.autoname_cursor.get(prefix, 0)
            name = f'{prefix}_{cursor}'
            parent._state.autoname_cursor[prefix] = cursor + 1
        object.__setattr__(self, 'name', name)
        object.__setattr__(self, 'parent', parent)
        parent._state.children[name] = self
        if parent.scope is not None:
            object.__setattr__(self, 'scope', parent.scope.push(name))

    def __setattr__(self, name, value):
        state = self.__dict__.get('_state')
        if state is not None and state.in_setup:
            for i, sub in enumerate(_submodules(value)):
                if sub.name is None and sub.parent is self:
                    sub._bind_to(self, name if not isinstance(value, (list, tuple, dict)) else f'{name}_{i}')
        object.__setattr__(self, name, value)

    def __repr__(self):
        return _module_repr(self)

    def _try_setup(self):
        state = self._state
        if state.setup_called or state.in_setup or self.scope is None:
            return
        state.in_setup = True
        _module_stack.append(self)
        try:
            self.setup()
        finally:
            _module_stack.pop()
            state.in_setup = False
            state.setup_called = True

    def __getattr__(self, name):
        # Attributes made in setup() exist only once setup has run (lazily, on first access).
        if name.startswith('_') or name in ('scope', 'parent'):
            raise AttributeError(f'"{type(self).__name__}" object has no attribute "{name}".')
        state = self.__dict__.get('_state')
        if state is not None and not state.setup_called and not state.in_setup and self.__dict__.get('scope'):
            self._try_setup()
            if name in self.__dict__:
                return self.__dict__[name]
        raise AttributeError(f'"{type(self).__name__}" object has no attribute "{name}".')

    def _call_wrapped_method(self, fun, args, kwargs):
        if self.scope is None:
            return fun(self, *args, **kwargs)
        self._try_setup()
        is_compact = getattr(fun, 'compact', False)
        if is_compact:
            self._state.in_compact_method = True
        _module_stack.append(self)
        try:
            return fun(self, *args, **kwargs)
        finally:
            _module_stack.pop()
            if is_compact:
                self._state.in_compact_method = False
                self._state.autoname_cursor = {}

    def setup(self):
        pass

    @property
    def variables(self):
        if self.scope is None:
            raise ValueError("Can't access variables on unbound modules")
        return self.scope.variables()

    def param(self, name, init_fn, *init_args, unbox=True, **init_kwargs):
        if self.scope is None:
            raise ValueError("Can't access variables on unbound modules")
        if name in self._state.children:
            raise NameInUseError(name, type(self).__name__)
        return self.scope.param(name, init_fn, *init_args, unbox=unbox, **init_kwargs)

    def variable(self, col, name, init_fn=None, *init_args, unbox=True, **init_kwargs):
        if self.scope is None:
            raise ValueError("Can't access variables on unbound modules")
        return self.scope.variable(col, name, init_fn, *init_args, unbox=unbox, **init_kwargs)

    def has_variable(self, col, name):
        return self.scope is not None and self.scope.has_variable(col, name)

    def make_rng(self, name='params'):
        if self.scope is None:
            raise ValueError("Can't use RNGs on unbound modules")
        return self.scope.make_rng(name)

    def is_initializing(self):
        return self.scope is not None and self.scope.is_mutable_collection('params') and \
            self.scope.has_rng('params')

    def is_mutable_collection(self, col):
        return self.scope is not None and self.scope.is_mutable_collection(col)

    def clone(self, *, parent=None, **updates):
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        values.update(updates)
        values['parent'] = parent
        return type(self)(**values)

    def bind(self, variables, *args, rngs=None, mutable=False):
        scope = Scope(_thaw(variables), _rng_streams(rngs), mutable)
        return self.clone(parent=scope)

    def _run(self, variables, args, kwargs, rngs, method, mutable):
        scope = Scope(_thaw(variables), _rng_streams(rngs), mutable)
        bound = self.clone(parent=scope)
        if method is None:
            method = '__call__'
        if isinstance(method, str):
            fun = getattr(bound, method)
        else:
            fun = functools.partial(method, bound)
        out = fun(*args, **kwargs)
        return out, scope

    def apply(self, variables, *args, rngs=None, method=None, mutable=False, capture_intermediates=False,
              **kwargs):
        out, scope = self._run(variables, args, kwargs, rngs, method, mutable)
        if mutable is False or mutable is None:
            return out
        return out, _returned({col: tree for col, tree in scope.root._variables.items()
                               if scope.is_mutable_collection(col)})

    def init_with_output(self, rngs, *args, method=None, mutable=True, capture_intermediates=False, **kwargs):
        if not isinstance(rngs, dict):
            rngs = {'params': rngs}
        out, scope = self._run({}, args, kwargs, rngs, method, mutable)
        return out, _returned({col: tree for col, tree in scope.root._variables.items() if tree})

    def init(self, rngs, *args, method=None, mutable=True, capture_intermediates=False, **kwargs):
        return self.init_with_output(rngs, *args, method=method, mutable=mutable, **kwargs)[1]

    @property
    def path(self):
        return self.scope.path if self.scope is not None else ()


class AssignSubModuleError(AttributeError):
    def __init__(self, cls):
        super().__init__(f'Submodule {cls} must be defined in `setup()` or in a method wrapped in `@compact`')


class NameInUseError(ValueError):
    def __init__(self, name, module):
        super().__init__(f'Could not create param "{name}" in Module {module}: Name in use.')


Module.__annotations__ = {'parent': typing.Any, 'name': typing.Optional[str]}
Module.parent = dataclasses.field(default=_unspecified_parent, kw_only=True, repr=False, compare=True, hash=True)
Module.name = dataclasses.field(default=None, kw_only=True)
dataclasses.dataclass(Module, unsafe_hash=True, repr=False)


def _submodules(value):
    if isinstance(value, Module):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Module)]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, Module)]
    return []


def _thaw(variables):
    """A mutable nested-dict copy of the variables (Flax never changes the caller's dicts)."""
    def copy(x):
        if isinstance(x, (dict, frozen_dict.FrozenDict)):
            return {k: copy(x[k]) for k in x}
        return x
    return copy(variables)


def _rng_streams(rngs):
    if rngs is None:
        return {}
    if not isinstance(rngs, dict):
        rngs = {'params': rngs}
    return {name: (key, ()) for name, key in rngs.items()}


def _returned(variables):
    return frozen_dict.freeze(variables) if _versions.returns_frozen_dicts() else variables
