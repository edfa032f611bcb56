# A module attribute JAX deprecated, as its deprecation_getattr serves it under the selected version profile.
import sys
import warnings

import _shardscope


def deprecated_attribute(module, name, value, message, *, warned_from, removed_in, removed_message=None,
                         gone_from=None):
    """`value()` with a DeprecationWarning `message` from `warned_from`; from `removed_in`, AttributeError with
    `removed_message` (JAX's accelerated deprecation) or, without one, the module's plain AttributeError, which
    is also what any version from `gone_from` raises (the name then left JAX's table)."""
    version = _shardscope.jax_version_info()
    if version >= removed_in:
        if removed_message is None or (gone_from is not None and version >= gone_from):
            raise AttributeError(f"module '{module}' has no attribute '{name}'", name=name, obj=sys.modules[module])
        raise AttributeError(removed_message)
    if version >= warned_from:
        # Two frames up: the module's __getattr__, then the user's line that read the name.
        warnings.warn(message, DeprecationWarning, stacklevel=3)
    return value()
