# optax.tree_utils: elementwise maps over parameter-shaped pytrees (None leaves stay None).


def _map(f, *trees):
    import jax
    return jax.tree_util.tree_map(lambda *xs: None if xs[0] is None else f(*xs), *trees,
                                  is_leaf=lambda x: x is None)


def tree_zeros_like(tree, dtype=None):
    import jax.numpy as jnp
    return _map(lambda x: jnp.zeros_like(x, dtype=dtype), tree)


def tree_update_moment(updates, moments, decay, order):
    return _map(lambda g, t: (1 - decay) * (g ** order) + decay * t, updates, moments)


def tree_update_moment_per_elem_norm(updates, moments, decay, order):
    return _map(lambda g, t: (1 - decay) * (g ** order) + decay * t, updates, moments)


def tree_bias_correction(moment, decay, count):
    correction = 1 - decay ** count
    return _map(lambda t: t / correction.astype(t.dtype), moment)


def tree_cast(tree, dtype):
    if dtype is None:
        return tree
    return _map(lambda x: x.astype(dtype), tree)
