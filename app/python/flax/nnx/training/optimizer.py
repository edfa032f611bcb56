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


def _check_annotated_state(params, opt_state):
    """Flax 0.12 makes each optimizer moment of an annotated parameter an OptVariable with the parameter's
    metadata, which shards it as it is created: without a mesh that is the Variable's ValueError."""
    from flax.nnx import spmd
    state_shapes = {jnp.shape(leaf) for leaf in jax.tree.leaves(opt_state)}
    for var in jax.tree.leaves(params, is_leaf=lambda x: isinstance(x, Variable)):
        if not isinstance(var, Variable):
            continue
        metadata = var.get_metadata()
        if metadata.get('eager_sharding') and metadata.get('out_sharding') and jnp.shape(var.get_value()) in state_shapes:
            spmd.shard_value(var.get_value(), metadata['out_sharding'], metadata.get('sharding_rules'),
                             metadata.get('mesh'))


class Optimizer(Pytree):
    def __init__(self, model, tx, *, wrt):
        self.step = OptState(jnp.array(0, dtype=jnp.uint32))
        self.tx = tx
        params = graphlib.state(model, wrt)
        opt_state = tx.init(_pure(params))
        _check_annotated_state(params, opt_state)
        self.opt_state = data(_wrap(opt_state))
        self.wrt = wrt

    def update(self, model, grads, /, **kwargs):
        params = _pure(graphlib.state(model, self.wrt))
        grads = _pure(grads)
        updates, new_opt_state = self.tx.update(grads, _pure(self.opt_state), params, **kwargs)
        new_params = jax.tree.map(lambda p, u: p if u is None else p + u, params, updates)
        graphlib.update(model, new_params)
        self.opt_state = data(_wrap(new_opt_state))
        self.step[...] = self.step[...] + 1
