# The parts of JAX's public surface shardscope does not simulate: using or importing one raises
# NotImplementedError naming it, never AttributeError or ImportError (which would read as a typo or a bad install).
import importlib.abc
import sys

import _shardscope

# Top-level jax modules not simulated, with the first JAX release that had them.
MODULES = {
    'ad': (0, 4, 4), 'api_util': (0, 2, 21), 'custom_batching': (0, 4, 9), 'distributed': (0, 2, 21),
    'dlpack': (0, 4, 15), 'export': (0, 4, 30), 'ffi': (0, 4, 29), 'image': (0, 1, 73), 'memory': (0, 7, 1),
    'monitoring': (0, 4, 9),
}

# jax.experimental modules not simulated (any JAX release that had them).
EXPERIMENTAL_MODULES = frozenset({
    'array_serialization', 'buffer_callback', 'checkify', 'colocated_python', 'compilation_cache', 'compute_on',
    'control_deps', 'custom_partitioning', 'export', 'fused', 'hijax', 'host_callback', 'jax2tf', 'jet', 'key_reuse',
    'mosaic', 'ode', 'pallas', 'profiler', 'random', 'rnn', 'roofline', 'scheduling_groups', 'serialize_executable',
    'shard_alike', 'source_mapper', 'sparse', 'topologies', 'transfer', 'xla_metadata',
})

# Top-level jax names not simulated, with the first JAX release that exported them.
NAMES = {
    'ensure_compile_time_eval': (0, 2, 27), 'closure_convert': (0, 2, 21), 'live_arrays': (0, 3, 24),
    'make_user_context': (0, 7, 2), 'smap': (0, 7, 0), 'ds': (0, 9, 1), 'empty_ref': (0, 9, 1),
    'free_ref': (0, 9, 1), 'Inline': (0, 11, 0),
}


def exists(table, name):
    return name in table and _shardscope.jax_version_info() >= table[name]


def unsupported(qualified_name):
    return NotImplementedError(f'{qualified_name} is not supported by shardscope')


class _UnsupportedModuleFinder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: `import jax.export` or `jax.experimental.sparse` (and their submodules) reaches it
    only when no source has it."""

    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split('.')
        if len(parts) >= 2 and parts[0] == 'jax' and exists(MODULES, parts[1]):
            raise unsupported(fullname)
        if len(parts) >= 3 and parts[:2] == ['jax', 'experimental'] and parts[2] in EXPERIMENTAL_MODULES:
            raise unsupported(fullname)
        return None


def install_finder():
    if not any(isinstance(finder, _UnsupportedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_UnsupportedModuleFinder())
