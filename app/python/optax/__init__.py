# shardscope's `optax`: gradient transformations (adam, adamw, sgd, chain) whose states are pytrees shaped like
# the parameters, so they shard like them.
from optax._transforms import (GradientTransformation, GradientTransformationExtraArgs, EmptyState,  # noqa: F401
                               ScaleByAdamState, TraceState, ScaleByScheduleState, chain, identity,
                               scale, scale_by_adam, scale_by_learning_rate, scale_by_schedule, trace,
                               add_decayed_weights, apply_updates, adam, adamw, sgd)
from optax import tree_utils  # noqa: F401

__version__ = '0.2.4'
