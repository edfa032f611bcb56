# jax.experimental.multihost_utils for one process: every device is local, so gathering, broadcasting and
# converting between host-local and global arrays need no communication. Presets whose devices span several
# processes raise NotImplementedError naming the function (the simulation runs one process).
import numpy as np

import jax
from jax._src import tree as _tree
from jax.sharding import NamedSharding, PartitionSpec


def _one_process(name):
    if jax.process_count() != 1:
        raise NotImplementedError(f'jax.experimental.multihost_utils.{name} over {jax.process_count()} processes is '
                                  'not supported by shardscope')


def broadcast_one_to_all(in_tree, is_source=None):
    """Host 0's values everywhere; with one process, the values themselves as numpy arrays."""
    _one_process('broadcast_one_to_all')
    return jax.tree.map(np.asarray, in_tree)


def process_allgather(in_tree, tiled=False):
    """Every process's values stacked on a new leading axis (or concatenated with tiled=True); one process
    contributes the whole value. A scalar gains the axis only when not tiled, as in JAX."""
    _one_process('process_allgather')

    def gather(leaf):
        out = np.asarray(leaf)
        return out if tiled else np.expand_dims(out, axis=0)
    return jax.tree.map(gather, in_tree)


def assert_equal(in_tree, fail_message=''):
    """Checks that every process holds the same values: one process always does."""
    _one_process('assert_equal')
    process_allgather(in_tree, tiled=True)


def sync_global_devices(name):
    """A barrier across processes: nothing to wait for with one."""
    _one_process('sync_global_devices')


def _spec_leaves(tree, pspecs):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    specs = _tree.broadcast_prefix(pspecs, tree, is_leaf=lambda x: x is None or isinstance(x, PartitionSpec))
    return leaves, treedef, [PartitionSpec() if s is None else s for s in specs]


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """The global arrays the processes' local pieces form; with one process the local data is the whole array,
    laid out over `global_mesh` by each leaf's spec."""
    _one_process('host_local_array_to_global_array')
    leaves, treedef, specs = _spec_leaves(local_inputs, pspecs)
    placed = [jax.device_put(leaf, NamedSharding(global_mesh, spec)) for leaf, spec in zip(leaves, specs)]
    return jax.tree_util.tree_unflatten(treedef, placed)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """Each process's piece of the global arrays; with one process, the whole arrays over `global_mesh`."""
    _one_process('global_array_to_host_local_array')
    leaves, treedef, specs = _spec_leaves(global_inputs, pspecs)
    placed = [jax.device_put(leaf, NamedSharding(global_mesh, spec)) for leaf, spec in zip(leaves, specs)]
    return jax.tree_util.tree_unflatten(treedef, placed)


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.experimental.multihost_utils.{name} is not supported by shardscope')
