# flax.training.train_state.TrainState: step, params and optimizer state in one pytree; apply_fn and tx static.
import typing

from flax import struct


class TrainState(struct.PyTreeNode):
    step: typing.Any
    apply_fn: typing.Callable = struct.field(pytree_node=False)
    params: typing.Any = struct.field(pytree_node=True)
    tx: typing.Any = struct.field(pytree_node=False)
    opt_state: typing.Any = struct.field(pytree_node=True)

    def apply_gradients(self, *, grads, **kwargs):
        import optax
        updates, new_opt_state = self.tx.update(grads, self.opt_state, self.params)
        new_params = optax.apply_updates(self.params, updates)
        return self.replace(step=self.step + 1, params=new_params, opt_state=new_opt_state, **kwargs)

    @classmethod
    def create(cls, *, apply_fn, params, tx, **kwargs):
        opt_state = tx.init(params)
        return cls(step=0, apply_fn=apply_fn, params=params, tx=tx, opt_state=opt_state, **kwargs)
