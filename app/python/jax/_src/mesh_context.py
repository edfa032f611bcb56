# The mesh context (jax.set_mesh / jax.sharding.use_mesh) as the engine keeps it.
import contextlib

import _shardscope


def concrete_mesh():
    return _shardscope.get_concrete_mesh()


class _MeshContext:
    """set_mesh works as a statement and as a context manager, as in JAX."""
    def __init__(self, mesh):
        self._previous = _shardscope.get_concrete_mesh()
        self._mesh = mesh
        _shardscope.set_mesh(mesh)

    def __enter__(self):
        return self._mesh

    def __exit__(self, *exc):
        _shardscope.set_mesh(self._previous)
        return False


def set_mesh(mesh):
    return _MeshContext(mesh)


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
