# Explicit sharding (jax.make_mesh's default since 0.9): the types jax.typeof gives each op's result, the errors
# for ambiguous shardings, and reshard/auto_axes; recorded for the engine's explicit rules.
# %%
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding, AxisType, reshard
print(jax.__version__)
mesh = jax.make_mesh((4, 2), ('x', 'y'))
print(mesh)
def show(name, fn, *args):
    try:
        out = jax.jit(fn)(*args)
        outs = out if isinstance(out, tuple) else (out,)
        print(name, [str(jax.typeof(o)) for o in outs])
    except Exception as ex:
        print(name, type(ex).__name__, str(ex)[:300])
# %%
with jax.set_mesh(mesh):
    a = jax.device_put(jnp.arange(64.).reshape(8, 8), P('x', 'y'))
    r = jax.device_put(jnp.arange(64.).reshape(8, 8), P('x', None))
    v = jax.device_put(jnp.arange(8.), P('x'))
    for name, fn in [('add', lambda a: a + 1), ('T', lambda a: a.T), ('sum0', lambda a: a.sum(0)), ('sum1', lambda a: a.sum(1)),
                     ('sumall', lambda a: a.sum()), ('reshape64', lambda a: a.reshape(64)), ('reshape_4_16', lambda a: a.reshape(4, 16)),
                     ('reshape_8_2_4', lambda a: a.reshape(8, 2, 4)), ('slice', lambda a: a[:4]), ('slice7', lambda a: a[:7]),
                     ('index', lambda a: a[3]), ('cols', lambda a: a[:, 1:5]), ('bcast', lambda a: a[None] * jnp.ones((3, 1, 1))),
                     ('expand', lambda a: a[:, None, :]), ('concat0', lambda a: jnp.concatenate([a, a], 0)),
                     ('concat1', lambda a: jnp.concatenate([a, a], 1)), ('pad', lambda a: jnp.pad(a, 1)), ('roll', lambda a: jnp.roll(a, 1, 0)),
                     ('cumsum0', lambda a: jnp.cumsum(a, 0)), ('cumsum1', lambda a: jnp.cumsum(a, 1)), ('argmax', lambda a: jnp.argmax(a, 1)),
                     ('where', lambda a: jnp.where(a > 3, a, 0.)), ('astype', lambda a: a.astype(jnp.int32)), ('rev', lambda a: a[::-1]),
                     ('softmax', lambda a: jax.nn.softmax(a, -1)), ('mean_keep', lambda a: a.mean(1, keepdims=True)),
                     ('outer', lambda a: a[:, :, None] * a[:, None, :]), ('iota_add', lambda a: a + jnp.arange(8.)),
                     ('take', lambda a: jnp.take(a, jnp.array([1, 3]), axis=1)), ('gather', lambda a: a[jnp.array([0, 5])]),
                     ('at_set', lambda a: a.at[0].set(1.)), ('sort', lambda a: jnp.sort(a, 1)), ('dus', lambda a: lax.dynamic_update_slice(a, jnp.ones((2, 8)), (2, 0)))]:
        show(name, fn, a)
# %%
with jax.set_mesh(mesh):
    for name, fn in [('matmul_ok', lambda a, b: a @ b), ('matmul_T', lambda a, b: a @ b.T), ('einsum_out', lambda a, b: jnp.einsum('ij,jk->ik', a, b, out_sharding=P('x', None))),
                     ('dot_general_out', lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=P('x', 'y'))),
                     ('add_mismatch', lambda a, b: a + b), ('reshard_then', lambda a, b: a @ reshard(b, P('y', None))),
                     ('vec_dot', lambda a, b: a @ b[:, 0])]:
        show(name, fn, a, r)
    show('vv', lambda v: v @ v, v)
    show('outer_v', lambda v: jnp.outer(v, v), v)
# %%
with jax.set_mesh(mesh):
    print(jax.typeof(a), jax.typeof(reshard(a, P(None, 'x'))), jax.typeof(reshard(a, P())))
    f = jax.jit(lambda t: jax.sharding.auto_axes(lambda u: u * 2, out_sharding=P('x', 'y'))(t))
    print(jax.typeof(f(a)))
    print(jax.make_jaxpr(lambda t: (t @ t.T).sum(0))(a))
# %%
with jax.set_mesh(mesh):
    w = jax.device_put(jnp.ones((8, 16)), P(None, 'y'))
    x = jax.device_put(jnp.ones((4, 8)), P('x', None))
    def loss(w, x):
        return jnp.mean(jax.nn.relu(x @ w) ** 2)
    g = jax.jit(jax.grad(loss))(w, x)
    print(jax.typeof(g), g.sharding.spec)
    print(jax.make_jaxpr(jax.grad(loss))(w, x))
