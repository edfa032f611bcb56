# jax.extend.core: the jaxpr objects (Jaxpr, ClosedJaxpr, JaxprEqn, Var, Literal, Primitive) and jaxpr_as_fun;
# defining new primitives and the rest of JAX's core are not simulated.
from jax._src.jaxpr_objects import Jaxpr, JaxprEqn, Var, Literal, Primitive, jaxpr_as_fun  # noqa: F401


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    if name == 'ClosedJaxpr':
        # JAX 0.11 made ClosedJaxpr another name for Jaxpr.
        from jax._src import jaxpr_objects
        return jaxpr_objects.Jaxpr if jaxpr_objects._merged() else jaxpr_objects.ClosedJaxpr
    raise NotImplementedError(f'jax.extend.core.{name} is not supported by shardscope')
