# flax.core.meta: values boxed with partitioning metadata (Partitioned) and tree utilities that see boxes as leaves.
import dataclasses
import functools
import operator

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
    return issubclass(type(val), AxisMetadata)


def map_axis_meta(fn, tree):
    import jax

    def on_leaf(leaf):
        return fn(leaf) if is_axis_metadata(leaf) else leaf
    return jax.tree_util.tree_map(on_leaf, tree, is_leaf=is_axis_metadata)


def add_axis(tree, index, params):
    return map_axis_meta(operator.methodcaller('add_axis', index, params), tree)


def remove_axis(tree, index, params):
    return map_axis_meta(operator.methodcaller('remove_axis', index, params), tree)


def _open_fully(box):
    # A box may hold another box (or a tree of them); peel until plain values remain.
    return unbox(box.unbox())


def unbox(tree):
    return map_axis_meta(_open_fully, tree)


def replace_boxed(tree, updates):
    import jax

    def rebox(old, new):
        if not is_axis_metadata(old):
            return new
        return old.replace_boxed(replace_boxed(old.unbox(), new))
    return jax.tree_util.tree_map(rebox, tree, updates, is_leaf=is_axis_metadata)


PARTITION_NAME = 'partition_name'


def get_global_mesh():
    # Flax 0.12 on reads the abstract mesh, which only jax.set_mesh / use_mesh set (not `with mesh:`); earlier
    # releases read the resource environment `with mesh:` sets. The engine's concrete mesh stands for either.
    import _shardscope
    from flax import _versions
    if _versions.nnx_variables_shard_eagerly() and _shardscope.get_abstract_mesh().empty:
        return None
    return _shardscope.get_concrete_mesh()


def global_mesh_defined():
    return get_global_mesh() is not None


class PartitioningUnspecifiedError(TypeError):
    pass


class Partitioned(struct.PyTreeNode, AxisMetadata):
    value: object
    names: tuple = struct.field(pytree_node=False)
    mesh: object = struct.field(default=None, pytree_node=False)

    def __repr__(self):
        # value and names always; the later static fields (mesh, and a subclass's rules) only for the Flax
        # releases that had them.
        shown = [f'value={self.value!r}', f'names={self.names!r}']
        if _versions.boxes_print_mesh():
            shown.extend(f'{f.name}={getattr(self, f.name)!r}' for f in dataclasses.fields(self)[2:])
        return type(self).__name__ + '(' + ', '.join(shown) + ')'

    def _constrains(self, apply_constraint):
        return apply_constraint and (self.mesh is not None or global_mesh_defined())

    def _constrained_value(self):
        import jax
        target = self.get_partition_spec() if self.mesh is None else self.get_sharding(self.mesh)
        return jax.lax.with_sharding_constraint(self.value, target)

    def unbox(self, apply_constraint=True):
        """The value, constrained to its partitioning when a mesh is in context or attached."""
        return self._constrained_value() if self._constrains(apply_constraint) else self.value

    def replace_boxed(self, val):
        return self.replace(value=val)

    def _lifted_axis_name(self, params):
        # A lifted transform must say what to call the axis it adds, or the names would not match the rank.
        try:
            label = params[PARTITION_NAME]
        except KeyError:
            raise PartitioningUnspecifiedError(
                'Trying to transform a Partitioned variable but "partition_name" is not specified in '
                'metadata_params: ' + repr(self)) from None
        return label

    def add_axis(self, index, params):
        label = self._lifted_axis_name(params)
        # Too few names for `index`: the missing leading dimensions are unpartitioned.
        padded = tuple(self.names) + (None,) * max(0, index - len(self.names))
        return self.replace(names=padded[:index] + (label,) + padded[index:])

    def remove_axis(self, index, params):
        label = self._lifted_axis_name(params)
        remaining = list(self.names)
        dropped = remaining.pop(index)
        assert dropped == label
        return self.replace(names=tuple(remaining))

    def get_partition_spec(self):
        from jax.sharding import PartitionSpec
        return PartitionSpec(*self.names)

    def get_sharding(self, mesh):
        from jax.sharding import NamedSharding
        return NamedSharding(mesh, self.get_partition_spec())

    def to_nnx_metadata(self):
        """The box as an nnx.Variable's metadata (the bridge's Linen -> NNX direction): names become the
        variable's `sharding` annotation."""
        metadata = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        metadata['sharding'] = metadata.pop('names')
        return metadata

    @classmethod
    def from_nnx_metadata(cls, metadata):
        """The box for an nnx.Variable's value and metadata, whichever name the Flax release gave the
        annotation (sharding, sharding_names, out_sharding)."""
        metadata = dict(metadata)
        for key in ('sharding', 'sharding_names', 'out_sharding'):
            if key in metadata:
                metadata['names'] = metadata.pop(key)
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in metadata.items() if k in fields})


def _boxing_initializer(init, box_type, **box_fields):
    """`init` with its result wrapped in box_type; named like `init`, so module reprs still show its name."""
    @functools.wraps(init)
    def boxed_init(*args, **kwargs):
        return box_type(init(*args, **kwargs), **box_fields)
    return boxed_init


def with_partitioning(fn, names, mesh=None):
    return _boxing_initializer(fn, Partitioned, names=names, mesh=mesh)


def _spec_for(leaf):
    from jax.sharding import PartitionSpec
    if hasattr(leaf, 'get_partition_spec'):
        return leaf.get_partition_spec()
    # An array outside any box: replicated in later Flax, no spec at all in earlier releases.
    if _versions.unboxed_leaves_get_empty_spec() and hasattr(leaf, 'shape'):
        return PartitionSpec()
    return None


def get_partition_spec(tree):
    import jax
    return jax.tree_util.tree_map(_spec_for, tree, is_leaf=is_axis_metadata)


def get_sharding(tree, mesh):
    import jax
    from jax.sharding import NamedSharding

    def for_leaf(leaf):
        if hasattr(leaf, 'get_sharding'):
            return leaf.get_sharding(mesh)
        spec = _spec_for(leaf)
        return NamedSharding(mesh, spec) if spec is not None else None
    return jax.tree_util.tree_map(for_leaf, tree, is_leaf=is_axis_metadata)
