# ml_collections.config_dict for shardscope: the public names of ml_collections 1.1.0's config_dict package.
from .config_dict import _Op
from .config_dict import ConfigDict
from .config_dict import create
from .config_dict import CustomJSONEncoder
from .config_dict import FieldReference
from .config_dict import FrozenConfigDict
from .config_dict import JSONDecodeError
from .config_dict import MutabilityError
from .config_dict import placeholder
from .config_dict import recursive_rename
from .config_dict import required_placeholder
from .config_dict import RequiredValueError

__all__ = ('_Op', 'ConfigDict', 'create', 'CustomJSONEncoder', 'FieldReference', 'FrozenConfigDict',
           'JSONDecodeError', 'MutabilityError', 'placeholder', 'recursive_rename', 'required_placeholder',
           'RequiredValueError')
