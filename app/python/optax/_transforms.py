# optax's GradientTransformation protocol, the transforms Adam and SGD are chained from, and their aliases.
import typing

from optax import tree_utils as otu


class GradientTransformation(typing.NamedTuple):
    init: typing.Callable
    update: typing.Callable


class GradientTransformationExtraArgs(GradientTransformation):
    """An update function that accepts extra keyword arguments (optax's chain returns this)."""


class EmptyState(typing.NamedTuple):
    pass


class ScaleByAdamState(typing.NamedTuple):
    count: typing.Any
    mu: typing.Any
    nu: typing.Any


class TraceState(typing.NamedTuple):
    trace: typing.Any


class ScaleByScheduleState(typing.NamedTuple):
    count: typing.Any


def _chain_result(init, update):
    from flax import _versions
    kind = GradientTransformationExtraArgs if _versions.optax_chain_has_extra_args() else GradientTransformation
    return kind(init, update)


def chain(*transforms):
    """Applies `transforms` in order; the state is one inner state per transform, in a tuple."""
    def init_fn(params):
        return tuple(transform.init(params) for transform in transforms)

    def update_fn(updates, state, params=None, **extra_args):
        if len(state) != len(transforms):
            raise ValueError('The number of updates and states has to be the same in chain! Make sure you have '
                             'called init first!')
        states_after = []
        for transform, inner_state in zip(transforms, state):
            updates, inner_state = transform.update(updates, inner_state, params)
            states_after.append(inner_state)
        return updates, tuple(states_after)

    return _chain_result(init_fn, update_fn)


def identity():
    return GradientTransformation(lambda params: EmptyState(), lambda updates, state, params=None: (updates, state))


def _safe_increment(count):
    import numpy as np
    import jax.numpy as jnp
    limit = jnp.array(np.iinfo(count.dtype).max, count.dtype)
    return jnp.where(count < limit, count + jnp.array(1, count.dtype), limit)


def scale(step_size):
    def update_fn(updates, state, params=None):
        return otu._map(lambda g: step_size * g, updates), state
    return GradientTransformation(lambda params: EmptyState(), update_fn)


def scale_by_schedule(step_size_fn):
    def init_fn(params):
        import jax.numpy as jnp
        return ScaleByScheduleState(count=jnp.zeros([], jnp.int32))

    def update_fn(updates, state, params=None):
        factor = step_size_fn(state.count)
        return otu._map(lambda g: factor * g, updates), ScaleByScheduleState(count=_safe_increment(state.count))
    return GradientTransformation(init_fn, update_fn)


def scale_by_learning_rate(learning_rate, *, flip_sign=True):
    sign = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: sign * learning_rate(count))
    return scale(sign * learning_rate)


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *, nesterov=False):
    def init_fn(params):
        import jax.numpy as jnp
        mu = otu.tree_zeros_like(params, dtype=mu_dtype)
        nu = otu.tree_zeros_like(params)
        return ScaleByAdamState(count=jnp.zeros([], jnp.int32), mu=mu, nu=nu)

    def update_fn(updates, state, params=None):
        import jax.numpy as jnp
        mu = otu.tree_update_moment(updates, state.mu, b1, 1)
        nu = otu.tree_update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count = _safe_increment(state.count)
        if nesterov:
            mu_hat = otu._map(lambda m, g: b1 * m + (1 - b1) * g,
                              otu.tree_bias_correction(mu, b1, _safe_increment(count)),
                              otu.tree_bias_correction(updates, b1, count))
        else:
            mu_hat = otu.tree_bias_correction(mu, b1, count)
        nu_hat = otu.tree_bias_correction(nu, b2, count)
        updates = otu._map(lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return updates, ScaleByAdamState(count=count, mu=otu.tree_cast(mu, mu_dtype), nu=nu)
    return GradientTransformation(init_fn, update_fn)


def trace(decay, nesterov=False, accumulator_dtype=None):
    def init_fn(params):
        return TraceState(trace=otu.tree_zeros_like(params, dtype=accumulator_dtype))

    def update_fn(updates, state, params=None):
        new_trace = otu._map(lambda g, t: g + decay * t, updates, state.trace)
        out = otu._map(lambda g, t: g + decay * t, updates, new_trace) if nesterov else new_trace
        return out, TraceState(trace=otu.tree_cast(new_trace, accumulator_dtype))
    return GradientTransformation(init_fn, update_fn)


def add_decayed_weights(weight_decay=0.0, mask=None):
    def update_fn(updates, state, params=None):
        if params is None:
            raise ValueError('You are using a transformation that requires the current value of parameters, but '
                             'you are not passing `params` when calling `update`.')
        return otu._map(lambda g, p: g + weight_decay * p, updates, params), state
    if mask is not None:
        raise NotImplementedError('optax.add_decayed_weights with a mask is not supported by shardscope yet')
    return GradientTransformation(lambda params: EmptyState(), update_fn)


def apply_updates(params, updates):
    import jax.numpy as jnp
    return otu._map(lambda p, u: jnp.asarray(p + u).astype(jnp.asarray(p).dtype), params, updates)


def adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *, nesterov=False):
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, weight_decay=1e-4, mask=None,
          *, nesterov=False):
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def sgd(learning_rate, momentum=None, nesterov=False, accumulator_dtype=None):
    first = trace(decay=momentum, nesterov=nesterov, accumulator_dtype=accumulator_dtype) if momentum is not None \
        else identity()
    return chain(first, scale_by_learning_rate(learning_rate))
