# optax's common losses, written as optax writes them so that they trace to the same jnp ops (and so shard the
# same way): squared and L2 errors, softmax cross-entropy with one-hot or integer labels, sigmoid binary
# cross-entropy.
import jax
import jax.numpy as jnp


def _check_float(name, value):
    if not jnp.issubdtype(jnp.asarray(value).dtype, jnp.floating):
        raise AssertionError(f'[Chex] Assertion assert_type failed: Error in type compatibility check: input 0 has '
                             f'type {jnp.asarray(value).dtype} but expected {name}.')


def squared_error(predictions, targets=None):
    """(predictions - targets) ** 2 elementwise; predictions ** 2 without targets."""
    errors = predictions - targets if targets is not None else predictions
    return errors ** 2


def l2_loss(predictions, targets=None):
    """Half the squared error, elementwise."""
    return 0.5 * squared_error(predictions, targets)


def softmax_cross_entropy(logits, labels, axis=-1, where=None):
    """-sum(labels * log_softmax(logits)) along `axis`, labels a distribution over classes."""
    _check_float('<class \'jax.numpy.floating\'>', logits)
    log_probs = jax.nn.log_softmax(logits, axis, where=where)
    if where is None:
        return -(labels * log_probs).sum(axis)
    return -(labels * log_probs).sum(axis, where=where)


def softmax_cross_entropy_with_integer_labels(logits, labels, axis=-1, where=None):
    """log(sum(exp(logits))) - logits[label] along `axis`, labels integer class indices.

    As optax computes it: the max is subtracted (without gradient) for stability, the label's logit is taken with
    take_along_axis, and the normalizer is subtracted only from it.
    """
    _check_float('<class \'jax.numpy.floating\'>', logits)
    if not jnp.issubdtype(jnp.asarray(labels).dtype, jnp.integer):
        raise AssertionError(f'[Chex] Assertion assert_type failed: Error in type compatibility check: input 0 has '
                             f'type {jnp.asarray(labels).dtype} but expected <class \'jax.numpy.integer\'>.')
    if isinstance(axis, int):
        axis = axis % logits.ndim
    if where is None:
        logits_max = jnp.max(logits, axis, keepdims=True)
    else:
        logits_max = jnp.max(logits, axis, keepdims=True, where=where, initial=-jnp.inf)
    logits = logits - jax.lax.stop_gradient(logits_max)
    label_logits = jnp.take_along_axis(logits, jnp.expand_dims(labels, axis), axis=axis).take(0, axis=axis)
    if where is None:
        log_normalizers = jnp.log(jnp.sum(jnp.exp(logits), axis=axis))
    else:
        log_normalizers = jnp.log(jnp.sum(jnp.exp(logits), axis=axis, where=where))
    return log_normalizers - label_logits


def sigmoid_binary_cross_entropy(logits, labels):
    """-labels * log(sigmoid(logits)) - (1 - labels) * log(1 - sigmoid(logits)), elementwise."""
    _check_float('<class \'jax.numpy.floating\'>', logits)
    log_p = jax.nn.log_sigmoid(logits)
    log_not_p = jax.nn.log_sigmoid(-logits)
    return -labels * log_p - (1.0 - labels) * log_not_p
