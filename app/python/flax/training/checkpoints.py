# flax.training.checkpoints: Flax's legacy single-file msgpack checkpoints, saved, pruned and restored on local disk.
# Flax now saves through Orbax unless flax.config.flax_use_orbax_checkpointing is False; this is that legacy path.
import logging
import os
import pathlib
import re
import shutil
import warnings

import numpy as np

from flax import core, serialization

_logger = logging.getLogger('flax.training.checkpoints')

# Single-group regexps for int or float numerical substrings: with and without the sign.
SIGNED_FLOAT_RE = re.compile(r'([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)')
UNSIGNED_FLOAT_RE = re.compile(r'[-+]?((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)')
# Module name followed by number.
MODULE_NUM_RE = re.compile(r'(.*)_\d+$')
SCHEME_RE = re.compile('^(?P<scheme>[a-z][a-z0-9.+-]+://)?(?P<path>.*)', re.I)

MP_ARRAY_POSTFIX = '_gda'
ORBAX_CKPT_FILENAME = 'checkpoint'
ORBAX_MANIFEST_OCDBT = 'manifest.ocdbt'
ORBAX_METADATA_FILENAME = '_METADATA'
# orbax.checkpoint.utils.TMP_DIR_SUFFIX: half-written Orbax directories are never a checkpoint to restore.
_ORBAX_TMP_DIR_SUFFIX = '.orbax-checkpoint-tmp-'

_ERROR_PAGE = 'https://flax.readthedocs.io/en/latest/api_reference/flax.errors.html'


class FlaxError(Exception):
    def __init__(self, message):
        if _ERROR_PAGE not in message:
            message = f'{message} ({_ERROR_PAGE}#{type(self).__module__}.{type(self).__name__})'
        super().__init__(message)


class InvalidCheckpointError(FlaxError):
    """A checkpoint cannot be stored in a directory that already has one at the current or a later step; pass
    overwrite=True to replace them."""

    def __init__(self, path, step):
        super().__init__(f'Trying to save an outdated checkpoint at step: "{step}" and path: "{path}".')


class AlreadyExistsError(FlaxError):
    def __init__(self, path):
        super().__init__(f'Trying overwrite an existing file: "{path}".')


# Real Flax defines these in flax.errors, whose name their messages' links and tracebacks carry.
for _error in (FlaxError, InvalidCheckpointError, AlreadyExistsError):
    _error.__module__ = 'flax.errors'
del _error


def _unsupported(function, argument):
    return NotImplementedError(f'flax.training.checkpoints.{function}: {argument} is not supported by shardscope '
                               '(only the legacy msgpack checkpoints are simulated)')


def _checkpoint_path(ckpt_dir, step, prefix='checkpoint_'):
    return os.path.join(ckpt_dir, f'{prefix}{step}')


def _checkpoint_path_step(path):
    for s in SIGNED_FLOAT_RE.split(path)[::-1]:
        if SIGNED_FLOAT_RE.match(s):
            return float(s)
    return None


def _allowempty_listdir(path):
    try:
        return os.listdir(path)
    except FileNotFoundError:
        return []


def _safe_remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def _is_orbax_checkpoint(path):
    return any(os.path.exists(os.path.join(path, name))
               for name in (ORBAX_CKPT_FILENAME, ORBAX_METADATA_FILENAME, ORBAX_MANIFEST_OCDBT))


def natural_sort(file_list, signed=True):
    """Sorts names with numbers in them by value: file_1, file_2, file_10 (and file_-0.2 before file_0.1 when
    `signed`)."""
    float_re = SIGNED_FLOAT_RE if signed else UNSIGNED_FLOAT_RE

    def maybe_num(s):
        return float(s) if float_re.match(s) else s

    def split_keys(s):
        return [maybe_num(c) for c in float_re.split(s)]

    return sorted(file_list, key=split_keys)


def safe_normpath(path):
    """os.path.normpath that leaves a URL scheme such as gs:// intact."""
    d = SCHEME_RE.match(path).groupdict()
    return (d['scheme'] or '') + os.path.normpath(d['path'])


def _matching_files(dir_path, prefix):
    names = [pathlib.PurePath(c) for c in _allowempty_listdir(dir_path)]
    return [os.path.join(dir_path, c) for c in names if c.match(f'{prefix}*') and not c.match(f'*{MP_ARRAY_POSTFIX}')]


def _remove_invalid_ckpts(ckpt_path, base_path, keep, overwrite, keep_every_n_steps):
    """Removes the checkpoints after this one (when overwriting), then the old ones beyond `keep`, sparing one
    every `keep_every_n_steps` steps."""
    dir_path, prefix = os.path.split(base_path)
    checkpoint_files = natural_sort(_matching_files(dir_path, prefix))
    if overwrite and ckpt_path in checkpoint_files:
        ind = checkpoint_files.index(ckpt_path) + 1
        newer_ckpts = checkpoint_files[ind:]
        checkpoint_files = checkpoint_files[:ind]
        for path in newer_ckpts:
            _logger.info('Removing checkpoint at %s', path)
            _safe_remove(path)
    last_kept = -float('inf')
    if len(checkpoint_files) > keep:
        for path in checkpoint_files[:-keep]:  # oldest first
            if keep_every_n_steps:
                step_number = _checkpoint_path_step(path)
                # As in Flax, step 0 is falsy and so never spared.
                if step_number and (step_number - last_kept) >= keep_every_n_steps:
                    last_kept = step_number
                    continue
            _logger.info('Removing checkpoint at %s', path)
            _safe_remove(path)


def _check_overwrite_error(ckpt_tmp_path, ckpt_path, base_path, step):
    """Raises InvalidCheckpointError if a checkpoint of this step or a later one exists."""
    dir_path, prefix = os.path.split(base_path)
    checkpoint_files = _matching_files(dir_path, prefix)
    if ckpt_path in checkpoint_files:
        raise InvalidCheckpointError(ckpt_path, step)
    checkpoint_files.append(ckpt_path)
    checkpoint_files = natural_sort(checkpoint_files)
    # A temporary file left by a save interrupted before its rename is not a later checkpoint.
    if checkpoint_files[-1] == ckpt_tmp_path:
        checkpoint_files.pop()
    if ckpt_path != checkpoint_files[-1]:
        raise InvalidCheckpointError(ckpt_path, step)


def _rename(src, dst, overwrite=False):
    if os.path.exists(dst) and not overwrite:
        raise AlreadyExistsError(dst)
    os.replace(src, dst)


def _get_checkpoint_paths(ckpt_dir, step, prefix='checkpoint_'):
    ckpt_dir = safe_normpath(os.fspath(ckpt_dir))
    _logger.info('Saving checkpoint at step: %s', step)
    return (_checkpoint_path(ckpt_dir, step, prefix), _checkpoint_path(ckpt_dir, 'tmp', prefix),
            os.path.join(ckpt_dir, prefix))


def save_checkpoint(ckpt_dir, target, step, prefix='checkpoint_', keep=1, overwrite=False, keep_every_n_steps=None,
                    async_manager=None, orbax_checkpointer=None):
    """Saves `target`'s state dict as msgpack to `ckpt_dir`/`prefix``step` and returns that path.

    The file is written under a temporary name and renamed, so a crash never leaves a partial checkpoint; then the
    newest `keep` checkpoints are kept (plus one every `keep_every_n_steps` steps). Without `overwrite`, a
    checkpoint at this or a later step already there raises InvalidCheckpointError."""
    if async_manager is not None:
        raise _unsupported('save_checkpoint', 'async_manager')
    if orbax_checkpointer is not None:
        raise _unsupported('save_checkpoint', 'orbax_checkpointer')
    ckpt_path, ckpt_tmp_path, base_path = _get_checkpoint_paths(ckpt_dir, step, prefix)
    warnings.warn('Flax Checkpointing will soon be deprecated in favor of Orbax (https://github.com/google/orbax).'
                  ' Please refer to the Checkpoint Upgrade Guide'
                  ' (https://flax.readthedocs.io/en/latest/guides/converting_and_upgrading/orbax_upgrade_guide.html)'
                  ' to self-migrate your code to ocp.', DeprecationWarning)
    if not overwrite:
        _check_overwrite_error(ckpt_tmp_path, ckpt_path, base_path, step)
    data = serialization.to_bytes(target)
    os.makedirs(os.path.dirname(ckpt_path), exist_ok=True)
    with open(ckpt_tmp_path, 'wb') as fp:
        fp.write(data)
    _rename(ckpt_tmp_path, ckpt_path, overwrite=overwrite)
    _logger.info('Saved checkpoint at %s', ckpt_path)
    _remove_invalid_ckpts(ckpt_path, base_path, keep, overwrite, keep_every_n_steps)
    return ckpt_path


def _all_checkpoints(ckpt_dir, prefix='checkpoint_'):
    ckpt_dir = os.fspath(ckpt_dir)
    names = [pathlib.PurePath(c) for c in _allowempty_listdir(ckpt_dir)]
    checkpoint_files = [os.path.join(ckpt_dir, c) for c in names
                        if c.match(f'{prefix}*') and not c.match(f'{prefix}tmp')
                        and not c.match(f'*{MP_ARRAY_POSTFIX}') and not c.match(f'*{_ORBAX_TMP_DIR_SUFFIX}*')]
    return natural_sort(checkpoint_files)


def latest_checkpoint(ckpt_dir, prefix='checkpoint_'):
    """The path of the newest checkpoint in `ckpt_dir` (natural sort of the names), or None."""
    checkpoint_files = _all_checkpoints(ckpt_dir, prefix)
    return checkpoint_files[-1] if checkpoint_files else None


def available_steps(ckpt_dir, prefix='checkpoint_', step_type=int):
    """The steps of the checkpoints in `ckpt_dir`, in order."""
    steps = []
    for file in _all_checkpoints(ckpt_dir, prefix):
        prefix_idx = file.rfind(prefix)
        steps.append(step_type(file[prefix_idx + len(prefix):]))
    return steps


def _as_jax_arrays_like(template, state):
    # Not in Flax, whose legacy restore leaves numpy arrays: where the target held a jax array the restored leaf
    # becomes one again (placed by jnp.asarray), so a restored TrainState trains and shards like the one saved.
    # The walk is over state dicts, so from_state_dict still sees Flax's keys, order and mismatches.
    import jax
    import jax.numpy as jnp
    if isinstance(template, dict) and isinstance(state, dict):
        return {key: _as_jax_arrays_like(template[key], value) if key in template else value
                for key, value in state.items()}
    if isinstance(template, jax.Array) and isinstance(state, (np.ndarray, np.generic)):
        return jnp.asarray(state)
    return state


def restore_checkpoint(ckpt_dir, target, step=None, prefix='checkpoint_', parallel=True, gda_manager=None,
                       allow_partial_mpa_restoration=False, orbax_checkpointer=None, orbax_transforms=None):
    """Restores the newest checkpoint in `ckpt_dir` (or the one of `step`, or the file `ckpt_dir` names).

    With a `target`, returns it rebuilt from the checkpoint's state dict; with target=None, the state dict itself
    (numpy arrays as leaves). With no step given and no checkpoint found, returns `target` unchanged."""
    del parallel, allow_partial_mpa_restoration  # a local file is read whole; there are no multiprocess arrays
    for name, value in (('gda_manager', gda_manager), ('orbax_checkpointer', orbax_checkpointer),
                        ('orbax_transforms', orbax_transforms)):
        if value is not None:
            raise _unsupported('restore_checkpoint', name)
    ckpt_dir = safe_normpath(os.fspath(ckpt_dir))
    if step is not None:
        ckpt_path = _checkpoint_path(ckpt_dir, step, prefix)
        if not os.path.exists(ckpt_path):
            raise ValueError(f'Matching checkpoint not found: {ckpt_path}')
    else:
        if not os.path.exists(ckpt_dir):
            _logger.info('Found no checkpoint directory at %s', ckpt_dir)
            return target
        if os.path.isdir(ckpt_dir):
            if _is_orbax_checkpoint(ckpt_dir):
                ckpt_path = ckpt_dir
            else:
                ckpt_path = latest_checkpoint(ckpt_dir, prefix)
                if not ckpt_path:
                    _logger.info('Found no checkpoint files in %s with prefix %s', ckpt_dir, prefix)
                    return target
        else:
            ckpt_path = ckpt_dir
    if _is_orbax_checkpoint(ckpt_path):
        raise NotImplementedError(f'flax.training.checkpoints.restore_checkpoint: {ckpt_path} is an Orbax checkpoint,'
                                  ' which shardscope cannot read (only the legacy msgpack checkpoints are simulated)')
    _logger.info('Restoring legacy Flax checkpoint from %s', ckpt_path)
    with open(ckpt_path, 'rb') as fp:
        state_dict = serialization.msgpack_restore(fp.read())
    if target is None:
        return state_dict
    state_dict = _as_jax_arrays_like(serialization.to_state_dict(target), state_dict)
    return serialization.from_state_dict(target, state_dict)


def convert_pre_linen(params):
    """Renames pre-Linen submodules (numbered across classes: Conv_0, Dense_1) to Linen's per-class numbering
    (Conv_0, Dense_0); Linen-style trees come back unchanged."""
    if not isinstance(params, (dict, core.FrozenDict)):
        return params
    params_renamed = {}
    counts = {}
    for name in natural_sort(params.keys()):
        value = params[name]
        match = MODULE_NUM_RE.match(name)
        if match:
            module = match.group(1)
            num = counts.get(module, 0)
            name = f'{module}_{num}'
            counts[module] = num + 1
        params_renamed[name] = convert_pre_linen(value)
    if isinstance(params, core.FrozenDict):
        params_renamed = core.freeze(params_renamed)
    return params_renamed


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'flax.training.checkpoints.{name} is not supported by shardscope')
