# flax.nnx.nn.dtypes: promote_dtype, the default dtype rule of NNX layers.
import numpy as np


def promote_dtype(args, /, *, dtype=None, inexact=True):
    """The arrays of `args` in one dtype (the given one, else their promoted type); None stays None."""
    import jax.numpy as jnp
    present = [jnp.asarray(a) for a in args if a is not None]
    if dtype is None:
        dtype = np.result_type(*[a.dtype for a in present]) if present else None
    return tuple(None if a is None else (jnp.asarray(a) if jnp.asarray(a).dtype == dtype else jnp.asarray(a, dtype))
                 for a in args)
