# flax.struct: frozen dataclasses that are pytrees; fields marked pytree_node=False travel as static metadata.
import dataclasses

from jax._src import tree as _tree


def field(pytree_node=True, *, metadata=None, **kwargs):
    return dataclasses.field(metadata={**(metadata or {}), 'pytree_node': pytree_node}, **kwargs)


def _register(cls):
    fields = [f for f in dataclasses.fields(cls) if f.init]
    data = tuple(f.name for f in fields if f.metadata.get('pytree_node', True))
    meta = tuple(f.name for f in fields if not f.metadata.get('pytree_node', True))

    def flatten(x):
        return [getattr(x, name) for name in data], tuple(getattr(x, name) for name in meta)

    def unflatten(aux, children):
        kwargs = dict(zip(data, children))
        kwargs.update(zip(meta, aux))
        return cls(**kwargs)

    def flatten_with_keys(x):
        return [(_tree.GetAttrKey(name), getattr(x, name)) for name in data], tuple(getattr(x, name) for name in meta)

    _tree.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)


def dataclass(clz=None, **kwargs):
    if clz is None:
        return lambda c: dataclass(c, **kwargs)
    if '_flax_dataclass' in clz.__dict__:
        return clz
    kwargs.setdefault('frozen', True)
    cls = dataclasses.dataclass(clz, **kwargs)
    cls.replace = lambda self, **updates: dataclasses.replace(self, **updates)
    _register(cls)
    cls._flax_dataclass = True
    return cls


class PyTreeNode:
    """Base class whose subclasses are flax.struct dataclasses."""

    def __init_subclass__(cls, **kwargs):
        dataclass_kwargs = {k: kwargs.pop(k) for k in ('frozen', 'kw_only', 'eq', 'repr') if k in kwargs}
        super().__init_subclass__(**kwargs)
        dataclass(cls, **dataclass_kwargs)
