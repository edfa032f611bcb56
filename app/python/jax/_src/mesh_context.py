# The mesh context (jax.set_mesh / jax.sharding.use_mesh) as the engine keeps it.
import contextlib

import _shardscope


def concrete_mesh():
    return _shardscope.get_concrete_mesh()


class set_mesh:
    """jax.set_mesh: a statement and a context manager at once, as in JAX (a class in jax._src.sharding_impls, whose
    objects print as such)."""
    __slots__ = ['_previous', '_mesh']

    def __init__(self, mesh):
        if mesh is not None and not isinstance(mesh, _shardscope.Mesh):
            raise ValueError(f'Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}')
        if _shardscope.debug.in_trace():
            raise ValueError('`set_mesh` can only be used outside of `jax.jit`.')
        self._previous = _shardscope.get_concrete_mesh()
        self._mesh = mesh
        _shardscope.set_mesh(mesh)

    def __enter__(self):
        return self._mesh

    def __exit__(self, *exc):
        _shardscope.set_mesh(self._previous)
        return False


set_mesh.__module__ = 'jax._src.sharding_impls'


@contextlib.contextmanager
def use_mesh(mesh):
    previous = _shardscope.get_concrete_mesh()
    _shardscope.set_mesh(mesh)
    try:
        yield mesh
    finally:
        _shardscope.set_mesh(previous)


def get_abstract_mesh():
    return _shardscope.get_abstract_mesh()


# `with mesh:` (JAX's resource environment, used by pjit and with_sharding_constraint with bare
# PartitionSpecs): bare specs resolve on it, but it sets no abstract mesh (jax.sharding.get_abstract_mesh() stays
# as it was, which is what Flax's eager sharding reads).
def _enter_mesh(mesh):
    _shardscope.enter_resource_mesh(mesh)
    return mesh


def _exit_mesh(mesh, *exc):
    _shardscope.exit_resource_mesh()
    return False


_shardscope.Mesh.__enter__ = _enter_mesh
_shardscope.Mesh.__exit__ = _exit_mesh


def on_context_mesh(spec, api_name, name='in_shardings or out_shardings'):
    """A bare PartitionSpec as a NamedSharding on the mesh of `with mesh:` / set_mesh (JAX's error without one;
    from 0.7.1 it names the argument, `name`, and points at jax.set_mesh)."""
    mesh = _shardscope.get_concrete_mesh()
    if mesh is None:
        version = _shardscope.jax_version_info()
        if version >= (0, 7, 1):
            raise RuntimeError(f'{api_name} requires a non-empty mesh in context if you are passing `PartitionSpec`s to '
                               f'{name}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, '
                               f'provide `Sharding`s to {name} and then the mesh context manager is not required.')
        raise RuntimeError(f'{api_name} requires a non-empty mesh if you are passing `PartitionSpec`s or `None` to '
                           'in_shardings or out_shardings. Are you sure you are inside a mesh context? '
                           f'Got {spec}')
    return _shardscope.NamedSharding(mesh, spec)
