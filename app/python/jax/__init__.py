# shardscope's simulated `jax`: the engine runs every program on simulated devices; unsupported APIs raise
# NotImplementedError naming themselves.
import os as _os

import _shardscope


def _configure_from_environment():
    flags = _os.environ.get('XLA_FLAGS', '')
    platforms = _os.environ.get('JAX_PLATFORMS', '')
    for flag in flags.split():
        if flag.startswith('--xla_force_host_platform_device_count='):
            if platforms.split(',')[0] in ('', 'cpu'):
                count = int(flag.split('=', 1)[1])
                if platforms == 'cpu' or _shardscope.device_preset().startswith('cpu'):
                    _shardscope.set_device_preset(f'cpu:{count}')
    if platforms.split(',')[0] == 'cpu' and not _shardscope.device_preset().startswith('cpu'):
        _shardscope.set_device_preset('cpu:1')


_configure_from_environment()

__version__ = _shardscope.jax_version()

from jax._src import array_methods as _array_methods  # noqa: E402  (installs jax.Array's methods)
from jax._src import memories as _memories  # noqa: E402,F401  (installs Device.default_memory etc.)
from jax._src import xla_bridge as _xla_bridge  # noqa: E402
from jax._src import unsupported as _unsupported_module  # noqa: E402
from jax._src.api import (jit, make_jaxpr, vmap, grad, value_and_grad, jvp, pmap, shard_map,  # noqa: E402,F401
                          linearize, jacfwd, jacrev, jacobian, hessian, linear_transpose)
from jax._src.vjp import vjp  # noqa: E402,F401
from jax._src.custom_derivatives import custom_jvp, custom_vjp, custom_gradient  # noqa: E402,F401
from jax._src.callback import pure_callback  # noqa: E402,F401
from jax._src.mesh_context import set_mesh  # noqa: E402
from jax._src.sharding_in_types import reshard  # noqa: E402,F401
from jax._src import tree as _tree  # noqa: E402
from jax import config as _config_module  # noqa: E402

config = _config_module.config


Array = _array_methods.ArrayImpl
Device = _shardscope.Device  # jax.Device: the type of jax.devices()'s entries


def _name_array_class():
    """type(x) as the profile's jaxlib printed it: xla_extension.Array, then xla_extension.ArrayImpl, then
    _jax.ArrayImpl (jaxlib renamed its extension module in 0.6.1)."""
    version = tuple(int(part) for part in __version__.split('.')[:3])
    if version < (0, 4, 7):
        module, name = 'jaxlib.xla_extension', 'Array'
    elif version < (0, 6, 1):
        module, name = 'jaxlib.xla_extension', 'ArrayImpl'
    else:
        module, name = 'jaxlib._jax', 'ArrayImpl'
    Array.__module__, Array.__name__, Array.__qualname__ = module, name, name


_name_array_class()


def _backend_devices(backend):
    """The devices of `backend`, or JAX's RuntimeError (xla_bridge.get_backend) when the preset has none."""
    _xla_bridge._mark_initialized()
    found = list(_shardscope.devices())
    if backend is None or not isinstance(backend, str):
        return found
    present = found[0].platform
    # The simulated GPUs are CUDA's, as jax reports them; 'gpu' is the alias naming any of those.
    names = {'gpu': 'cuda', 'cuda': 'cuda', 'rocm': 'rocm'}
    platform = {'gpu': 'cuda'}.get(present, present)
    wanted = names.get(backend, backend)
    if backend == 'gpu' and platform != 'cuda':
        raise RuntimeError(f"Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are "
                           f"present. Platforms present are: {platform}")
    if wanted != platform:
        raise RuntimeError(f"Unknown backend {wanted}. Available backends are {[platform]}")
    return found


def devices(backend=None):
    return _backend_devices(backend)


def local_devices(process_index=None, backend=None):
    index = 0 if process_index is None else process_index
    return [d for d in _backend_devices(backend) if d.process_index == index]


def device_count(backend=None):
    return len(_backend_devices(backend))


def local_device_count(backend=None):
    return len(local_devices(backend=backend))


def process_index(backend=None):
    return 0


def process_count(backend=None):
    return 1 + max(d.process_index for d in _shardscope.devices())


def default_backend():
    return _shardscope.devices()[0].platform


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    if isinstance(axis_names, str):  # Mesh takes one axis name as a plain string
        axis_names = (axis_names,)
    from jax.experimental import mesh_utils
    if _shardscope.jax_version_info() >= mesh_utils._SIZES_CHECKED_FROM:
        sizes = mesh_utils.canonical_axis_sizes(axis_shapes)
        if sizes is None:
            raise ValueError(f'`axis_shapes` passed to `make_mesh` should be a sequence of ints. Got {axis_shapes}')
        axis_shapes = sizes
    return _shardscope.make_mesh(tuple(axis_shapes), tuple(axis_names),
                                 None if axis_types is None else tuple(axis_types), devices)


def _np_shape(value):
    import numpy as np
    return np.shape(value)


def _spec_on_context_mesh(spec):
    from jax._src.mesh_context import concrete_mesh
    mesh = concrete_mesh()
    if mesh is None:
        raise ValueError('device_put with a PartitionSpec needs a mesh set with jax.set_mesh; got '
                         f'{spec} with no mesh set')
    return _shardscope.NamedSharding(mesh, spec)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    leaves, treedef = _tree.tree_flatten(x)
    try:
        targets = _tree.broadcast_target(device, x)
    except ValueError:
        from jax._src.tree_prefix import flatten_axes_error
        raise flatten_axes_error('device_put device', x, device) from None
    # A bare PartitionSpec means a NamedSharding on the mesh set with jax.set_mesh.
    targets = [_spec_on_context_mesh(t) if isinstance(t, _shardscope.PartitionSpec) else t for t in targets]
    # A Format places by its sharding and records its layout on the (committed) result.
    from jax._src import layout as _layout
    layouts = [t.layout if isinstance(t, _layout.Format) else None for t in targets]
    targets = [t.sharding if isinstance(t, _layout.Format) else t for t in targets]
    from jax._src.positional_sharding import PositionalSharding, to_engine_sharding
    from jax._src.pmap_sharding import PmapSharding
    placements = (_shardscope.Device, _shardscope.NamedSharding, _shardscope.SingleDeviceSharding,
                  PositionalSharding, PmapSharding)
    for t in targets:
        if t is not None and not isinstance(t, placements):
            # api._check_sharding; layouts were named Layout until 0.7.0, memory spaces accepted from 0.8.0.
            version = _shardscope.jax_version_info()
            kinds = ('`Format`, `jax.memory.Space`' if version >= (0, 8) else
                     '`Format`' if version >= (0, 7) else '`Layout`')
            raise ValueError(f'`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, {kinds} '
                             f'or a pytree of these values. Received invalid value: {t}')
    targets = [to_engine_sharding(t, len(getattr(leaf, 'shape', _np_shape(leaf)))) for leaf, t in zip(leaves, targets)]
    placed = [_shardscope.device_put(leaf, target) for leaf, target in zip(leaves, targets)]
    for out, target, layout in zip(placed, targets, layouts):
        if target is not None and isinstance(out, Array) and not out._is_tracer:
            out._committed_flag = True
        if target is not None or layout is not None:
            if isinstance(layout, _layout.Layout):
                layout.check_compatible_aval(out.shape)
            _layout.set_array_layout(out, layout if isinstance(layout, _layout.Layout) else None, committed=True)
    return _tree.tree_unflatten(treedef, placed)


def effects_barrier():
    """Waits until every effect (debug print, callback) issued so far has run: shardscope runs them in order, so
    there is nothing to wait for."""
    return None


def block_until_ready(x):
    return x


def typeof(x):
    from jax._src.array_methods import _shapedarray
    from jax._src import prng as _prng_types
    if _prng_types.is_key_array(x):
        return x.aval  # key<fry>[...]
    if not isinstance(x, Array):
        import numpy as np
        # Only arrays and scalars have JAX types (core.typeof); a string has its own message.
        if isinstance(x, str):
            raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
        if not isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type")
        import jax.numpy as jnp
        x = jnp.asarray(x)
    return _shapedarray(x)


from jax._src.array_api import (ShapeDtypeStruct, device_get, make_array_from_callback,  # noqa: E402,F401
                                make_array_from_single_device_arrays)


def eval_shape(fun, *args, **kwargs):
    from jax._src.jit import eval_shape as traced_eval_shape
    return traced_eval_shape(fun, *args, **kwargs)


# jax.tree_* aliases of jax.tree_util: (first version that warned on access, jax.tree short name). They became
# AttributeErrors naming their removal in 0.6.0 and left the module in 0.9.0.
_TREE_ALIASES = {
    'treedef_is_leaf': ((0, 3, 15), None),
    'tree_flatten': ((0, 3, 15), 'flatten'),
    'tree_leaves': ((0, 3, 15), 'leaves'),
    'tree_structure': ((0, 3, 15), 'structure'),
    'tree_transpose': ((0, 3, 15), 'transpose'),
    'tree_unflatten': ((0, 3, 15), 'unflatten'),
    'tree_map': ((0, 4, 26), 'map'),
}


# Submodules jax imports when it is imported (so `jax.profiler` works without its own import), with the first JAX
# release that exported each.
_SUBMODULES = {'core': (0, 1, 0), 'typing': (0, 4, 4), 'lib': (0, 1, 0), 'ops': (0, 2, 21), 'profiler': (0, 1, 73),
               'stages': (0, 3, 3), 'custom_derivatives': (0, 4, 9)}


def __getattr__(name):
    if name in _TREE_ALIASES:
        from jax._src.deprecations import deprecated_attribute
        warned_from, short = _TREE_ALIASES[name]
        advice = (f'use jax.tree_util.{name}.' if short is None else
                  f'use jax.tree.{short} (jax v0.4.25 or newer) or jax.tree_util.{name} (any JAX version).')
        return deprecated_attribute(__name__, name, lambda: getattr(tree_util, name),
                                    f'jax.{name} is deprecated: {advice}', warned_from=warned_from,
                                    removed_in=(0, 6, 0), gone_from=(0, 9, 0),
                                    removed_message=f'jax.{name} was removed in JAX v0.6.0: {advice}')
    # Array refs (mutable arrays) became jax.new_ref / jax.freeze in 0.8.0.
    if name in ('new_ref', 'freeze', 'Ref'):
        version = tuple(int(part) for part in __version__.split('.')[:3])
        if version >= (0, 8, 0):
            from jax._src import ref
            return getattr(ref, name)
    # jax.fwd_and_bwd arrived in 0.6.1.
    if name == 'fwd_and_bwd' and _shardscope.jax_version_info() >= (0, 6, 1):
        from jax._src.vjp import fwd_and_bwd
        return fwd_and_bwd
    from jax._src import config_states as _states
    from jax._src import unsupported as _unsupported
    version = _shardscope.jax_version_info()
    # jax.debug_infs, jax.enable_x64 and the other config options' context managers.
    if name in _states.STATES and version >= _states.STATES[name][1]:
        return _states.state(name)
    if name == 'checking_leaks' and version >= (0, 2, 21):
        return _states.checking_leaks
    if name == 'transfer_guard' and version >= (0, 3, 0):
        return _states.transfer_guard
    if name in _SUBMODULES and version >= _SUBMODULES[name]:
        import importlib
        return importlib.import_module(f'jax.{name}')
    if _unsupported.exists(_unsupported.MODULES, name) or _unsupported.exists(_unsupported.NAMES, name):
        raise _unsupported.unsupported(f'jax.{name}')
    # jax.custom_remat arrived in 0.11.0.
    if name == 'custom_remat' and _shardscope.jax_version_info() >= (0, 11, 0):
        from jax._src.ad_checkpoint import custom_remat
        return custom_remat
    raise AttributeError(f"module 'jax' has no attribute '{name}'")


from jax import numpy, sharding, lax, nn, random, debug, tree_util, tree, experimental, dtypes, errors  # noqa: E402,F401
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402,F401
from jax._src.ad_checkpoint import checkpoint, remat, checkpoint_policies  # noqa: E402,F401
from jax import ad_checkpoint  # noqa: E402,F401
from jax import scipy as scipy  # noqa: E402,F401


# ---- Staging helpers: names for profiles, the jit switch, caches -----------------------------------------------

import functools as _functools  # noqa: E402
import numpy as _np  # noqa: E402

class _NameScope:
    """jax.named_scope: a context manager (and decorator) naming the operations staged inside it; the names reach
    only HLO metadata and profiles, so values and printed jaxprs are unchanged."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False

    def __call__(self, fun):
        @_functools.wraps(fun)
        def scoped(*args, **kwargs):
            with self:
                return fun(*args, **kwargs)
        return scoped


def named_scope(name):
    if not isinstance(name, str):
        raise TypeError('named_scope name argument must be a string.')
    return _NameScope(name)


def named_call(fun, *, name=None):
    """fun, staged under the name `name` (its own name by default) in profiles; its results are fun's."""
    if name is None:
        name = fun.__name__
    return _NameScope(name)(fun)


class disable_jit:  # noqa: N801 (JAX's name; a context manager)
    """Inside the context (or after jax.config.update('jax_disable_jit', True)) jitted functions run their Python
    op by op, so their values are concrete and print as values."""

    def __init__(self, disable=True):
        self._disable = bool(disable)
        self._before = None

    def __enter__(self):
        self._before = bool(config.read('jax_disable_jit'))
        config.update('jax_disable_jit', self._disable)

    def __exit__(self, *exc):
        config.update('jax_disable_jit', self._before)
        return False


class default_matmul_precision:  # noqa: N801 (JAX's name; a context manager)
    """The precision of matmuls inside the context; a CPU computes in the operands' type whatever it says."""

    def __init__(self, precision):
        self._precision = precision
        self._before = None

    def __enter__(self):
        self._before = config.read('jax_default_matmul_precision')
        config.update('jax_default_matmul_precision', self._precision)

    def __exit__(self, *exc):
        config.update('jax_default_matmul_precision', self._before)
        return False


def clear_caches():
    """Drops every jitted function's traces, so the next call traces (and runs its Python side effects) again."""
    from jax._src import jit as _jit_module
    _jit_module.clear_all_caches()


float0 = _np.dtype([('float0', _np.void, 0)])


def process_indices(backend=None):
    """The indices of the processes that own devices, ascending (one process here: [0])."""
    return sorted({d.process_index for d in _shardscope.devices()})


def _renamed(old, new):
    import warnings
    # JAX's text, which names the new function twice.
    warnings.warn(f'jax.{new} has been renamed to jax.{new}. This alias will eventually be removed; please update '
                  'your code.', stacklevel=3)


def host_id(backend=None):
    _renamed('host_id', 'process_index')
    return process_index(backend)


def host_count(backend=None):
    _renamed('host_count', 'process_count')
    return process_count(backend)


def host_ids(backend=None):
    import warnings
    warnings.warn('jax.process_indexs has been renamed to jax.process_indices. This alias will eventually be removed; '
                  'please update your code.', stacklevel=2)
    return process_indices(backend)


def copy_to_host_async(x):
    """Starts copying each array leaf of x to the host; the simulation's arrays already live in host memory, so
    there is nothing to wait for (a later np.asarray finds them ready)."""
    for leaf in _tree.tree_leaves(x):
        if not hasattr(leaf, 'shape'):
            raise TypeError(f'copy_to_host_async expects arrays, got {type(leaf).__name__}')


def print_environment_info(return_string=False):
    """JAX's environment report: versions, the (simulated) devices, the platform, and the JAX_/XLA_ variables."""
    import platform
    import sys
    python_version = sys.version.replace('\n', ' ')
    first = devices()[0]
    # JAX's report has a stray quote after "local devices"; it is kept so the text matches.
    info = (f'jax:    {__version__}\njaxlib: {__version__}\nnumpy:  {_np.__version__}\npython: {python_version}\n'
            f'device info: {first.device_kind}-{device_count()}, {local_device_count()} local devices"\n'
            f'process_count: {process_count()}\nplatform: {platform.uname()}')
    for key, value in _os.environ.items():
        if key.startswith(('JAX_', 'XLA_')):
            info += f'\n{key}={value}'
    if return_string:
        return info
    print(info)
    return None


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """One process holds every device here, so its local data is the whole array: each device's shard is cut from
    it by the sharding (a pytree of shardings, data and shapes is mapped leaf by leaf)."""
    if not hasattr(sharding, 'addressable_devices') or isinstance(local_data, (list, tuple, dict)):
        shapes = global_shape if global_shape is not None else _tree.tree_map(lambda _: None, local_data)
        return _tree.tree_map(lambda s, d, g: make_array_from_process_local_data(s, d, g), sharding, local_data,
                              shapes, is_leaf=lambda x: x is None or hasattr(x, 'addressable_devices'))
    data = _np.asarray(local_data)
    if global_shape is not None and tuple(global_shape) != data.shape:
        raise ValueError(f'make_array_from_process_local_data: with one process the local data is the whole array, '
                         f'so global_shape must be its shape {data.shape}; got {tuple(global_shape)}')
    return make_array_from_callback(data.shape, sharding, lambda index: data[index])


Shard = _array_methods.Shard
_unsupported_module.install_finder()
