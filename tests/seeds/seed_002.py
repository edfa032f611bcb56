# %%
import jax

jax.config.update('jax_num_cpu_devices', 12)

# %%
jax.devices()

# %%
import numpy as np
import jax.numpy as jnp

arr = jnp.arange(32.0).reshape(4, 8)
arr.devices()

# %%
arr.sharding

# %%
# pip install rich

jax.debug.visualize_array_sharding(arr)

# %%
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('x', 'y')) # x和y是两个维度的名字
sharding = jax.sharding.NamedSharding(mesh, P('x', 'y'))
print(sharding)

# jax.sharding.NamedSharding 也可以直接写成 jax.NamedSharding

# %%
arr_sharded = jax.device_put(arr, sharding)
# 注意 这儿的 sharding = jax.sharding.NamedSharding(mesh, P('x', 'y'))

print(arr_sharded)
jax.debug.visualize_array_sharding(arr_sharded)

# %%
@jax.jit
def f_elementwise(x):
  return 2 * jnp.sin(x) + 1

result = f_elementwise(arr_sharded)

print("shardings match:", result.sharding == arr_sharded.sharding)

# %%
print(result)
jax.debug.visualize_array_sharding(result)

# %%
@jax.jit
def f_contract(x):
  return x.sum(axis=0)

result = f_contract(arr_sharded)
jax.debug.visualize_array_sharding(result)
print(result)

# %%
some_array = np.arange(8)
print(f"JAX-level type of some_array: {jax.typeof(some_array)}")

# %%
@jax.jit
def foo(x):
  print(f"JAX-level type of x during tracing: {jax.typeof(x)}")
  return x + x

foo(some_array)

# %%
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("X", "Y"),
                     axis_types=(AxisType.Explicit, AxisType.Explicit))
# 这里 AxisType.Explicit 是指我们在 shard 的时候，会指定怎么进行分配

# %%
replicated_array = np.arange(8).reshape(4, 2)
sharded_array = jax.device_put(replicated_array, jax.NamedSharding(mesh, P("X", None)))

print(f"replicated_array type: {jax.typeof(replicated_array)}")
print(f"sharded_array type: {jax.typeof(sharded_array)}")
print(sharded_array)

# %%
jax.debug.visualize_array_sharding(sharded_array)

# %%
arg0 = jax.device_put(np.arange(4).reshape(4, 1),
                      jax.NamedSharding(mesh, P("X", None)))
arg1 = jax.device_put(np.arange(8).reshape(1, 8),
                      jax.NamedSharding(mesh, P(None, "Y")))

@jax.jit
def add_arrays(x, y):
  ans = x + y # 这儿会自动广播
  print(f"x sharding: {jax.typeof(x)}")
  print(f"y sharding: {jax.typeof(y)}")
  print(f"ans sharding: {jax.typeof(ans)}")
  return ans

with jax.sharding.use_mesh(mesh):
  temp = add_arrays(arg0, arg1)
  jax.debug.visualize_array_sharding(temp)

# %%
add_arrays(arg0, arg1)

print(f"整个的求和结果是 {temp}")

print("试着查看 CPU0 上的数据")
for s in temp.addressable_shards:
    if s.device.id == 0:  # 只看 CPU 0
        print(f"Data on CPU 0:\n{s.data}")

# %%
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P
from jax.experimental.shard_map import shard_map # Correct import for shard_map

# Assume f_elementwise is a function you have defined, for example:
def f_elementwise(x):
  return x * 2

mesh = jax.make_mesh((8,), ('x',))

f_elementwise_sharded = shard_map(
    f_elementwise,
    mesh=mesh,
    in_specs=P('x'),
    out_specs=P('x'))

arr = jnp.arange(32)
f_elementwise_sharded(arr)
jax.debug.visualize_array_sharding(arr)

# %%
x = jnp.arange(32)
print(f"global shape: {x.shape=}")

def f(x):
  print(f"device local shape: {x.shape=}")
  return x * 2

y = shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'))(x)
jax.debug.visualize_array_sharding(y)

# %%
def f(x):
  # print(f"device local shape: {x.shape=}")
  sum_in_shard = x.sum(keepdims=True) # 如果没有这个 keepdims=True，sum_in_shard 就是一个标量 程序会报错
  #print(f"sum_in_shard shape: {sum_in_shard.shape=}")
  return sum_in_shard
  #return jnp.sum(x, keepdims=True)

#print(x)
x_sharded = jax.device_put(x, jax.NamedSharding(mesh, P("x",))
                           )
for s in x_sharded.addressable_shards:
    print(f"Data on {s.device}: {s.data}")

jax.debug.visualize_array_sharding(x_sharded)
z = shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'))(x)
print(z)
jax.debug.visualize_array_sharding(z)

# %%
def g(x):
  sum_in_shard = x.sum(keepdims=True) # 如果没有这个 keepdims=True，sum_in_shard 就是一个标量 这个地方不会报错、
  #print(f"sum_in_shard shape: {sum_in_shard.shape=}")
  return jax.lax.psum(sum_in_shard, 'x')

print(shard_map(g, mesh=mesh, in_specs=P('x'), out_specs=P())(x))
# 注意，要跨 partition 进行计算，需要使用 jax.lax.psum，而且 out_specs 也要设置为 P() 这样才是只有一个输出数字嘛
# 如果设置为 P('x')，尝试下面的代码
print(shard_map(g, mesh=mesh, in_specs=P('x'), out_specs=P('x'))(x))

# %%
@jax.jit
def layer(x, weights, bias):
  return jax.nn.sigmoid(x @ weights + bias)

# %%
import numpy as np
rng = np.random.default_rng(0)

x = rng.normal(size=(32,))
weights = rng.normal(size=(32, 4))
bias = rng.normal(size=(4,))

x = jnp.array(x)
weights = jnp.array(weights)
bias = jnp.array(bias)

layer(x, weights, bias)

# %%
mesh = jax.make_mesh((8,), ('x',))
x_sharded = jax.device_put(x, jax.NamedSharding(mesh, P('x')))
weights_sharded = jax.device_put(weights, jax.NamedSharding(mesh, P()))

print(layer(x_sharded, weights_sharded, bias))

jax.debug.visualize_array_sharding(x_sharded)
jax.debug.visualize_array_sharding(weights_sharded)

# %%
explicit_mesh = jax.make_mesh((8,), ('X',), axis_types=(AxisType.Explicit,))

x_sharded = jax.device_put(x, jax.NamedSharding(explicit_mesh, P('X')))
jax.debug.visualize_array_sharding(x_sharded)
weights_sharded = jax.device_put(weights, jax.NamedSharding(explicit_mesh, P()))

@jax.jit
def layer_auto(x, weights, bias):
  print(f"x sharding: {jax.typeof(x)}")
  print(f"weights sharding: {jax.typeof(weights)}")
  print(f"bias sharding: {jax.typeof(bias)}")
  out = layer(x, weights, bias)
  print(f"out sharding: {jax.typeof(out)}")
  return out

with jax.sharding.use_mesh(explicit_mesh):
  layer_auto(x_sharded, weights_sharded, bias)

# %%
z = jnp.arange(32)
explicit_mesh = jax.make_mesh((8,), ('X',), axis_types=(AxisType.Explicit,))
z_sharded = jax.device_put(z, jax.NamedSharding(explicit_mesh, P('X')))
print(f"z sharding: {jax.typeof(z_sharded)}")

# %%
from functools import partial

@jax.jit
@partial(shard_map, mesh=mesh,
         in_specs=(P('x'), P('x', None), P(None)),
         out_specs=P(None))
def layer_sharded(x, weights, bias):
  print(f"x sharding: {jax.typeof(x)}")
  print(f"weights sharding: {jax.typeof(weights)}")
  print(f"bias sharding: {jax.typeof(bias)}")
  return jax.nn.sigmoid(jax.lax.psum(x @ weights, 'x') + bias)

print(layer_sharded(x, weights, bias))

print("注意到 x 的长度是32，而 mesh 的长度是8，所以 x 会被分成8份，每份的长度是4")
