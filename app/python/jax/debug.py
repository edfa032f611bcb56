# jax.debug: sharding visualization (JAX's exact text) and print.
import sys

import _shardscope


def _use_color():
    stream = sys.stdout
    return hasattr(stream, 'isatty') and stream.isatty()


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9, max_width=80, color_map=None):
    text = _shardscope.visualize_sharding(tuple(shape), sharding, use_color and _use_color(), scale, min_width,
                                          max_width)
    sys.stdout.write(text)


def visualize_array_sharding(arr, **kwargs):
    visualize_sharding(arr.shape, arr.sharding, **kwargs)


def inspect_array_sharding(value, *, callback):
    callback(value.sharding)


def print(fmt, *args, **kwargs):
    import builtins
    builtins.print(fmt.format(*args, **kwargs))
