# jax.debug: sharding visualization (JAX's exact text) and print.
import os
import sys

import _shardscope


def _console_has_color():
    # The terminal rules of the console library JAX prints with: NO_COLOR turns colour off, FORCE_COLOR on
    # (as a notebook front end does), otherwise colour only on a terminal.
    if os.environ.get('NO_COLOR'):
        return False
    if os.environ.get('FORCE_COLOR'):
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
    sys.stdout.write(text)


def visualize_array_sharding(arr, **kwargs):
    visualize_sharding(arr.shape, arr.sharding, **kwargs)


def inspect_array_sharding(value, *, callback):
    callback(value.sharding)


def print(fmt, *args, **kwargs):
    import builtins
    builtins.print(fmt.format(*args, **kwargs))
