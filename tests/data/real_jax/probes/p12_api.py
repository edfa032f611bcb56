# API corners JAX users reach for: ClosedJaxpr's attributes, eval_shape under meshes, Sharding methods,
# typed keys, tree utilities, pytrees of shardings. Recorded under real JAX (8 CPU devices).
# %%
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding, AxisType

mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
x = jax.device_put(jnp.arange(32.).reshape(8, 4), NamedSharding(mesh, P('data', None)))
# %%
cj = jax.make_jaxpr(lambda a, b: jnp.sin(a) * b + 1.0)(jnp.ones(3), 2.0)
print(type(cj).__name__, type(cj.jaxpr).__name__)
print(cj.in_avals, cj.out_avals, cj.consts, cj.literals if hasattr(cj, 'literals') else None)
print(cj.jaxpr.invars, cj.jaxpr.outvars, cj.jaxpr.constvars)
print(len(cj.eqns), [e.primitive.name for e in cj.eqns])
e0 = cj.eqns[0]
print(e0.primitive, e0.invars, e0.outvars, e0.params, type(e0.primitive).__name__)
print(e0)
print(cj.jaxpr.eqns[2].invars, [type(v).__name__ for v in cj.jaxpr.eqns[2].invars])
# %%
cj2 = jax.make_jaxpr(lambda a: a + jnp.arange(3.))(jnp.ones(3))
print(cj2.consts, cj2.jaxpr.constvars)
print(cj2)
print(repr(cj2.in_avals[0]), cj2.in_avals[0].shape, cj2.in_avals[0].dtype, cj2.in_avals[0].ndim)
print(cj2.jaxpr.invars[0].aval, cj2.jaxpr.outvars[0].aval)
# %%
cj3 = jax.make_jaxpr(lambda a: jax.jit(lambda b: b * 2)(a) + 1)(jnp.ones(3))
eq = cj3.eqns[0]
print(eq.primitive.name, sorted(eq.params.keys()))
print(type(eq.params['jaxpr']).__name__, eq.params['jaxpr'])
print(jax.make_jaxpr(lambda a: a.sum(), return_shape=True)(jnp.ones((2, 3))))
# %%
s = NamedSharding(mesh, P('data', None))
print(s.num_devices, len(s.device_set), len(s.addressable_devices), s.shard_shape((8, 4)), s.is_fully_replicated,
      s.is_fully_addressable, s.memory_kind, s.is_equivalent_to(NamedSharding(mesh, P('data')), 2))
print(s.with_memory_kind('device'))
print(list(s.devices_indices_map((8, 4)).items())[:3])
print(s.addressable_devices_indices_map((8, 4))[jax.devices()[1]])
print(jax.sharding.SingleDeviceSharding(jax.devices()[0]), jax.sharding.SingleDeviceSharding(jax.devices()[0]).num_devices)
print(s._to_xla_hlo_sharding(2) if hasattr(s, '_to_xla_hlo_sharding') else None)
print(hash(s) == hash(NamedSharding(mesh, P('data', None))), s == NamedSharding(mesh, P('data')))
# %%
print(jax.eval_shape(lambda a: a @ a.T, x))
print(jax.eval_shape(lambda a: a.sum(0), x).sharding)
em = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Explicit, AxisType.Explicit))
xe = jax.device_put(jnp.arange(32.).reshape(8, 4), NamedSharding(em, P('data', None)))
print(jax.eval_shape(lambda a: a * 2, xe))
print(jax.eval_shape(lambda a: a.sum(0), xe).sharding)
print(jax.typeof(xe), jax.typeof(xe * 2), jax.typeof(xe).sharding)
sds = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(em, P('data', None)))
print(jax.eval_shape(lambda a: a.T, sds))
# %%
k = jax.random.key(0)
print(k, k.shape, k.dtype, jax.random.key_data(k), jax.random.key_impl(k))
ks = jax.random.split(k, 3)
print(ks.shape, ks, jax.random.key_data(ks).shape)
print(jax.random.wrap_key_data(jnp.array([0, 7], dtype=jnp.uint32)))
print(jax.random.normal(ks[1], (3,)))
print(jax.random.PRNGKey(0), jax.random.fold_in(k, 5))
print(jnp.issubdtype(k.dtype, jax.dtypes.prng_key), jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key))
print(jax.random.bits(k, (2,)), jax.random.randint(k, (3,), 0, 10), jax.random.choice(k, 5, (3,), replace=False))
print(jax.random.permutation(k, 6), jax.random.bernoulli(k, 0.5, (4,)), jax.random.categorical(k, jnp.zeros(4), shape=(3,)))
# %%
tree = {'a': jnp.ones((2, 3)), 'b': [jnp.zeros(4), (1, 2.5)], 'c': None}
print(jax.tree_util.tree_structure(tree))
print(jax.tree.leaves(tree), jax.tree.map(lambda v: jnp.shape(v), tree))
print(jax.tree_util.tree_flatten_with_path(tree)[0][:2])
print(jax.tree_util.keystr(jax.tree_util.tree_flatten_with_path(tree)[0][1][0]))
print(jax.tree.reduce(lambda p, q: p + jnp.size(q), tree, 0), jax.tree_util.tree_all(jax.tree.map(lambda v: True, tree)))
print(jax.tree.transpose(jax.tree.structure([0, 0]), jax.tree.structure((0, 0)), [(1, 2), (3, 4)]))
print(jax.tree_util.tree_map_with_path(lambda p, v: jax.tree_util.keystr(p), {'x': [1, 2]}))
# %%
shard_tree = jax.tree.map(lambda v: v.sharding, {'x': x, 'y': x.T})
print(shard_tree)
print(jax.device_get({'x': x[:2]}), jax.device_get(3))
print(x.addressable_shards[1], x.addressable_shards[1].index, x.global_shards[5].device)
print(x.addressable_data(2), x.is_fully_addressable, x.is_fully_replicated, x.committed)
print(jax.jit(lambda a: a * 2)(x).committed, (x * 2).committed, jnp.ones(3).committed)
# %%
print(jnp.allclose(x, x + 1e-9), jnp.isclose(jnp.array([1., jnp.nan]), jnp.array([1., jnp.nan]), equal_nan=True), jnp.array_equal(x, x))
print(jax.nn.gelu(jnp.array([-1., 0., 1.]), approximate=False), jax.nn.silu(jnp.array([1.])), jax.nn.one_hot(jnp.array([0, 2]), 3))
print(jax.nn.log_softmax(jnp.array([1., 2., 3.])), jax.nn.logsumexp(jnp.array([1., 2.])), jax.nn.standardize(jnp.arange(4.)))
print(jnp.einsum('bij->jb', jnp.arange(24.).reshape(2, 3, 4)).shape, jnp.linalg.norm(jnp.arange(4.)), jnp.clip(jnp.arange(5), 1, 3))
print(jax.lax.axis_size if hasattr(jax.lax, 'axis_size') else None)
