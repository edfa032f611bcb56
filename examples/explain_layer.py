# A sharded layer, run twice, and a program only lowered from abstract arguments: `shardscope explain` prices both.
#   ./shardscope explain examples/explain_layer.py --devices tpu-v5e-8
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((64, 128)), NamedSharding(mesh, P('data', 'model')))
w = jax.device_put(jnp.ones((128, 256)), NamedSharding(mesh, P('model', None)))


@jax.jit
def layer(x, w):
    return jax.nn.relu(x @ w)


y = layer(x, w)
y = layer(x, w)
print(y.sharding.spec)


def gram(a):
    return a.T @ a


big = jax.ShapeDtypeStruct((8192, 8192), jnp.bfloat16, sharding=NamedSharding(mesh, P(None, 'model')))
lowered = jax.jit(gram).lower(big)
