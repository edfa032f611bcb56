# jax.typing: the annotations JAX's public functions use for their array and dtype arguments.
import typing as _typing
from typing import Any as _Any, Union as _Union

import numpy as _np


@_typing.runtime_checkable
class _SupportsDType(_typing.Protocol):
    @property
    def dtype(self, /) -> _np.dtype: ...


def _array_type():
    import _shardscope
    return _shardscope.ArrayImpl


# Anything that converts to a JAX array implicitly: arrays, numpy arrays and scalars, and Python scalars (not
# sequences, nor strings, unlike numpy.typing.ArrayLike).
ArrayLike = _Union[_array_type(), _np.ndarray, _np.bool_, _np.number, bool, int, float, complex]
# What a dtype argument accepts: a name ('float32'), a type (np.float32, float), a numpy dtype, or an object with
# a dtype attribute (jnp.float32).
DTypeLike = _Union[str, type[_Any], _np.dtype, _SupportsDType]

__all__ = ['ArrayLike', 'DTypeLike']
