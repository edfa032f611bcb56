# Control flow, vmap and remat combined with sharded operands and gradients: the shardings of results and
# gradients, the values, and the collectives XLA inserts. Recorded under real JAX (8 CPU devices).
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
    return sorted(m.group(1) for m in COLLECTIVE.finditer(text))


def run(name, fn, *args):
    jf = jax.jit(fn)
    try:
        out = jf(*args)
        leaves = jax.tree.leaves(out)
        print(name, [l.shape for l in leaves], [l.sharding.spec for l in leaves], collectives(jf, *args))
        print('   ', [np.round(np.asarray(l, np.float64).ravel()[:4], 4).tolist() for l in leaves])
    except Exception as e:
        print(name, type(e).__name__, str(e)[:300])


mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
print(jax.__version__, len(jax.devices()))
a = jax.device_put(jnp.arange(64.).reshape(8, 8) / 64, NamedSharding(mesh, P('data', 'model')))
r = jax.device_put(jnp.arange(64.).reshape(8, 8) / 64, NamedSharding(mesh, P('data', None)))
w = jax.device_put(jnp.eye(8) / 2 + 0.1, NamedSharding(mesh, P(None, 'model')))
# %%
run('scan_grad_w', jax.grad(lambda w, xs: lax.scan(lambda c, x: (jnp.tanh(c @ w + x), None), jnp.zeros(8), xs)[0].sum()), w, r)
run('scan_grad_xs', jax.grad(lambda xs, w: lax.scan(lambda c, x: (jnp.tanh(c @ w + x), c.sum()), jnp.zeros(8), xs)[1].sum()), r, w)
run('scan_batch_carry', lambda a, w: lax.scan(lambda c, _: (jnp.tanh(c @ w), None), a, None, length=3)[0], a, w)
run('scan_batch_carry_r', lambda r, w: lax.scan(lambda c, _: (jnp.tanh(c @ w), None), r, None, length=3)[0], r, w)
run('scan_ys_stack', lambda r: lax.scan(lambda c, x: (c, x * c), 1., r)[1], r)
run('fori_grad', jax.grad(lambda w, r: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c @ w), r).sum()), w, r)
run('fori_carry', lambda r, w: lax.fori_loop(0, 3, lambda i, c: jnp.sin(c @ w), r), r, w)
run('while_carry', lambda a: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2, c[1] + 1), (a, 0))[0], a)
run('cond_grad', jax.grad(lambda a: lax.cond(a.sum() > 1, lambda v: (v ** 2).sum(), lambda v: v.sum(), a)), a)
run('cond_mixed', lambda a, r: lax.cond(True, lambda: a, lambda: r), a, r)
run('switch', lambda a, i: lax.switch(i, [lambda v: v, lambda v: v.T, lambda v: v * 2], a), a, 1)
run('select_n', lambda a, r: lax.select_n(a > 0.5, a, r), a, r)
# %%
run('vmap_rows', jax.vmap(lambda row: row @ jnp.ones((8, 4))), a)
run('vmap_cols', jax.vmap(lambda col: col.sum(), in_axes=1), a)
run('vmap_out1', jax.vmap(lambda row: row * 2, out_axes=1), a)
run('vmap_spmd', jax.vmap(lambda row: row * 2, spmd_axis_name='data'), r)
run('vmap_grad', jax.vmap(jax.grad(lambda row: jnp.sum(jnp.sin(row) ** 2))), a)
run('map_rows', lambda a: lax.map(lambda row: row.sum(), a), a)
run('remat_grad', jax.grad(lambda w, r: jax.checkpoint(lambda w: jnp.sin(r @ w) @ w)(w).sum()), w, r)
run('remat_policy', jax.grad(lambda w, r: jax.checkpoint(lambda w: jnp.sin(r @ w) @ w, policy=jax.checkpoint_policies.dots_saveable)(w).sum()), w, r)
run('value_and_grad', jax.value_and_grad(lambda w, r: jnp.mean((r @ w) ** 2)), w, r)
run('hessian_diag', lambda v: jnp.diag(jax.hessian(lambda v: jnp.sum(jnp.sin(v) * v))(v)), a[0])
run('jacfwd', jax.jacfwd(lambda v: jnp.sin(v) * 2), a[:, 0])
# %%
m8 = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))
u = jax.device_put(jnp.arange(16.) / 16, NamedSharding(m8, P('i')))
sm = lambda body, o=P(): jax.shard_map(body, mesh=m8, in_specs=P('i'), out_specs=o)
run('grad_sm_psum', jax.grad(lambda u: sm(lambda b: lax.psum((b ** 2).sum(), 'i'))(u)), u)
run('grad_sm_pmean', jax.grad(lambda u: sm(lambda b: lax.pmean(jnp.sin(b).sum(), 'i'))(u)), u)
run('grad_sm_gather', jax.grad(lambda u: sm(lambda b: (lax.all_gather(b, 'i', tiled=True) ** 2).sum(), P())(u)), u)
run('grad_sm_ppermute', jax.grad(lambda u: sm(lambda b: lax.ppermute(b, 'i', [(k, (k + 1) % 8) for k in range(8)]) * b, P('i'))(u).sum()), u)
run('grad_sm_scatter', jax.grad(lambda u: sm(lambda b: lax.psum_scatter(jnp.outer(b, b).ravel()[:16], 'i', tiled=True), P('i'))(u).sum()), u)
run('grad_sm_a2a', jax.grad(lambda u: (sm(lambda b: lax.all_to_all(b.reshape(8, 2) , 'i', 0, 0, tiled=True), P('i'))(jnp.tile(u, 4)) ** 2).sum()), u)
run('scan_in_sm', sm(lambda b: lax.scan(lambda c, x: (c + lax.psum(x, 'i'), None), 0., b)[0]), u)
run('cond_in_sm', sm(lambda b: lax.cond(lax.axis_index('i') < 4, lambda v: v * 2, lambda v: -v, b), P('i')), u)
