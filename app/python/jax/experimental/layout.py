# jax.experimental.layout: the names each JAX version exports (DeviceLocalLayout and the Layout pair before 0.6.2,
# DeviceLocalLayout with Format in 0.6.2 where Layout is an alias of Format, Layout and Format from 0.7.0).
import _shardscope
from jax._src.layout import Format, Layout as _Layout
from jax._src import layout as _layout_lib


def _version():
    return tuple(int(part) for part in _shardscope.jax_version().split('.')[:3])


def with_layout_constraint(x, layout):
    """Constrains x's layout: the value is unchanged, its result carries the layout."""
    if not isinstance(layout, _Layout):
        raise TypeError(f'Expected a `Layout` as the layout argument. Got {layout} of type {type(layout)}')
    layout.check_compatible_aval(x.shape)
    from jax._src.array_methods import ArrayImpl
    result = x.copy() if type(x) is ArrayImpl and not x._is_tracer else x
    try:
        _layout_lib.set_array_layout(result, layout, committed=False)
    except (AttributeError, TypeError):
        pass  # a traced value that takes no attributes: the constraint is metadata only
    return result


if _version() >= (0, 7, 0):
    Layout = _Layout
    __all__ = ['Layout', 'Format', 'with_layout_constraint']
elif _version() >= (0, 6, 2):
    DeviceLocalLayout = _Layout
    Layout = Format
    __all__ = ['DeviceLocalLayout', 'Format', 'Layout', 'with_layout_constraint']
else:
    DeviceLocalLayout = _Layout
    Layout = Format
    del Format
    __all__ = ['DeviceLocalLayout', 'Layout']
    if _version() >= (0, 6, 1):
        __all__.append('with_layout_constraint')
    else:
        del with_layout_constraint
