# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %%
import jax.tools.colab_tpu
jax.tools.colab_tpu.setup_tpu()

# %%
from jax.lib import xla_bridge
print(xla_bridge.get_backend().platform)

# %%
import jax
jax.local_devices()

# %%
import jax.numpy as jnp
def dot(v:jax.Array,u:jax.Array):
    return jnp.vdot(v,u)

# %%
dot(jnp.ones(shape=(3,)),jnp.ones(shape=(3,)))

# %%
from jax  import random
arr = random.normal(random.PRNGKey(42),shape=(20_000_000,3))
v = arr[:10_000_000,:]
u = arr[10_000_000:,:]
v.shape,u.shape

# %%
dot_vmap = jax.vmap(dot)
res = dot_vmap(v,u)
res.shape

# %%
dot_pmap = jax.pmap(dot)
try:
    res = dot_pmap(v,u)
except ValueError as e:
    print(f"\N{Cross mark}\N{Police Cars Revolving Light}{e}")

# %%
v_parallel = v.reshape(jax.local_device_count(),-1,3)
u_parallel = u.reshape(jax.local_device_count(),-1,3)
v_parallel.shape,u_parallel.shape

# %%
res = dot_pmap(v_parallel,u_parallel)
res.shape

# %%
jax.make_jaxpr(dot_pmap)(v_parallel,u_parallel)

# %%
dot_parallel = jax.pmap(jax.vmap(dot))
res= dot_parallel(v_parallel,u_parallel)
res.shape

# %%
type(res)

# %%
# %timeit xp = dot_parallel(v_parallel,u_parallel).block_until_ready()

# %%
def dot(v1, v2):
  return jnp.vdot(v1, v2)

# %%
rng_key = random.PRNGKey(42)
vs = random.normal(rng_key, shape=(16,3))
v1s = vs[:8,:]
v2s = vs[8:,:]

# %%
jax.vmap(dot)(v1s,v2s)

# %%
jax.pmap(dot)(v1s,v2s)

# %%
dot_v = jax.jit(jax.vmap(dot))
x = dot_v(v1s,v2s)

# %%
dot_pjo = jax.jit(jax.pmap(dot))
x = dot_pjo(v1s,v2s)

# %%
dot_pji = jax.pmap(jax.jit(dot))
x = dot_pji(v1s,v2s)

# %%
dot_p = jax.pmap(dot)
x = dot_p(v1s,v2s)

# %%
# %timeit dot_v(v1s,v2s).block_until_ready()

# %%
# %timeit dot_pjo(v1s,v2s).block_until_ready()

# %%
# %timeit dot_pji(v1s,v2s).block_until_ready()

# %%
# %timeit dot_p(v1s,v2s).block_until_ready()

# %%
jax.make_jaxpr(dot_v)(v1s,v2s)

# %%
jax.make_jaxpr(dot_pjo)(v1s,v2s)

# %%
jax.make_jaxpr(dot_pji)(v1s,v2s)

# %%
jax.make_jaxpr(dot_p)(v1s,v2s)
