# jax.core: the jaxpr objects make_jaxpr returns and eval_jaxpr; the rest of JAX's core (traces, tracers,
# abstract values beyond ShapedArray) is not simulated and raises NotImplementedError naming itself.
from jax._src.array_methods import ShapedArray  # noqa: F401
from jax._src.jaxpr_objects import eval_jaxpr  # noqa: F401

# Before 0.11 jax.core also exported the jaxpr classes (0.11 left them to jax.extend.core).
_OLD_EXPORTS = ('Jaxpr', 'ClosedJaxpr', 'JaxprEqn', 'Var', 'Literal', 'Primitive', 'jaxpr_as_fun')


def __getattr__(name):
    import sys
    import _shardscope
    if name.startswith('__'):
        raise AttributeError(name)
    if name in _OLD_EXPORTS:
        if _shardscope.jax_version_info() < (0, 11, 0):
            from jax._src import jaxpr_objects
            return getattr(jaxpr_objects, name)
        raise AttributeError(f"module 'jax.core' has no attribute '{name}'", name=name, obj=sys.modules[__name__])
    raise NotImplementedError(f'jax.core.{name} is not supported by shardscope')
