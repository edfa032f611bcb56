# flax.config: Flax's global flags (each also read from its upper-cased environment variable at import), of
# which flax_fix_rng_separator changes how Linen folds module paths into PRNG keys.
import os


def _env_bool(name, default):
    text = os.getenv(name.upper(), str(default)).lower()
    if text in ('y', 'yes', 't', 'true', 'on', '1'):
        return True
    if text in ('n', 'no', 'f', 'false', 'off', '0'):
        return False
    raise ValueError(f'invalid truth value {text!r} for environment {name.upper()!r}')


class FlagHolder:
    def __init__(self, name, help):
        self.name = name
        self.__name__ = name[5:] if name.startswith('flax_') else name
        self.__doc__ = f'Flag holder for `{name}`.\n\n{help}'

    def __bool__(self):
        raise TypeError("bool() not supported for instances of type 'FlagHolder' "
                        "(did you mean to use 'FlagHolder.value' instead?)")

    @property
    def value(self):
        return config._read(self.name)


class Config:
    def __init__(self):
        self._values = {}

    def _add_option(self, name, default):
        if name in self._values:
            raise RuntimeError(f'Config option {name} already defined')
        self._values[name] = default

    def _read(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise LookupError(f'Unrecognized config option: {name}')

    def update(self, name_or_holder, value, /):
        name = name_or_holder.name if isinstance(name_or_holder, FlagHolder) else name_or_holder
        if name not in self._values:
            raise LookupError(f'Unrecognized config option: {name}')
        self._values[name] = value

    def __repr__(self):
        values_repr = ', '.join(f'\n  {k}={v!r}' for k, v in self._values.items())
        return f'Config({values_repr}\n)'


config = Config()


def bool_flag(name, *, default, help):
    name = name.lower()
    config._add_option(name, _env_bool(name, default))
    holder = FlagHolder(name, help)
    setattr(Config, name, property(lambda _: holder.value, doc=help))
    return holder


flax_filter_frames = bool_flag('flax_filter_frames', default=True,
                               help='Whether to hide flax-internal stack frames from tracebacks.')
flax_profile = bool_flag('flax_profile', default=True, help='Whether to run Module methods under jax.named_scope.')
flax_use_orbax_checkpointing = bool_flag('flax_use_orbax_checkpointing', default=True,
                                         help='Whether to use Orbax to save checkpoints.')
flax_preserve_adopted_names = bool_flag('flax_preserve_adopted_names', default=False,
                                        help='When adopting outside modules, keep their names.')
flax_return_frozendict = bool_flag('flax_return_frozendict', default=False,
                                   help='Whether init/apply return FrozenDicts.')
flax_fix_rng = bool_flag('flax_fix_rng_separator', default=False,
                         help='Whether to add a separator when folding module names and counters into PRNG keys, '
                              'so that ("ab", "c") and ("a", "bc") give different keys.')
