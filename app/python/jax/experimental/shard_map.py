# jax.experimental.shard_map.shard_map: the positional (f, mesh, in_specs, out_specs, check_rep) form.
from jax._src.api import shard_map as _shard_map


def shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep)
