# Flax NNX: reprs, partition specs and shardings of a small sharded MLP, as the installed Flax prints them.
# %%
import jax
import jax.numpy as jnp
import flax
from flax import nnx
import optax
from jax.sharding import PartitionSpec as P, NamedSharding
print(flax.__version__, optax.__version__, jax.__version__)
mesh = jax.make_mesh((2, 4), ('data', 'model'))
# %%
class MLP(nnx.Module):
    def __init__(self, din, dmid, dout, rngs):
        self.w1 = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (din, dmid)), sharding=(None, 'model'))
        self.b1 = nnx.Param(jnp.zeros((dmid,)), sharding=('model',))
        self.w2 = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (dmid, dout)), sharding=('model', None))
    def __call__(self, x):
        return nnx.relu(x @ self.w1 + self.b1) @ self.w2
# %%
m = MLP(4, 8, 2, nnx.Rngs(0))
print(m.w1.value.shape, m.w1.sharding if hasattr(m.w1, 'sharding') else None)
# %%
state = nnx.state(m)
print(nnx.get_partition_spec(state))
# %%
@nnx.jit
def create():
    model = MLP(4, 8, 2, nnx.Rngs(0))
    st = nnx.state(model)
    pspecs = nnx.get_partition_spec(st)
    st = jax.lax.with_sharding_constraint(st, pspecs)
    nnx.update(model, st)
    return model
with jax.sharding.use_mesh(mesh):
    sm = create()
print(sm.w1.value.sharding)
jax.debug.visualize_array_sharding(sm.w1.value)
# %%
lin = nnx.Linear(3, 4, rngs=nnx.Rngs(0))
print(lin)
# %%
lin2 = nnx.Linear(3, 4, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, 'model')), rngs=nnx.Rngs(0))
print(lin2.kernel.sharding if hasattr(lin2.kernel, 'sharding') else lin2.kernel)
print(nnx.get_partition_spec(nnx.state(lin2)))
# %%
graphdef, st = nnx.split(lin)
print(graphdef)
# %%
print(st)
# %%
print(nnx.Rngs(0))
# %%
r = nnx.Rngs(0, dropout=1)
print(r.params(), r.dropout())
print(r.params.key.value, r.params.count.value)
# %%
print(jax.random.key_data(nnx.Rngs(0).params()))
# %%
d = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=0))
print(d(jnp.ones(8)))
# %%
ln = nnx.LayerNorm(4, rngs=nnx.Rngs(0))
print(ln)
# %%
emb = nnx.Embed(10, 4, rngs=nnx.Rngs(0))
print(emb.embedding.value[:2])
# %%
opt = nnx.Optimizer(lin, optax.adam(1e-3), wrt=nnx.Param)
print(type(opt).__name__)
def lossf(model, xx):
    return (model(xx) ** 2).mean()
grads = nnx.grad(lossf)(lin, jnp.ones((2, 3)))
opt.update(lin, grads)
print(lin.kernel.value[0])
# %%
print(nnx.graphdef(lin))
# %%
nnx.display(lin)
# %%
print(nnx.Linear(2, 2, rngs=nnx.Rngs(0)).kernel)
# %%
abs_model = nnx.eval_shape(lambda: MLP(4, 8, 2, nnx.Rngs(0)))
print(abs_model.w1)
# %%
print(nnx.get_named_sharding(nnx.state(abs_model), mesh))
