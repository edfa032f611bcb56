# jax.tools.colab_tpu: through JAX 0.4.6 setup_tpu connected a Colab TPU (on shardscope the simulated TPU is always
# there); from 0.4.7 it raised, with a shorter message from 0.4.26; JAX 0.9.2 removed the module.
import textwrap

import _shardscope

_VERSION = _shardscope.jax_version_info()
if _VERSION >= (0, 9, 2):
    raise ModuleNotFoundError("No module named 'jax.tools.colab_tpu'", name='jax.tools.colab_tpu')

_OLD_COLAB_MESSAGE = """
As of JAX 0.4.0, JAX only supports TPU VMs, not the older Colab TPUs.

We recommend trying Kaggle Notebooks
(https://www.kaggle.com/code, click on "New Notebook" near the top) which offer
TPU VMs. You have to create an account, log in, and verify your account to get
accelerator support.
Once you do that, there's a new "TPU 1VM v3-8" accelerator option. This gives
you a TPU notebook environment similar to Colab, but using the newer TPU VM
architecture. This should be a less buggy, more performant, and overall better
experience than the older TPU node architecture.

It is also possible to use Colab together with a self-hosted Jupyter kernel
running on a Cloud TPU VM. See
https://research.google.com/colaboratory/local-runtimes.html
for details.
"""


def setup_tpu(tpu_driver_version=None):
    if _VERSION >= (0, 4, 26):
        raise RuntimeError(
            'jax.tools.colab_tpu.setup_tpu() was required for older JAX versions running on older generations of '
            'TPUs, and should no longer be used.')
    if _VERSION >= (0, 4, 7):
        raise RuntimeError(textwrap.dedent(_OLD_COLAB_MESSAGE))
    return None
