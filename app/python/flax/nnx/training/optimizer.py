# flax.nnx.Optimizer: an optax transformation's state over the `wrt` Variables of a model, stepped by update().
import jax
import jax.numpy as jnp

from flax.nnx import graphlib
from flax.nnx.pytreelib import Pytree, data
from flax.nnx.variablelib import Variable


class OptState(Variable):
    pass


class OptArray(OptState):
    pass


class OptVariable(OptState):
    pass


def _pure(tree):
    return jax.tree.map(lambda x: x.get_value() if isinstance(x, Variable) else x, tree,
                        is_leaf=lambda x: isinstance(x, Variable))


def _wrap(tree):
    return jax.tree.map(lambda x: OptArray(x) if isinstance(x, jax.Array) else x, tree)


class Optimizer(Pytree):
    def __init__(self, model, tx, *, wrt):
        self.step = OptState(jnp.array(0, dtype=jnp.uint32))
        self.tx = tx
        self.opt_state = data(_wrap(tx.init(_pure(graphlib.state(model, wrt)))))
        self.wrt = wrt

    def update(self, model, grads, /, **kwargs):
        params = _pure(graphlib.state(model, self.wrt))
        grads = _pure(grads)
        updates, new_opt_state = self.tx.update(grads, _pure(self.opt_state), params, **kwargs)
        new_params = jax.tree.map(lambda p, u: p if u is None else p + u, params, updates)
        graphlib.update(model, new_params)
        self.opt_state = data(_wrap(new_opt_state))
        self.step[...] = self.step[...] + 1
