# flax.nnx: Flax's object-oriented API (Modules holding Variables, Rngs, graph split/merge, transforms, sharding
# annotations, Optimizer) in plain Python over the simulated jax; reprs as Flax 0.12 prints them.
import jax.nn as _jax_nn

from flax.nnx import reprlib, filterlib, statelib, graphlib, variablelib, pytreelib, rnglib, spmd  # noqa: F401
from flax.nnx.variablelib import (Variable, VariableMetadata, Param, BatchStat, Cache,  # noqa: F401
                                  Intermediate, Perturbation, with_metadata, use_eager_sharding,
                                  using_eager_sharding)
from flax.nnx.pytreelib import Pytree, Object, Module, data, static, register_data_type, is_data  # noqa: F401
from flax.nnx.graphlib import (GraphDef, split, merge, state, update, graphdef, clone, iter_graph,  # noqa: F401
                               NodeDef, VariableDef)
from flax.nnx.statelib import State  # noqa: F401
from flax.nnx.helpers import List, Dict  # noqa: F401
from flax.nnx.filterlib import All, Any, Not, Everything, Nothing, PathContains, WithTag, OfType  # noqa: F401
from flax.nnx.rnglib import Rngs, RngStream, RngState, RngKey, RngCount  # noqa: F401
from flax.nnx.spmd import (PARTITION_NAME, with_partitioning, get_partition_spec, get_named_sharding,  # noqa: F401
                           get_abstract_model, logical_axis_rules, get_logical_axis_rules,
                           set_logical_axis_rules)
from flax.nnx.transforms import jit, grad, value_and_grad, eval_shape, vmap, remat  # noqa: F401
from flax.nnx import nn  # noqa: F401
from flax.nnx.nn import initializers  # noqa: F401
from flax.nnx.nn.linear import Linear, Embed, Conv  # noqa: F401
from flax.linen.pooling import pool, avg_pool, max_pool, min_pool  # noqa: F401
from flax.nnx.nn.normalization import LayerNorm, RMSNorm  # noqa: F401
from flax.nnx.nn.stochastic import Dropout  # noqa: F401
from flax.nnx.training.optimizer import Optimizer, OptState, OptArray, OptVariable  # noqa: F401
from flax.nnx import training  # noqa: F401
from flax.nnx.variablelib import register_variable_name, variable_type_from_name, variable_name_from_type  # noqa
from flax.nnx.rnglib import reseed, split_rngs, restore_rngs, SplitBackups  # noqa: F401
from flax.nnx.nn.lora import LoRA, LoRAParam  # noqa: F401
from flax.nnx import bridge  # noqa: F401


def display(*args):
    """Flax prints each object when treescope is not there to render it."""
    for x in args:
        print(x)


def pure(tree):
    """The tree with every Variable replaced by its value."""
    import jax
    return jax.tree.map(lambda x: x.get_value() if isinstance(x, Variable) else x, tree,
                        is_leaf=lambda x: isinstance(x, Variable))


def __getattr__(name):
    import _shardscope
    from flax import _versions
    # Flax 0.12.10 (paired with jax 0.11) no longer exports nnx.with_sharding_constraint, keeps VariableState as a
    # deprecated alias of Variable, and words a missing name its own way.
    newest = _versions.flax_version() >= (0, 12, 10)
    if name == 'with_sharding_constraint' and not newest:
        from flax.nnx.spmd import with_sharding_constraint
        return with_sharding_constraint
    if name == 'VariableState':
        if newest:
            import warnings
            warnings.warn("'VariableState' was removed, this is just an alias to 'Variable'. Plase use 'Variable' "
                          "directly instead.", DeprecationWarning, stacklevel=2)
        return Variable
    # Activations (nnx.relu, nnx.gelu, ...) are jax.nn's.
    # (jax.nn raises NotImplementedError for a name it does not simulate, which hasattr would let through.)
    if not name.startswith('_') and hasattr(_shardscope.nn, name):
        return getattr(_jax_nn, name)
    if newest:
        raise AttributeError(f"Module flax.nnx has no attribute '{name}'")
    raise AttributeError(f"module 'flax.nnx' has no attribute '{name}'")
