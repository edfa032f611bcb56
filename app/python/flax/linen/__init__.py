# flax.linen: modules, Dense, initializers, lifted scan and the partitioning API (boxes, logical axis rules).
from flax.core import meta  # noqa: F401
from flax.core.meta import (Partitioned, with_partitioning, get_partition_spec, get_sharding,  # noqa: F401
                            PARTITION_NAME, unbox, AxisMetadata)
from flax.core.frozen_dict import FrozenDict  # noqa: F401
from flax.linen import initializers, spmd  # noqa: F401
from flax.linen.module import Module, compact, nowrap, merge_param  # noqa: F401
from flax.linen.initializers import zeros_init, ones_init, zeros, ones  # noqa: F401
from flax.linen.stochastic import Dropout  # noqa: F401
from flax.linen.scope import Variable  # noqa: F401
from flax.linen.linear import Dense, Conv, DenseGeneral, Einsum, ConvTranspose, Embed, PReLU  # noqa: F401
from flax.linen.normalization import BatchNorm, LayerNorm, RMSNorm, GroupNorm, InstanceNorm, normalize  # noqa: F401
from flax.linen.attention import (MultiHeadDotProductAttention, MultiHeadAttention, SelfAttention,  # noqa: F401
                                  dot_product_attention, dot_product_attention_weights, make_attention_mask,
                                  make_causal_mask, combine_masks)
from flax.linen.combinators import Sequential  # noqa: F401
from flax.linen.pooling import pool, avg_pool, max_pool, min_pool  # noqa: F401
from flax.linen.transforms import scan, vmap, map_variables, checkpoint, remat  # noqa: F401
from flax.linen.spmd import (LogicallyPartitioned, with_logical_partitioning, with_logical_constraint,  # noqa: F401
                             logical_axis_rules, get_logical_axis_rules, set_logical_axis_rules,
                             logical_to_mesh_axes, logical_to_mesh, logical_to_mesh_sharding, RulesFallback)


_ACTIVATIONS = ('relu', 'relu6', 'gelu', 'sigmoid', 'silu', 'swish', 'softmax', 'log_softmax', 'softplus',
                'logsumexp', 'one_hot', 'tanh', 'celu', 'elu', 'glu', 'hard_sigmoid', 'hard_silu', 'hard_swish',
                'hard_tanh', 'leaky_relu', 'log_sigmoid', 'selu', 'soft_sign', 'standardize')


def __getattr__(name):
    # Activations (nn.relu, nn.gelu, ...) are jax.nn's, looked up when used.
    if name in _ACTIVATIONS:
        import jax.nn
        return getattr(jax.nn, name)
    raise AttributeError(f"module 'flax.linen' has no attribute '{name}'")
