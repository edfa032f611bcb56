# ml_collections.config_dict for shardscope: the public names of ml_collections 1.1.0's config_dict package.
from .config_dict import ConfigDict
from .field_reference import _Op
from .field_reference import FieldReference
from .field_reference import JSONDecodeError
from .field_reference import MutabilityError
from .field_reference import RequiredValueError
from .frozen_config_dict import create
from .frozen_config_dict import CustomJSONEncoder
from .frozen_config_dict import FrozenConfigDict
from .frozen_config_dict import placeholder
from .frozen_config_dict import recursive_rename
from .frozen_config_dict import required_placeholder

__all__ = ('_Op', 'ConfigDict', 'create', 'CustomJSONEncoder', 'FieldReference', 'FrozenConfigDict',
           'JSONDecodeError', 'MutabilityError', 'placeholder', 'recursive_rename', 'required_placeholder',
           'RequiredValueError')
