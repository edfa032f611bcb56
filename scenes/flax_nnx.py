# %% [markdown]
# # A Flax NNX model sharded over data and model axes
# Each `nnx.Param` carries a sharding annotation (`nnx.with_partitioning` or `sharding=`); under `jax.set_mesh` Flax
# 0.12 places every annotated parameter where its annotation says as it is created. One `nnx.Optimizer` step keeps
# them there. The Variables panel lists `model` and `nnx.state(model)` as trees: each parameter with its annotation,
# sharding and bytes per device; select one to see its grid.

# %%
import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)


class MLP(nnx.Module):
    def __init__(self, din, hidden, dout, rngs):
        init = nnx.initializers.lecun_normal()
        self.up = nnx.Linear(din, hidden, use_bias=False, rngs=rngs,
                             kernel_init=nnx.with_partitioning(init, (None, 'model')))
        self.down = nnx.Param(init(rngs.params(), (hidden, dout)), sharding=('model', None))

    def __call__(self, x):
        y = jax.nn.relu(self.up(x))
        y = jax.lax.with_sharding_constraint(y, P('data', 'model'))
        return y @ self.down[...]


with jax.set_mesh(mesh):
    model = MLP(16, 64, 16, rngs=nnx.Rngs(0))
    state = nnx.state(model)
    x = jax.device_put(jnp.ones((32, 16)), P('data', None))
jax.debug.visualize_array_sharding(model.up.kernel[...])


# %%
# Adam's moments take each parameter's annotation, so they too are placed as they are created: under the mesh.
with jax.set_mesh(mesh):
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, x):
    def loss(model):
        return jnp.mean((model(x) - x) ** 2)

    grads = nnx.grad(loss)(model)
    optimizer.update(model, grads)


with jax.set_mesh(mesh):
    train_step(model, optimizer, x)
state = nnx.state(model)
print(optimizer.step.value, model.down.value.sharding.spec)
