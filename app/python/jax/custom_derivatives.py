# jax.custom_derivatives: the custom-derivative decorators jax itself exports.
from jax._src.custom_derivatives import custom_jvp, custom_vjp, custom_gradient  # noqa: F401


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.custom_derivatives.{name} is not supported by shardscope')
