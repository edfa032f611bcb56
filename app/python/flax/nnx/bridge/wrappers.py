# nnx.bridge.ToNNX (a Linen module as an NNX module: lazy_init runs Linen init and turns its collections into
# Variable attributes, calls run Linen apply on them) and ToLinen / to_linen (an NNX module inside Linen: built
# from the Linen RNG streams at init, its Variables stored per collection and loaded back on apply).
import dataclasses
import typing as tp

import jax

from flax import linen
from flax.core import FrozenDict, meta
from flax.nnx import graphlib, pytreelib, rnglib, statelib, variablelib
from flax.nnx.pytreelib import Module
from flax.nnx.bridge import variables as bv


def _jax_version():
    from flax import _versions
    return _versions.jax_version()


def _flax_0_12():
    """Flax 0.12 (jax 0.7.2's months) renamed ToNNX's attributes to to_nnx__module/to_nnx__rngs and forks the
    Rngs it is given."""
    return _jax_version() >= (0, 7, 2)


def _flax_before_0_10_5():
    """Before Flax 0.10.5 (March 2025, next to jax 0.5.3) ToNNX initialized from the streams' keys as they are
    (no draw) and round-tripped only the attributes its init created."""
    return _jax_version() < (0, 5, 3)


def _flax_before_0_10_6():
    """Before Flax 0.10.6 (April 2025, next to jax 0.6.0) ToLinen kept the NNX GraphDef in an 'nnx' collection."""
    return _jax_version() < (0, 6, 0)


@dataclasses.dataclass
class Functional:
    module_type: tp.Any
    graphdef: tp.Any
    args: tuple
    kwargs: dict

    def init(self, *, rngs=None):
        kwargs = {} if rngs is None else {'rngs': rngs}
        module = self.module_type(*self.args, **self.kwargs, **kwargs)
        graphdef, state = graphlib.split(module)
        self.graphdef = graphdef
        return state

    def apply(self, *states):
        assert self.graphdef is not None
        module = graphlib.merge(self.graphdef, *states)

        def call(*args, **kwargs):
            out = module(*args, **kwargs)
            return out, graphlib.split(module)[1:]
        return call


def functional(cls):
    def _functional_constructor(*args, **kwargs):
        return Functional(cls, None, args, kwargs)
    return _functional_constructor


def _set_initializing(module, initializing):
    for _, value in graphlib.iter_graph(module):
        if isinstance(value, pytreelib.Pytree):
            value._pytree__state._initializing = initializing


def lazy_init(fn, *args, **kwargs):
    """Runs `fn` (an NNX module, or a method of one) once with every module of its graph initializing, so the
    ToNNX modules inside create their variables from the sample input. Returns `fn`."""
    if isinstance(fn, Module):
        module = fn
    else:
        if not (hasattr(fn, '__self__') and isinstance(fn.__self__, Module)):
            raise ValueError(f'{fn = } needs to be a method of an NNX Module.')
        module = fn.__self__
    _set_initializing(module, True)
    try:
        fn(*args, **kwargs)
    finally:
        _set_initializing(module, False)
    return fn


def _has_data(value):
    leaves = jax.tree_util.tree_leaves(value, is_leaf=lambda x: isinstance(x, variablelib.Variable))
    return any(pytreelib.is_data(leaf) for leaf in leaves)


class ToNNX(Module):
    """A Linen module as an NNX module: its variables become attributes (a Variable per value, named as in
    Linen, sub-layers as dicts) once lazy_init has run it on a sample input."""

    def __init__(self, module, rngs=None):
        if _flax_0_12():
            self.to_nnx__module = module
            if isinstance(rngs, jax.Array) or variablelib.is_key_array(rngs):
                rngs = rnglib.Rngs(params=rngs)
            elif isinstance(rngs, rnglib.Rngs):
                rngs = rngs.fork()
            self.to_nnx__rngs = rngs
        else:
            self.module = module
            self.rngs = rngs

    @property
    def _linen_module(self):
        return vars(self)['to_nnx__module' if 'to_nnx__module' in vars(self) else 'module']

    @property
    def _own_rngs(self):
        return vars(self)['to_nnx__rngs' if 'to_nnx__module' in vars(self) else 'rngs']

    def __setattr__(self, name, value):
        # Attributes from Linen variables hold Variables inside tuples (sow) or dicts (sub-layers): graph data.
        if not isinstance(value, pytreelib._Annotated) and not pytreelib.is_data(value) and _has_data(value):
            value = pytreelib.data(value)
        super().__setattr__(name, value)

    def lazy_init(self, *args, **kwargs):
        return lazy_init(self, *args, **kwargs)

    def _wrapper_attr(self, name):
        return name in ('module', 'rngs', 'linen_attributes') or name.startswith('to_nnx__') \
            or name.startswith('_pytree__')

    def __call__(self, *args, rngs=None, method=None, **kwargs):
        if not rngs:
            rngs = self._own_rngs
        module = self._linen_module
        if self._pytree__state._initializing:
            if _flax_before_0_10_5():
                _rngs = {name: stream.key.get_value() for name, stream in rngs.items()} if rngs else {}
            else:
                _rngs = {name: stream() for name, stream in rngs.items()} if rngs else {}
            if 'params' not in _rngs and 'default' in _rngs:
                _rngs['params'] = _rngs.pop('default')
            out, variables = module.init_with_output(_rngs, *args, method=method, **kwargs)
            nnx_attrs = bv.linen_vars_to_nnx_attrs(variables)
            for attr_name, value in nnx_attrs.items():
                setattr(self, attr_name, value)
            if _flax_before_0_10_5():
                self.linen_attributes = tuple(nnx_attrs)
        else:
            if _flax_before_0_10_5():
                nnx_attrs = {name: getattr(self, name) for name in vars(self).get('linen_attributes', ())}
            else:
                nnx_attrs = {k: v for k, v in vars(self).items() if not self._wrapper_attr(k)}
            variables = bv.nnx_attrs_to_linen_vars(nnx_attrs)
            _rngs = {name: stream() for name, stream in rngs.items()} if rngs else {}
            if 'params' not in _rngs and 'default' in _rngs and not _flax_before_0_10_5():
                _rngs['params'] = _rngs.pop('default')
            out = module.apply(variables, *args, rngs=_rngs, method=method, **kwargs)
        if kwargs.get('mutable', False) is not False:
            out, updates = out
            for attr_name, value in bv.linen_vars_to_nnx_attrs(updates).items():
                if hasattr(self, attr_name) and isinstance(value, dict):
                    setattr(self, attr_name, bv._recursive_merge(getattr(self, attr_name), value))
                else:
                    setattr(self, attr_name, value)
        return out

    def __getattr__(self, name):
        # Methods of the Linen module run through apply (model.encode(x) for method='encode').
        if name.startswith('_'):
            raise AttributeError(name)
        module = vars(self).get('to_nnx__module', vars(self).get('module'))
        maybe_method = getattr(type(module), name, None) if module is not None else None
        if callable(maybe_method):
            return lambda *args, **kwargs: self.__call__(*args, method=maybe_method, **kwargs)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def linen_rngs_dict(linen_module, add_default=False):
    """One key drawn from each of the Linen module's RNG streams."""
    assert linen_module.scope is not None, 'linen_rngs_dict() must be called inside a Linen module.'
    rngs = {name: linen_module.make_rng(name) for name in linen_module.scope.rngs}
    if add_default and 'default' not in rngs:
        rngs['default'] = 0
    return rngs


def _variable_parents(t):
    return sum(1 for p in t.mro() if isinstance(p, type) and issubclass(p, variablelib.Variable))


class ToLinen(linen.Module):
    """An NNX module class as a Linen module: built at init from the Linen RNG streams (unless skip_rng), its
    Variables stored in the Linen collections their types name; apply rebuilds it from them."""
    nnx_class: tp.Callable
    args: tp.Sequence = ()
    kwargs: tp.Mapping = FrozenDict({})
    skip_rng: bool = False
    metadata_fn: tp.Any = bv.to_linen_var

    @linen.compact
    def __call__(self, *args, **kwargs):
        from flax.nnx import transforms
        module_kwargs = dict(self.kwargs)
        # Outside init the module is only a template for the stored variables: a default stream lets its
        # constructor draw keys whatever streams apply() was given (before Flax 0.10.6 it was merged from the
        # stored GraphDef instead, which comes to the same module).
        maybe_add_default = not self.is_initializing()

        def _module_kwargs():
            if not self.skip_rng:
                module_kwargs['rngs'] = rnglib.Rngs(**linen_rngs_dict(self, add_default=maybe_add_default))
            return module_kwargs

        if self.is_initializing():
            module = self.nnx_class(*self.args, **_module_kwargs())
            self._update_variables(module)
            return module(*args, **kwargs)

        def maybe_unbox(x):
            return x.unbox() if isinstance(x, meta.AxisMetadata) else x
        states = [jax.tree_util.tree_map(maybe_unbox, dict(tree), is_leaf=lambda x: isinstance(x, meta.AxisMetadata))
                  for col, tree in self.variables.items() if col != 'nnx']
        if not states:
            states = [{}]
        module = transforms.eval_shape(lambda: self.nnx_class(*self.args, **_module_kwargs()))
        graphlib.update(module, *states)
        rnglib.reseed(module, **linen_rngs_dict(self, add_default=maybe_add_default))
        out = module(*args, **kwargs)
        self._update_variables(module)
        return out

    def _update_variables(self, module):
        """Stores the module's Variables (RNG state left out) in Linen collections, one per Variable type."""
        if _flax_before_0_10_6() and self.is_mutable_collection('nnx'):
            self.put_variable('nnx', 'graphdef', graphlib.graphdef(module))
        flat = [(path, leaf) for path, leaf in statelib.to_flat_state(graphlib.state(module))
                if not (isinstance(leaf, variablelib.Variable) and isinstance(leaf, rnglib.RngState))]
        by_collection = {}
        for path, leaf in flat:
            type_ = type(leaf)
            by_collection.setdefault(type_, []).append((path, leaf))
        types = list(by_collection)
        if _flax_before_0_10_6():
            # Flax then stored the most derived Variable types first.
            types.sort(key=lambda t: -_variable_parents(t))
        for type_ in types:
            collection = variablelib.variable_name_from_type(type_, allow_register=True)
            if not self.is_mutable_collection(collection):
                continue
            tree = {}
            for path, leaf in by_collection[type_]:
                value = leaf
                if isinstance(leaf, variablelib.Variable):
                    value = self.metadata_fn(leaf) if self.metadata_fn else leaf.get_value()
                node = tree
                for key in path[:-1]:
                    node = node.setdefault(key, {})
                node[path[-1]] = value
            for k, v in tree.items():
                self.put_variable(collection, k, v)


def to_linen(nnx_class, *args, metadata_fn=bv.to_linen_var, name=None, **kwargs):
    """ToLinen(nnx_class, args=args, kwargs=kwargs): the usual way to build one."""
    return ToLinen(nnx_class, args=args, kwargs=FrozenDict(kwargs), metadata_fn=metadata_fn, name=name)
