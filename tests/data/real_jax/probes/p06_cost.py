# What XLA's cost and memory analysis reports for small sharded programs.
# %%
import re
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding, AxisType

COLLECTIVE = re.compile(r"\b(all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)(-start)?\(")


def collectives(fn, *args):
    text = fn.lower(*args).compile().as_text()
    found = sorted(m.group(1) for m in COLLECTIVE.finditer(text))
    return found


def spec(a):
    return a.sharding.spec


mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
x = jax.device_put(jnp.arange(32.).reshape(8, 4) / 16, NamedSharding(mesh, P('data', None)))
w = jax.device_put(jnp.arange(24.).reshape(4, 6) / 16 - 0.5, NamedSharding(mesh, P(None, 'model')))
print(jax.__version__, len(jax.devices()))
# %%
a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))
def show_cost(fn, *args):
    c = jax.jit(fn).lower(*args).compile()
    ca = c.cost_analysis()
    if isinstance(ca, list):
        ca = ca[0]
    keys = sorted(k for k in ca if not k.startswith('utilization'))
    print({k: ca[k] for k in keys})
    ma = c.memory_analysis()
    print(ma)
    lo = jax.jit(fn).lower(*args).cost_analysis()
    print(lo if not isinstance(lo, dict) else {k: lo[k] for k in sorted(lo) if not k.startswith('utilization')})
# %%
show_cost(lambda t: t @ t, a)
# %%
show_cost(lambda t: jnp.sin(t).sum(), a)
# %%
show_cost(lambda t: t * 2 + 1, a)
# %%
show_cost(lambda t: t @ t, jnp.ones((256, 256)))
# %%
show_cost(lambda t, u: jnp.einsum('bij,bjk->bik', t, u), jnp.ones((4, 32, 16)), jnp.ones((4, 16, 8)))
# %%
show_cost(lambda t: jax.nn.softmax(t), jnp.ones((128, 64)))
