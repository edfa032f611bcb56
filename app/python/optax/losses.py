# optax.losses: the losses' home module (optax also exports them at the top level).
from optax._losses import (l2_loss, squared_error, softmax_cross_entropy,  # noqa: F401
                           softmax_cross_entropy_with_integer_labels, sigmoid_binary_cross_entropy)
