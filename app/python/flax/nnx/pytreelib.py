# flax.nnx.Pytree and Module: Python objects whose attributes are graph data (Variables, arrays, sub-modules) or
# static fields; every subclass is a JAX pytree and a graph node, and prints with its Variables' sizes.
import dataclasses
import typing as tp

import jax
import numpy as np

from flax.nnx import graphlib, reprlib
from flax.nnx.variablelib import Variable, SizeBytes, is_key_array

DATA_REGISTRY: set = set()


@dataclasses.dataclass(frozen=True)
class _Annotated:
    value: tp.Any
    static: bool


def data(value=None, /):
    return _Annotated(value, False)


def static(value=None, /):
    return _Annotated(value, True)


def register_data_type(type_):
    DATA_REGISTRY.add(type_)
    return type_


def is_data(value):
    return (isinstance(value, (Variable, jax.Array, np.ndarray)) or is_key_array(value)
            or type(value) in graphlib.GRAPH_REGISTRY
            or type(value) in DATA_REGISTRY)


class PytreeState(reprlib.Representable):
    __slots__ = ('_initializing', '_is_setup')

    def __init__(self, initializing=False, is_setup=False):
        self._initializing = initializing
        self._is_setup = is_setup

    def __nnx_repr__(self):
        yield reprlib.Object(type(self))


jax.tree_util.register_pytree_node(PytreeState, lambda s: ((), (s._initializing, s._is_setup)),
                                   lambda aux, _: PytreeState(*aux))


@dataclasses.dataclass(frozen=True, repr=False)
class ArrayRepr(reprlib.Representable):
    shape: tuple
    dtype: tp.Any

    def __nnx_repr__(self):
        yield reprlib.Object(type='Array', same_line=True)
        yield reprlib.Attr('shape', self.shape)
        yield reprlib.Attr('dtype', self.dtype)


@dataclasses.dataclass(frozen=True, repr=False)
class VariableRepr(reprlib.Representable):
    var_type: type
    value: tp.Any
    metadata: dict

    def __nnx_repr__(self):
        yield from self.var_type._new(self.value, self.metadata).__nnx_repr__()


def _to_shape_dtype(x):
    if isinstance(x, Variable):
        value = jax.tree.map(_to_shape_dtype, x.get_raw_value(), is_leaf=is_key_array)
        return VariableRepr(x.var_type, value, x.get_metadata())
    if (isinstance(x, (np.ndarray, jax.Array)) or is_key_array(x)) and np.prod(x.shape) > 1:
        return ArrayRepr(tuple(x.shape), x.dtype)
    return x


def _collect_stats(node, node_stats):
    if id(node) in node_stats:
        return
    stats = {}
    node_stats[id(node)] = stats
    if isinstance(node, Variable):
        from flax.nnx.rnglib import RngState
        var_type = RngState if issubclass(node.var_type, RngState) else node.var_type
        size = SizeBytes.from_any(node.get_raw_value())
        if size:
            stats[var_type] = size
        return
    impl = graphlib.get_node_impl(node)
    for value in impl.node_dict(node).values():
        if id(value) in node_stats:
            continue
        if graphlib.is_node(value) or isinstance(value, Variable):
            _collect_stats(value, node_stats)
            for var_type, size in node_stats[id(value)].items():
                stats[var_type] = stats[var_type] + size if var_type in stats else size


_REPR_STATE = {'stats': None, 'seen': None}


class PytreeMeta(type):
    def __call__(cls, *args, **kwargs):
        node = cls.__new__(cls)
        object.__setattr__(node, '_pytree__state', PytreeState())
        object.__setattr__(node, '_pytree__nodes', cls._pytree__nodes)
        node.__init__(*args, **kwargs)
        missing = {name: is_data(value) for name, value in vars(node).items() if name not in node._pytree__nodes}
        if missing:
            object.__setattr__(node, '_pytree__nodes', node._pytree__nodes.update(missing))
        return node


class Pytree(reprlib.Representable, metaclass=PytreeMeta):
    """Base class for NNX objects: attribute assignment records whether each attribute is data or static."""
    _pytree__nodes = graphlib.HashableMapping({'_pytree__state': True})

    def __init_subclass__(cls, pytree=True, **kwargs):
        super().__init_subclass__(**kwargs)
        nodes = dict(getattr(cls, '_pytree__nodes', {}))
        nodes['_pytree__state'] = True
        for name, value in list(vars(cls).items()):
            if isinstance(value, _Annotated):
                nodes[name] = not value.static
        cls._pytree__nodes = graphlib.HashableMapping(nodes)
        graphlib.register_graph_node_type(cls, cls._graph_node_flatten, cls._graph_node_set_key,
                                          lambda t: object.__new__(t), lambda n: vars(n).clear())
        if pytree:
            jax.tree_util.register_pytree_with_keys(cls, cls._pytree__flatten_with_paths, cls._pytree__unflatten,
                                                    cls._pytree__flatten)

    def __setattr__(self, name, value):
        explicit = isinstance(value, _Annotated)
        if explicit:
            is_data_ = not value.static
            value = value.value
        else:
            is_data_ = is_data(value)
        if name not in self._pytree__nodes or explicit:
            object.__setattr__(self, '_pytree__nodes', self._pytree__nodes.update({name: is_data_}))
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._pytree__nodes:
            object.__setattr__(self, '_pytree__nodes', graphlib.HashableMapping(
                {k: v for k, v in self._pytree__nodes.items() if k != name}))
        object.__delattr__(self, name)

    def __nnx_repr__(self):
        clear_stats = _REPR_STATE['stats'] is None or id(self) not in _REPR_STATE['stats']
        if clear_stats:
            _REPR_STATE['stats'] = {}
            _collect_stats(self, _REPR_STATE['stats'])
        stats = _REPR_STATE['stats'][id(self)]
        clear_seen = _REPR_STATE['seen'] is None
        if clear_seen:
            _REPR_STATE['seen'] = set()
        try:
            if id(self) in _REPR_STATE['seen']:
                yield reprlib.Object(type=type(self), empty_repr='...')
                return
            comment = ''
            if stats:
                comment = ' # ' + ', '.join(f'{t.__name__}: {s}' for t, s in stats.items())
                if len(stats) > 1:
                    comment += f', Total: {sum(stats.values(), SizeBytes(0, 0))}'
            yield reprlib.Object(type=type(self), comment=comment)
            _REPR_STATE['seen'].add(id(self))
            for name, value in vars(self).items():
                if name.startswith('_pytree__'):
                    continue
                if name.startswith('_') and not self._pytree__nodes.get(name, False):
                    continue
                value = jax.tree.map(_to_shape_dtype, value,
                                     is_leaf=lambda x: graphlib.is_graph_node(x) or is_key_array(x))
                yield reprlib.Attr(name, value)
        finally:
            if clear_seen:
                _REPR_STATE['seen'] = None
            if clear_stats:
                _REPR_STATE['stats'] = None

    # JAX pytree: data attributes are children (sorted by name), the rest ride in the treedef.
    def _pytree__split(self):
        node_keys, node_attrs, static_keys, static_attrs = [], [], [], []
        for key, value in sorted(vars(self).items()):
            if self._pytree__nodes.get(key, False):
                node_keys.append(key)
                node_attrs.append(value)
            else:
                static_keys.append(key)
                static_attrs.append(value)
        return node_keys, node_attrs, (tuple(node_keys), tuple(static_keys), tuple(static_attrs))

    def _pytree__flatten_with_paths(self):
        keys, attrs, aux = self._pytree__split()
        return [(jax.tree_util.GetAttrKey(k), v) for k, v in zip(keys, attrs)], aux

    def _pytree__flatten(self):
        _, attrs, aux = self._pytree__split()
        return attrs, aux

    @classmethod
    def _pytree__unflatten(cls, static, node_attrs):
        node_keys, static_keys, static_attrs = static
        obj = object.__new__(cls)
        for name, value in zip(node_keys, node_attrs):
            object.__setattr__(obj, name, value)
        for name, value in zip(static_keys, static_attrs):
            object.__setattr__(obj, name, value)
        return obj

    def _graph_node_flatten(self):
        nodes = self._pytree__nodes
        items = [(name, graphlib.DataElem(value) if nodes.get(name, False) else graphlib.StaticElem(value))
                 for name, value in vars(self).items()]
        return sorted(items, key=lambda kv: kv[0]), type(self)

    def _graph_node_set_key(self, key, value):
        current = vars(self).get(key)
        if isinstance(current, Variable) and isinstance(value, Variable):
            current.update_from_state(value)
        else:
            setattr(self, key, value)


Object = Pytree


class Module(Pytree):
    """Base class for NNX layers."""

    def iter_modules(self):
        for path, node in graphlib.iter_graph(self):
            if isinstance(node, Module):
                yield path, node

    def iter_children(self):
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value

    def sow(self, variable_type, name, value, reduce_fn=lambda xs, x: xs + (x,), init_fn=lambda: ()):
        if hasattr(self, name):
            variable = getattr(self, name)
            variable.set_value(reduce_fn(variable.get_value(), value))
        else:
            setattr(self, name, variable_type(reduce_fn(init_fn(), value)))

    def set_attributes(self, *filters, raise_if_not_found=True, **attributes):
        for _, module in self.iter_modules():
            for name, value in attributes.items():
                if hasattr(module, name):
                    object.__setattr__(module, name, value)

    def train(self, **attributes):
        self.set_attributes(deterministic=False, use_running_average=False, **attributes)

    def eval(self, **attributes):
        self.set_attributes(deterministic=True, use_running_average=True, **attributes)
