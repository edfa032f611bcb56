# jax.experimental.layout: the names each JAX version exports (DeviceLocalLayout and the Layout pair before 0.6.2,
# DeviceLocalLayout with Format in 0.6.2 where Layout is an alias of Format, Layout and Format from 0.7.0).
import _shardscope
from jax._src.layout import Format as _Format, Layout as _Layout
from jax._src import layout as _layout_lib


def _with_layout_constraint(x, layout):
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


def __getattr__(name):
    # Resolved on access so the names follow the version profile in force.
    version = _shardscope.jax_version_info()
    if name == 'Layout':
        return _Layout if version >= (0, 7, 0) else _Format
    if name == 'Format' and version >= (0, 6, 2):
        return _Format
    if name == 'DeviceLocalLayout' and version < (0, 7, 0):
        return _Layout
    if name == 'with_layout_constraint' and version >= (0, 6, 1):
        return _with_layout_constraint
    raise AttributeError(f"module 'jax.experimental.layout' has no attribute '{name}'")
