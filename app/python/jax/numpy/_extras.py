# jax.numpy functions the engine lacks, written in Python over the engine's jnp and lax (so they trace to JAX's
# primitives under jit, vmap, grad and sharding); jax.numpy imports every name listed in __all__.
import _shardscope

from jax.numpy._extras_math import *  # noqa: F401,F403
from jax.numpy._extras_shape import *  # noqa: F401,F403
from jax.numpy._extras_index import *  # noqa: F401,F403
from jax.numpy._extras_stats import *  # noqa: F401,F403
from jax.numpy._extras_search import *  # noqa: F401,F403
from jax.numpy._extras_aliases import *  # noqa: F401,F403
from jax.numpy import _extras_aliases

_NAMES = '''
round around rint trunc log2 log10 invert bitwise_not bitwise_xor real imag conj conjugate angle isposinf isneginf
nan_to_num sinc hypot deg2rad
rad2deg radians degrees fabs fmod divmod float_power heaviside fmax fmin gcd lcm left_shift right_shift
bitwise_left_shift bitwise_right_shift signbit copysign ldexp frexp modf logaddexp2
broadcast_shapes broadcast_arrays trace rot90 rollaxis hsplit vsplit kron cross tri logspace geomspace select
piecewise indices fromfunction iscomplexobj isrealobj can_cast apply_along_axis
insert delete append resize ravel_multi_index unravel_index mgrid ogrid vectorize
quantile nanquantile percentile nanpercentile median nanmedian nansum nanprod nanmax nanmin nanargmax nanargmin
nancumsum nancumprod nanmean nanvar nanstd ptp count_nonzero average cov corrcoef
searchsorted digitize bincount argwhere flatnonzero lexsort partition argpartition unique diff ediff1d convolve
correlate polyval interp
'''.split()

# Only names the engine does not define, so no working engine function is shadowed; the engine binds the stubs'
# names but raises NotImplementedError for them (its jnp.math has no rule for them), so these replace them.
_ENGINE_STUBS = {'round', 'rint', 'trunc', 'log2', 'log10', 'invert'}
__all__ = [name for name in _NAMES + _extras_aliases.__all__
           if not hasattr(_shardscope.numpy, name) or name in _ENGINE_STUBS]
