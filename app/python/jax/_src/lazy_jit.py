# A function under jax.jit, made on its first call: jax.random and jax.nn define their jitted helpers while jax
# itself is still loading, before jax.jit exists.


def lazy_jit(function, **jit_kwargs):
    """`function` under jax.jit(**jit_kwargs), built on the first call; its name and doc are the function's."""
    cache = {}

    def call(*args, **kwargs):
        if 'jit' not in cache:
            import jax
            cache['jit'] = jax.jit(function, **jit_kwargs)
        return cache['jit'](*args, **kwargs)
    call.__name__ = call.__qualname__ = function.__name__
    call.__doc__ = function.__doc__
    return call
