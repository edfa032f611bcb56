# jax.experimental.
import _shardscope
from jax.experimental import shard_map, mesh_utils  # noqa: F401
# jax.experimental.pjit is an attribute once imported: `import jax` imported it (through jax.debug) only up to
# 0.4.4, so jax.experimental.pjit.with_sharding_constraint without the import is an AttributeError from 0.4.5.
_PJIT_IMPORTED_BY_JAX_UNTIL = (0, 4, 4)
# jax.experimental.maps is imported on first use: JAX 0.4.31 removed it.
from jax._src.callback import io_callback  # noqa: F401,E402


def _enable_x64(new_val=True):
    """jax.experimental.enable_x64(): jax_enable_x64 set to new_val for the block."""
    from jax._src.config_states import State
    return State('jax_enable_x64', context_default=True)(new_val)


def _disable_x64():
    """jax.experimental.disable_x64(): jax_enable_x64 off for the block."""
    return _enable_x64(False)


def __getattr__(name):
    # jax.experimental.PartitionSpec: deprecated from 0.4.4 (a DeprecationWarning), gone in 0.4.11.
    from jax._src.deprecations import deprecated_attribute
    if name == 'PartitionSpec':
        return deprecated_attribute(__name__, name, lambda: _shardscope.PartitionSpec,
                                    'jax.experimental.PartitionSpec is deprecated. Use jax.sharding.PartitionSpec.',
                                    warned_from=(0, 4, 4), removed_in=(0, 4, 11))
    import sys
    # The x64 context managers lived here from 0.2.21; 0.8.0 moved them to jax.enable_x64.
    if name in ('enable_x64', 'disable_x64') and (0, 2, 21) <= _shardscope.jax_version_info() < (0, 8, 0):
        return _enable_x64 if name == 'enable_x64' else _disable_x64
    if name == 'pjit' and _shardscope.jax_version_info() <= _PJIT_IMPORTED_BY_JAX_UNTIL:
        import importlib
        return importlib.import_module('jax.experimental.pjit')
    raise AttributeError(f"module 'jax.experimental' has no attribute '{name}'", name=name, obj=sys.modules[__name__])
