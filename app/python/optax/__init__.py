# shardscope's `optax`: gradient transformations (adam, adamw, sgd, chain) whose states are pytrees shaped like
# the parameters, so they shard like them, and the common losses.
from optax._transforms import (GradientTransformation, GradientTransformationExtraArgs, EmptyState,  # noqa: F401
                               ScaleByAdamState, TraceState, ScaleByScheduleState, chain, identity,
                               scale, scale_by_adam, scale_by_learning_rate, scale_by_schedule, trace,
                               add_decayed_weights, apply_updates, adam, adamw, sgd)
from optax._losses import (l2_loss, squared_error, softmax_cross_entropy,  # noqa: F401
                           softmax_cross_entropy_with_integer_labels, sigmoid_binary_cross_entropy)
from optax import losses  # noqa: F401
from optax import tree_utils  # noqa: F401


def __getattr__(name):
    # The optax release of the profile's months: 0.2.8 next to jax 0.11, 0.2.4 before.
    if name == '__version__':
        import _shardscope
        return '0.2.8' if _shardscope.jax_version_info() >= (0, 11) else '0.2.4'
    raise AttributeError(f"module 'optax' has no attribute '{name}'")
