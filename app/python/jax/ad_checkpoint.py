# jax.ad_checkpoint: checkpoint (remat), its policies, checkpoint_name and what the backward pass keeps.
from jax._src.ad_checkpoint import (checkpoint, remat, checkpoint_policies, checkpoint_name,  # noqa: F401
                                    everything_saveable, nothing_saveable, dots_saveable,
                                    dots_with_no_batch_dims_saveable, save_only_these_names,
                                    save_any_names_but_these, save_anything_except_these_names,
                                    save_from_both_policies, save_and_offload_only_these_names,
                                    offload_dot_with_no_batch_dims, Offloadable, Recompute, Saveable,
                                    saved_residuals, print_saved_residuals)

checkpoint_dots = dots_saveable
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable
