# orbax.checkpoint.args: the argument objects that name what a checkpointer saves or restores.
import dataclasses
from typing import Any


@dataclasses.dataclass
class StandardSave:
    """Save `item`, a pytree of arrays and scalars."""
    item: Any
    save_args: Any = None


@dataclasses.dataclass
class StandardRestore:
    """Restore into `item`'s structure: its leaves (arrays or jax.ShapeDtypeStruct) give each array's shape, dtype
    and sharding. With no item, the saved tree comes back as nested dicts."""
    item: Any = None
    strict: bool = True
