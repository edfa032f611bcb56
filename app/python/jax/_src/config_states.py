# jax.enable_x64, jax.debug_infs and JAX's other config context managers: each is a State over one jax.config
# option, readable through .value, usable as `with jax.log_compiles(True):` or as a decorator.
import functools

_NO_DEFAULT = object()


class State:
    """One config option as a context manager factory (JAX's config.State): calling it with a value gives a context
    that sets the option for the block and restores the previous value after it."""

    def __init__(self, option, *, context_default=_NO_DEFAULT, values=None):
        self._option = option
        self._context_default = context_default
        self._values = values  # the accepted values of an enum option, None for any value
        self.__name__ = option[4:] if option.startswith('jax_') else option

    @property
    def name(self):
        return self._option

    @property
    def value(self):
        from jax.config import config
        return config.read(self._option)

    def __bool__(self):
        raise TypeError(f"bool() not supported for instances of type '{type(self).__name__}' (did you mean to use "
                        f"'{type(self).__name__}.value' instead?)")

    def __call__(self, new_val=_NO_DEFAULT):
        return _StateContext(self, new_val)

    def __repr__(self):
        return f'<jax State {self._option}={self.value!r}>'

    def _parse(self, new_val):
        if self._context_default is True:  # a boolean option
            return bool(new_val)
        if self._values is not None and new_val is not None and str(new_val) not in self._values:
            raise ValueError(f'new enum value must be in {list(self._values)}, got {new_val} of type '
                             f'{type(new_val)}.')
        return new_val


class _StateContext:
    def __init__(self, state, new_val):
        if new_val is _NO_DEFAULT:
            if state._context_default is _NO_DEFAULT:
                raise TypeError(f'Context manager for {state.__name__} config option requires an argument '
                                'representing the new value for the config option.')
            new_val = state._context_default
        self.state, self.new_val = state, state._parse(new_val)
        self.prev = None

    def __enter__(self):
        from jax.config import config
        self.prev = config.read(self.state.name)
        config.update(self.state.name, self.new_val)

    def __exit__(self, *exc):
        from jax.config import config
        config.update(self.state.name, self.prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _StateContext(self.state, self.new_val):
                return func(*args, **kwargs)
        return wrapper


_TRANSFER_LEVELS = ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit')

# jax.<name>: (the option, the first JAX release whose top-level jax exports it, and the State's options).
_BOOLEAN = {'context_default': True}
STATES = {
    'enable_checks': ('jax_enable_checks', (0, 2, 21), _BOOLEAN),
    'check_tracer_leaks': ('jax_check_tracer_leaks', (0, 2, 21), _BOOLEAN),
    'enable_custom_prng': ('jax_enable_custom_prng', (0, 2, 21), _BOOLEAN),
    'debug_nans': ('jax_debug_nans', (0, 2, 21), _BOOLEAN),
    'debug_infs': ('jax_debug_infs', (0, 2, 21), _BOOLEAN),
    'log_compiles': ('jax_log_compiles', (0, 2, 21), _BOOLEAN),
    'numpy_rank_promotion': ('jax_numpy_rank_promotion', (0, 2, 21), {'values': ('allow', 'warn', 'raise')}),
    'default_prng_impl': ('jax_default_prng_impl', (0, 2, 21),
                          {'values': ('threefry2x32', 'threefry4x32', 'rbg', 'unsafe_rbg', 'philox2x32',
                                      'philox4x32')}),
    'jax2tf_associative_scan_reductions': ('jax2tf_associative_scan_reductions', (0, 2, 27), _BOOLEAN),
    'transfer_guard_host_to_device': ('jax_transfer_guard_host_to_device', (0, 3, 0), {'values': _TRANSFER_LEVELS}),
    'transfer_guard_device_to_device': ('jax_transfer_guard_device_to_device', (0, 3, 0),
                                        {'values': _TRANSFER_LEVELS}),
    'transfer_guard_device_to_host': ('jax_transfer_guard_device_to_host', (0, 3, 0), {'values': _TRANSFER_LEVELS}),
    'default_device': ('jax_default_device', (0, 3, 14), {}),
    'numpy_dtype_promotion': ('jax_numpy_dtype_promotion', (0, 3, 14), {'values': ('standard', 'strict')}),
    'softmax_custom_jvp': ('jax_softmax_custom_jvp', (0, 4, 9), _BOOLEAN),
    'legacy_prng_key': ('jax_legacy_prng_key', (0, 4, 15), {'values': ('allow', 'warn', 'error')}),
    'threefry_partitionable': ('jax_threefry_partitionable', (0, 4, 20), _BOOLEAN),
    'debug_key_reuse': ('jax_debug_key_reuse', (0, 4, 26), _BOOLEAN),
    'explain_cache_misses': ('jax_explain_cache_misses', (0, 4, 31), _BOOLEAN),
    'no_tracing': ('jax_no_tracing', (0, 4, 32), _BOOLEAN),
    'no_execution': ('jax_no_execution', (0, 7, 2), _BOOLEAN),
    'remove_size_one_mesh_axis_from_type': ('jax_remove_size_one_mesh_axis_from_type', (0, 7, 2), _BOOLEAN),
    'enable_x64': ('jax_enable_x64', (0, 8, 0), _BOOLEAN),
    'thread_guard': ('jax_thread_guard', (0, 9, 0), _BOOLEAN),
    'allow_f16_reductions': ('jax_allow_f16_reductions', (0, 9, 1), _BOOLEAN),
    'array_garbage_collection_guard': ('jax_array_garbage_collection_guard', (0, 9, 1),
                                       {'values': ('allow', 'log', 'fatal')}),
    'auto_pcast': ('jax_auto_pcast', (0, 10, 1), _BOOLEAN),
}

_made = {}


def state(name):
    """The State jax.<name> names (made once, so `jax.debug_infs is jax.debug_infs`)."""
    if name not in _made:
        option, _, options = STATES[name]
        _made[name] = State(option, **options)
    return _made[name]


def checking_leaks():
    """jax.checking_leaks(): check_tracer_leaks(True) for a block."""
    return state('check_tracer_leaks')(True)


class transfer_guard:  # noqa: N801 (JAX's name; a context manager)
    """jax.transfer_guard(level): the three transfer_guard_* options set to `level` for the block."""

    _NAMES = ('transfer_guard_host_to_device', 'transfer_guard_device_to_device', 'transfer_guard_device_to_host')

    def __init__(self, new_val):
        self._contexts = [state(name)(new_val) for name in self._NAMES]

    def __enter__(self):
        entered = []
        try:
            for context in self._contexts:
                context.__enter__()
                entered.append(context)
        except BaseException:
            for context in reversed(entered):
                context.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        for context in reversed(self._contexts):
            context.__exit__(*exc)
        return False
