# ml_collections for shardscope: the package's ConfigDict, FrozenConfigDict and FieldReference (ml_collections 1.1.0).

# config_flags (absl command-line flags) is not simulated: it raises NotImplementedError on access and on import.
import importlib.abc as _importlib_abc
import sys as _sys

from ml_collections.config_dict import ConfigDict
from ml_collections.config_dict import FieldReference
from ml_collections.config_dict import FrozenConfigDict

__all__ = ('ConfigDict', 'FieldReference', 'FrozenConfigDict')

__version__ = '1.1.0'

# The library's modules shardscope leaves out.
_UNSUPPORTED_MODULES = ('config_flags',)


def _unsupported(qualified_name):
    return NotImplementedError(f'{qualified_name} is not supported by shardscope')


def __getattr__(name):
    if name in _UNSUPPORTED_MODULES:
        raise _unsupported(f'ml_collections.{name}')
    raise AttributeError(f"module 'ml_collections' has no attribute '{name}'")


class _UnsupportedModuleFinder(_importlib_abc.MetaPathFinder):
    """Last on sys.meta_path: `import ml_collections.config_flags` (or a submodule) reaches it since no source has
    it, and gets NotImplementedError rather than ModuleNotFoundError."""

    _shardscope_ml_collections = True

    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split('.')
        if len(parts) >= 2 and parts[0] == 'ml_collections' and parts[1] in _UNSUPPORTED_MODULES:
            raise _unsupported(fullname)
        return None


if not any(getattr(finder, '_shardscope_ml_collections', False) for finder in _sys.meta_path):
    _sys.meta_path.append(_UnsupportedModuleFinder())
