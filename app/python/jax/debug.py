# jax.debug: sharding visualization (JAX's exact text), print and callbacks that work inside jit, vmap and shard_map.
import atexit
import os
import string
import sys

import _shardscope


def _jupyter_shell():
    """The notebook shell running this code, found as rich finds it (JAX prints through rich), or None."""
    import builtins
    get_ipython = getattr(builtins, 'get_ipython', None)
    shell = get_ipython() if get_ipython is not None else None
    if shell is None:
        return None
    if ('google.colab' in str(shell.__class__) or os.environ.get('DATABRICKS_RUNTIME_VERSION')
            or shell.__class__.__name__ == 'ZMQInteractiveShell'):
        return shell
    return None


def _console_has_color():
    # The terminal rules of the console library JAX prints with: NO_COLOR turns colour off, a notebook or
    # FORCE_COLOR on, otherwise colour only on a terminal.
    if os.environ.get('NO_COLOR'):
        return False
    if os.environ.get('FORCE_COLOR') or _jupyter_shell() is not None:
        return True
    stream = sys.stdout
    return hasattr(stream, 'isatty') and stream.isatty()


def _matplotlib_available():
    # JAX colours the cells only when matplotlib imports; the simulated environment has it unless
    # SHARDSCOPE_MATPLOTLIB=0 recreates one without it (a Colab TPU runtime of 2024 had none).
    return os.environ.get('SHARDSCOPE_MATPLOTLIB', '1') not in ('', '0')


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9, max_width=80, color_map=None):
    console_color = _console_has_color()
    use_color = use_color and console_color
    if use_color and color_map is None and not _matplotlib_available():
        use_color = False
    # Without colour blocks the numbers in the labels go through the console's highlighter, which only
    # shows on a colour console.
    text = _shardscope.visualize_sharding(tuple(shape), sharding, use_color, scale, min_width, max_width,
                                          color_map, console_color and not use_color)
    if _jupyter_shell() is not None:
        # rich in a notebook: the console's output becomes one display_data, its text and the same as HTML.
        from IPython.display import display
        plain = text.rstrip('\n') + '\n'
        display({'text/plain': plain, 'text/html': _shardscope.jupyter_html(plain)}, raw=True)
        return
    sys.stdout.write(text)


# --- callbacks inside traced programs ------------------------------------------------------------------------------
# In a trace, jax.debug.print/callback bind an equation whose kernel calls back here with concrete values: once
# per call under jit (the whole value), once per device in shard_map and pmap bodies (each device's block), once
# per element under vmap. Outside a trace they call back at once, as JAX's eager impl does.

atexit.register(_shardscope.debug.clear)


def _is_tracer(x):
    return getattr(x, '_is_tracer', False)


def _staged(dynamic):
    return any(_is_tracer(v) for v in dynamic) or _shardscope.debug.in_trace()


def _split_args(args, kwargs):
    """Flattened (args, kwargs): array-like leaves are passed through the program, the rest stay static."""
    import numpy as np
    from jax._src import tree as tree_util
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    dynamic, static = [], {}
    for i, leaf in enumerate(leaves):
        if hasattr(leaf, '_is_tracer') or isinstance(leaf, (np.ndarray, np.generic, bool, int, float, complex)):
            dynamic.append(leaf)
        else:
            static[i] = leaf
    return in_tree, dynamic, static


def _merge_args(in_tree, dynamic, static):
    from jax._src import tree as tree_util
    values = iter(dynamic)
    leaves = [static[i] if i in static else next(values) for i in range(len(dynamic) + len(static))]
    return tree_util.tree_unflatten(in_tree, leaves)


def _as_arrays(values):
    import jax.numpy as jnp
    return [v if hasattr(v, '_is_tracer') else jnp.asarray(v) for v in values]


def _operands(values):
    # Python scalars stay scalars, so a trace shows them as weakly typed literals (3:i32[]) as JAX's does.
    import numpy as np
    return [v if hasattr(v, '_is_tracer') or isinstance(v, (bool, int, float, complex)) else np.asarray(v)
            for v in values]


def _function_text(kind):
    # The repr JAX's jaxpr shows for the flat callback it binds (the address is masked by newer printers).
    return f'<function {kind}.<locals>._flat_callback at 0x{id(kind) & 0xFFFFFFFFFFFF:x}>'


def _bind_callback(flat_callback, dynamic, ordered, partitioned):
    callback_id = _shardscope.debug.register(lambda values, device: flat_callback(*values))
    _shardscope.bind('debug_callback', _operands(dynamic),
                     {'callback': _function_text('debug_callback.<locals>._debug_callback'),
                      'effect': 'OrderedDebug' if ordered else 'Debug', 'partitioned': bool(partitioned),
                      'callback_id': callback_id})


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    def _debug_callback(fn, *c_args, **c_kwargs):
        if not callable(fn):
            raise TypeError(f'first argument to jax.debug.callback must be callable, but got an object of type '
                            f'{type(fn)}')
        in_tree, dynamic, static = _split_args(c_args, c_kwargs)

        def flat(*values):
            call_args, call_kwargs = _merge_args(in_tree, list(values), static)
            fn(*call_args, **call_kwargs)

        if _staged(dynamic):
            _bind_callback(flat, dynamic, ordered, partitioned)
        else:
            flat(*_as_arrays(dynamic))

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f'debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}')
    return _debug_callback


class _FormatCheck(string.Formatter):
    """Checks a format string against its arguments without formatting any value."""

    def format_field(self, value, format_spec):
        return ''

    def check_unused_args(self, used_args, args, kwargs):
        unused = [arg for i, arg in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f'Unused positional arguments to `jax.debug.print`: {unused}')
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_kwargs:
            raise ValueError(f'Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You may be passing '
                             'an f-string (i.e, `f"{x}"`) into `jax.debug.print` and instead should pass in a '
                             'regular string.')


def _print_values(fmt, printoptions, has_placeholders, args, kwargs, use_logging=False):
    import numpy as np
    if has_placeholders:
        with np.printoptions(**printoptions):
            text = fmt.format(*args, **kwargs)
    else:
        text = ' '.join((fmt, *(str(a) for a in args)))
    if use_logging:
        # jax.debug.log: an INFO record of JAX's debugging logger (shown only where logging is configured to).
        import logging
        logging.getLogger('jax._src.debugging').info(text)
        return
    sys.stdout.write(text + '\n')


def print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False, _use_logging=False, **kwargs):
    import numpy as np

    def _debug_print(fmt, *p_args, **p_kwargs):
        if not skip_format_check:
            _FormatCheck().format(fmt, *p_args, **p_kwargs)
        has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
        in_tree, dynamic, static = _split_args(p_args, p_kwargs)
        options = np.get_printoptions()

        def flat(*values):
            call_args, call_kwargs = _merge_args(in_tree, list(values), static)
            _print_values(fmt, options, has_placeholders, call_args, call_kwargs, _use_logging)

        if not _staged(dynamic):
            flat(*_as_arrays(dynamic))
            return
        if not _shardscope.jax_has('debug_print_primitive'):
            # Before the debug_print primitive, print was a debug_callback of a formatting function.
            _bind_callback(flat, dynamic, ordered, partitioned)
            return
        callback_id = _shardscope.debug.register(lambda values, device: flat(*values))
        _shardscope.bind('debug_print', _operands(dynamic),
                         {'fmt': fmt, 'has_placeholders': has_placeholders, 'in_tree': str(in_tree),
                          'logging_record': None, 'np_printoptions': tuple(options.items()),
                          'ordered': bool(ordered), 'partitioned': bool(partitioned),
                          'static_args': tuple(static.items()), 'callback_id': callback_id})

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f'debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}')
    return _debug_print


def inspect_array_sharding(value, *, callback):
    """Calls `callback` with the sharding `value` has: its own when concrete; inside jit, the one the partitioner
    gives it at that point of the program."""
    if not _is_tracer(value):
        callback(value.sharding)
        return

    def report(mesh, spec):
        if mesh is None:
            import jax
            callback(jax.sharding.SingleDeviceSharding(jax.devices()[0]))
        else:
            from jax.sharding import NamedSharding
            callback(NamedSharding(mesh, spec))

    callback_id = _shardscope.debug.register(None, report)
    _shardscope.bind('inspect_sharding', [value],
                     {'callback': f'<function {getattr(callback, "__qualname__", "callback")} at 0x{id(callback):x}>',
                      'callback_id': callback_id})


def visualize_array_sharding(arr, **kwargs):
    def show(sharding):
        visualize_sharding(arr.shape, sharding, **kwargs)
    inspect_array_sharding(arr, callback=show)


def _log(fmt, *args, ordered=False, partitioned=False, skip_format_check=False, **kwargs):
    """jax.debug.print's formatting, sent to the `jax._src.debugging` logger at INFO level instead of stdout."""
    return print(fmt, *args, ordered=ordered, partitioned=partitioned, skip_format_check=skip_format_check,
                 _use_logging=True, **kwargs)


def __getattr__(name):
    if name == 'log' and _shardscope.jax_version_info() >= (0, 8, 1):
        return _log
    if name in ('DebugEffect', 'OrderedDebugEffect'):
        raise NotImplementedError(f'jax.debug.{name} is not supported by shardscope')
    raise AttributeError(f"module 'jax.debug' has no attribute '{name}'", name=name, obj=sys.modules[__name__])


from jax._src.debugger import breakpoint  # noqa: E402,F401
