# flax.core.meta: boxed variables carrying partitioning metadata (Partitioned) and the tree utilities over boxes.
import functools

from flax import struct
from flax import _versions


class AxisMetadata:
    """A box around a variable's value; transformations that add or remove an axis update its metadata."""

    def unbox(self):
        raise NotImplementedError

    def replace_boxed(self, val):
        raise NotImplementedError

    def add_axis(self, index, params):
        raise NotImplementedError

    def remove_axis(self, index, params):
        raise NotImplementedError


def is_axis_metadata(val):
    return isinstance(val, AxisMetadata)


def map_axis_meta(fn, tree):
    import jax
    return jax.tree_util.tree_map(lambda x: fn(x) if isinstance(x, AxisMetadata) else x, tree,
                                  is_leaf=is_axis_metadata)


def add_axis(tree, index, params):
    return map_axis_meta(lambda x: x.add_axis(index, params), tree)


def remove_axis(tree, index, params):
    return map_axis_meta(lambda x: x.remove_axis(index, params), tree)


def unbox(tree):
    return map_axis_meta(lambda x: unbox(x.unbox()), tree)


def replace_boxed(tree, updates):
    import jax

    def inner(box, value):
        if isinstance(box, AxisMetadata):
            return box.replace_boxed(replace_boxed(box.unbox(), value))
        return value
    return jax.tree_util.tree_map(inner, tree, updates, is_leaf=is_axis_metadata)


PARTITION_NAME = 'partition_name'


def get_global_mesh():
    import _shardscope
    return _shardscope.get_concrete_mesh()


def global_mesh_defined():
    return get_global_mesh() is not None


class PartitioningUnspecifiedError(TypeError):
    pass


def _box_repr(box, extra_fields):
    fields = [f'value={box.value!r}', f'names={box.names!r}']
    if _versions.boxes_print_mesh():
        fields += [f'{name}={getattr(box, name)!r}' for name in extra_fields]
    return f'{type(box).__name__}(' + ', '.join(fields) + ')'


class Partitioned(struct.PyTreeNode, AxisMetadata):
    value: object
    names: tuple = struct.field(pytree_node=False)
    mesh: object = struct.field(default=None, pytree_node=False)

    def __repr__(self):
        return _box_repr(self, ('mesh',))

    def unbox(self, apply_constraint=True):
        """The value, constrained to its partitioning when a mesh is in context or attached."""
        if apply_constraint and (global_mesh_defined() or self.mesh is not None):
            import jax
            spec = self.get_partition_spec()
            if self.mesh is not None:
                return jax.lax.with_sharding_constraint(self.value, jax.sharding.NamedSharding(self.mesh, spec))
            return jax.lax.with_sharding_constraint(self.value, spec)
        return self.value

    def replace_boxed(self, val):
        return self.replace(value=val)

    def _partition_name(self, params):
        if PARTITION_NAME not in params:
            raise PartitioningUnspecifiedError(
                'Trying to transform a Partitioned variable but "partition_name" is not specified in '
                'metadata_params: ' + repr(self))
        return params[PARTITION_NAME]

    def add_axis(self, index, params):
        name = self._partition_name(params)
        names = list(self.names)
        while len(names) < index:
            names.append(None)
        names.insert(index, name)
        return self.replace(names=tuple(names))

    def remove_axis(self, index, params):
        name = self._partition_name(params)
        names = list(self.names)
        assert names.pop(index) == name
        return self.replace(names=tuple(names))

    def get_partition_spec(self):
        from jax.sharding import PartitionSpec
        return PartitionSpec(*self.names)

    def get_sharding(self, mesh):
        from jax.sharding import NamedSharding
        return NamedSharding(mesh, self.get_partition_spec())


def with_partitioning(fn, names, mesh=None):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return Partitioned(fn(*args, **kwargs), names, mesh=mesh)
    return wrapper


def _leaf_spec(x):
    from jax.sharding import PartitionSpec
    if hasattr(x, 'get_partition_spec'):
        return x.get_partition_spec()
    if hasattr(x, 'shape') and _versions.unboxed_leaves_get_empty_spec():
        return PartitionSpec()
    return None


def get_partition_spec(tree):
    import jax
    return jax.tree_util.tree_map(_leaf_spec, tree, is_leaf=is_axis_metadata)


def get_sharding(tree, mesh):
    import jax
    from jax.sharding import NamedSharding

    def sharding_of(x):
        if hasattr(x, 'get_sharding'):
            return x.get_sharding(mesh)
        spec = _leaf_spec(x)
        return None if spec is None else NamedSharding(mesh, spec)
    return jax.tree_util.tree_map(sharding_of, tree, is_leaf=is_axis_metadata)


