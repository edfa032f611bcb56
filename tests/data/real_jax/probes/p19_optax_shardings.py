# Optimizer states of sharded parameters: where optax puts them (eagerly and under jit), what an update step
# returns, and how zeros_like/ones_like/full_like place new arrays. Recorded under real JAX (8 CPU devices).
# %%
import numpy as np
import jax
import jax.numpy as jnp
import optax
from jax.sharding import PartitionSpec as P, NamedSharding, AxisType

mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
params = {'w': jax.device_put(jnp.ones((8, 4)) / 8, NamedSharding(mesh, P('data', 'model'))),
          'b': jax.device_put(jnp.zeros(4), NamedSharding(mesh, P('model')))}
print(jax.__version__)


def show(tree):
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        sharding = getattr(leaf, 'sharding', None)
        spec = getattr(sharding, 'spec', type(sharding).__name__)
        print(' ', jax.tree_util.keystr(path), getattr(leaf, 'shape', None), getattr(leaf, 'dtype', None), spec)
# %%
for name, fn in [('zeros_like', jnp.zeros_like), ('ones_like', jnp.ones_like), ('full_like', lambda a: jnp.full_like(a, 3.)),
                 ('empty_like', jnp.empty_like), ('zeros_like_i32', lambda a: jnp.zeros_like(a, dtype=jnp.int32)),
                 ('zeros_like_shape', lambda a: jnp.zeros_like(a, shape=(2,))), ('scalar', lambda a: jnp.zeros_like(1.0))]:
    print(name)
    show(jax.tree.map(fn, params))
# %%
for name, opt in [('sgd', optax.sgd(0.1)), ('momentum', optax.sgd(0.1, momentum=0.9)), ('adam', optax.adam(1e-3)),
                  ('adamw', optax.adamw(1e-3))]:
    state = opt.init(params)
    print(name, 'eager init')
    show(state)
    jstate = jax.jit(opt.init)(params)
    print(name, 'jit init')
    show(jstate)
# %%
opt = optax.adam(1e-2)
state = opt.init(params)
x = jax.device_put(jnp.arange(32.).reshape(4, 8) / 32, NamedSharding(mesh, P(None, 'data')))


@jax.jit
def step(params, state, x):
    loss, grads = jax.value_and_grad(lambda p: jnp.mean((x @ p['w'] + p['b']) ** 2))(params)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


new_params, new_state, loss = step(params, state, x)
print('loss', np.round(float(loss), 5))
show(new_params)
show(new_state)
print(np.round(np.asarray(new_params['w'])[0], 5).tolist())
