# jax.ad_checkpoint: checkpoint (remat), its policies and checkpoint_name.
from jax._src.control_flow import (checkpoint, remat, checkpoint_policies, checkpoint_name,  # noqa: F401
                                   everything_saveable, nothing_saveable, dots_saveable,
                                   dots_with_no_batch_dims_saveable, save_only_these_names,
                                   save_any_names_but_these, save_anything_except_these_names,
                                   save_from_both_policies)
