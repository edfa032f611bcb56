# flax.training.checkpoints: Flax's legacy one-file msgpack checkpoints on local disk: save, prune, find, restore.
# Orbax (Flax's default format) and asynchronous saving are not simulated: their arguments are refused by name.
import logging
import os
import pathlib
import re
import shutil
import warnings

import numpy as np

import jax
from flax import core
from flax import serialization

_log = logging.getLogger('flax.training.checkpoints')

# A number in a file name: digits with an optional fraction, or a bare fraction; then an optional exponent.
_NUMBER = r'(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?'
_WITH_SIGN = re.compile(f'([-+]?{_NUMBER})')
_WITHOUT_SIGN = re.compile(f'[-+]?({_NUMBER})')
_NUMBERED_MODULE = re.compile(r'(?P<module>.*)_\d+$')
_URL_SCHEME = re.compile(r'([a-z][a-z0-9+.-]+://)?(.*)', re.IGNORECASE)

# Companion files of multiprocess arrays, never checkpoints themselves.
_MULTIPROCESS_SUFFIX = '_gda'
# Any of these inside a directory makes it an Orbax checkpoint.
_ORBAX_MARKERS = ('checkpoint', '_METADATA', 'manifest.ocdbt')
# Orbax's name for a directory it is still writing.
_ORBAX_UNFINISHED = '.orbax-checkpoint-tmp-'

_ORBAX_NOTICE = ('Flax Checkpointing will soon be deprecated in favor of Orbax (https://github.com/google/orbax).'
                 ' Please refer to the Checkpoint Upgrade Guide'
                 ' (https://flax.readthedocs.io/en/latest/guides/converting_and_upgrading/orbax_upgrade_guide.html)'
                 ' to self-migrate your code to ocp.')
_ERRORS_PAGE = 'https://flax.readthedocs.io/en/latest/api_reference/flax.errors.html'


class FlaxError(Exception):
    """Base of Flax's documented errors, whose messages end with a link to their entry in the docs."""
    __module__ = 'flax.errors'  # where real Flax defines them; the links and tracebacks name it

    def __init__(self, message):
        cls = type(self)
        if _ERRORS_PAGE not in message:
            message = f'{message} ({_ERRORS_PAGE}#{cls.__module__}.{cls.__name__})'
        super().__init__(message)


class InvalidCheckpointError(FlaxError):
    """Raised when saving a step at or before the newest checkpoint already in the directory; overwrite=True
    replaces them instead."""
    __module__ = 'flax.errors'

    def __init__(self, path, step):
        super().__init__(f'Trying to save an outdated checkpoint at step: "{step}" and path: "{path}".')


class AlreadyExistsError(FlaxError):
    """Raised when a save would replace an existing file without overwrite=True."""
    __module__ = 'flax.errors'

    def __init__(self, path):
        super().__init__(f'Trying overwrite an existing file: "{path}".')


def _refuse_given(function, **optional):
    """Raises NotImplementedError naming the first of the Orbax or async arguments that was passed."""
    for argument, value in optional.items():
        if value is not None:
            raise NotImplementedError(f'flax.training.checkpoints.{function}: {argument} is not supported by'
                                      ' shardscope (only the legacy msgpack checkpoints are simulated)')


def natural_sort(file_list, signed=True):
    """`file_list` sorted with the numbers in names compared by value: file_1, file_2, file_10 (and, when
    `signed`, file_-0.2 before file_0.1)."""
    number = _WITH_SIGN if signed else _WITHOUT_SIGN

    def key(name):
        # split() with one group alternates text and the captured numbers, so every odd piece is a number.
        return [float(piece) if index % 2 else piece for index, piece in enumerate(number.split(name))]

    return sorted(file_list, key=key)


def safe_normpath(path):
    """Normalises a path like os.path.normpath, but keeps a leading scheme (gs://, s3://) from being squashed."""
    scheme, rest = _URL_SCHEME.match(path).groups()
    return (scheme or '') + os.path.normpath(rest)


def _step_file(directory, step, prefix):
    return os.path.join(directory, f'{prefix}{step}')


def _last_number(path):
    numbers = _WITH_SIGN.findall(path)
    return float(numbers[-1]) if numbers else None


def _listed(directory, prefix, *skipped):
    """Paths in `directory` whose names match the glob `prefix`*, apart from multiprocess-array companions and
    names matching a `skipped` glob. A missing directory lists nothing."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    skipped = (f'*{_MULTIPROCESS_SUFFIX}',) + skipped
    paths = []
    for name in names:
        glob = pathlib.PurePath(name)
        if glob.match(f'{prefix}*') and not any(glob.match(pattern) for pattern in skipped):
            paths.append(os.path.join(directory, name))
    return paths


def _checkpoints_in(ckpt_dir, prefix):
    """Finished checkpoints in `ckpt_dir`, oldest first: no save's temporary file, no half-written Orbax one."""
    directory = os.fspath(ckpt_dir)
    return natural_sort(_listed(directory, prefix, f'{prefix}tmp', f'*{_ORBAX_UNFINISHED}*'))


def _is_orbax(path):
    return any(os.path.exists(os.path.join(path, marker)) for marker in _ORBAX_MARKERS)


def _delete(path):
    _log.info('Removing checkpoint at %s', path)
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def _reject_outdated(final, staging, base, step):
    directory, prefix = os.path.split(base)
    existing = _listed(directory, prefix)
    if final not in existing:
        newest_first = natural_sort(existing + [final])[::-1]
        # A temporary file left by an interrupted save sorts after every step yet is no newer checkpoint.
        if newest_first[0] == staging:
            newest_first.pop(0)
        if newest_first[0] == final:
            return
    raise InvalidCheckpointError(final, step)


def _prune(final, base, keep, overwrite, keep_every_n_steps):
    directory, prefix = os.path.split(base)
    kept = natural_sort(_listed(directory, prefix))
    if overwrite and final in kept:
        # Saving an older step over newer ones rewinds the run: the later checkpoints go.
        end = kept.index(final) + 1
        for path in kept[end:]:
            _delete(path)
        kept = kept[:end]
    surplus = kept[:-keep] if len(kept) > keep else []
    last_spared = -float('inf')
    for path in surplus:  # oldest first, so each spared step is measured from the one spared before it
        if keep_every_n_steps:
            step = _last_number(path)
            # A step of 0 tests false, so it is never spared: Flax behaves the same way.
            if step and step - last_spared >= keep_every_n_steps:
                last_spared = step
                continue
        _delete(path)


def save_checkpoint(ckpt_dir, target, step, prefix='checkpoint_', keep=1, overwrite=False, keep_every_n_steps=None,
                    async_manager=None, orbax_checkpointer=None):
    """Stores to_bytes(target) in the file `prefix``step` under `ckpt_dir`; the file's path is returned.

    Only the newest `keep` checkpoints stay, with one every `keep_every_n_steps` steps among the older ones.
    Without `overwrite`, a checkpoint already there at this or a later step raises InvalidCheckpointError; with it,
    this step's file is replaced and later ones are removed."""
    _refuse_given('save_checkpoint', async_manager=async_manager, orbax_checkpointer=orbax_checkpointer)
    directory = safe_normpath(os.fspath(ckpt_dir))
    _log.info('Saving checkpoint at step: %s', step)
    final = _step_file(directory, step, prefix)
    staging = _step_file(directory, 'tmp', prefix)
    base = os.path.join(directory, prefix)
    warnings.warn(_ORBAX_NOTICE, DeprecationWarning)
    if not overwrite:
        _reject_outdated(final, staging, base, step)
    encoded = serialization.to_bytes(target)
    os.makedirs(os.path.dirname(final), exist_ok=True)
    # Written under the temporary name and then renamed, so a crash never leaves a truncated checkpoint.
    with open(staging, 'wb') as out:
        out.write(encoded)
    if os.path.exists(final) and not overwrite:
        raise AlreadyExistsError(final)
    os.replace(staging, final)
    _log.info('Saved checkpoint at %s', final)
    _prune(final, base, keep, overwrite, keep_every_n_steps)
    return final


def latest_checkpoint(ckpt_dir, prefix='checkpoint_'):
    """Path of the checkpoint whose name sorts last (numbers by value), None for an empty or missing directory."""
    found = _checkpoints_in(ckpt_dir, prefix)
    return found[-1] if found else None


def available_steps(ckpt_dir, prefix='checkpoint_', step_type=int):
    """Step of each checkpoint in `ckpt_dir` (the name after `prefix`, through `step_type`), ascending."""
    return [step_type(path[path.rfind(prefix) + len(prefix):]) for path in _checkpoints_in(ckpt_dir, prefix)]


def _source(location, step, prefix):
    """The file to read, or None when no step was named and there is nothing to restore."""
    if step is not None:
        path = _step_file(location, step, prefix)
        if not os.path.exists(path):
            raise ValueError(f'Matching checkpoint not found: {path}')
        return path
    if not os.path.exists(location):
        _log.info('Found no checkpoint directory at %s', location)
        return None
    if not os.path.isdir(location) or _is_orbax(location):
        return location
    newest = latest_checkpoint(location, prefix)
    if not newest:
        _log.info('Found no checkpoint files in %s with prefix %s', location, prefix)
    return newest


def _rejax(template, state):
    # A shardscope addition: with numpy leaves a restored TrainState could not take sharded steps, so each leaf
    # whose counterpart in the target is a jax array is converted back. Working on the two state dicts leaves every
    # key mismatch for from_state_dict to report, exactly as it would without this step.
    if isinstance(template, jax.Array):
        return jax.numpy.asarray(state) if isinstance(state, (np.ndarray, np.generic)) else state
    if not (isinstance(template, dict) and isinstance(state, dict)):
        return state
    return {key: _rejax(template[key], sub) if key in template else sub for key, sub in state.items()}


def restore_checkpoint(ckpt_dir, target, step=None, prefix='checkpoint_', parallel=True, gda_manager=None,
                       allow_partial_mpa_restoration=False, orbax_checkpointer=None, orbax_transforms=None):
    """Reads a checkpoint: `ckpt_dir` itself when it is a file, else the given `step`, else the newest one.

    Returns `target` rebuilt from the checkpoint, or with target=None the state dict itself (numpy leaves). When no
    step is named and nothing is found, `target` comes back unchanged."""
    del parallel, allow_partial_mpa_restoration  # irrelevant to one local msgpack file without multiprocess arrays
    _refuse_given('restore_checkpoint', gda_manager=gda_manager, orbax_checkpointer=orbax_checkpointer,
                  orbax_transforms=orbax_transforms)
    path = _source(safe_normpath(os.fspath(ckpt_dir)), step, prefix)
    if path is None:
        return target
    if _is_orbax(path):
        raise NotImplementedError(f'flax.training.checkpoints.restore_checkpoint: {path} is an Orbax checkpoint,'
                                  ' which shardscope cannot read (only the legacy msgpack checkpoints are simulated)')
    _log.info('Restoring legacy Flax checkpoint from %s', path)
    with open(path, 'rb') as source:
        state = serialization.msgpack_restore(source.read())
    if target is None:
        return state
    return serialization.from_state_dict(target, _rejax(serialization.to_state_dict(target), state))


def convert_pre_linen(params):
    """Params of a pre-Linen model with submodules renumbered the Linen way: pre-Linen counted across classes
    (Conv_0, Dense_1) where Linen counts per class (Conv_0, Dense_0). Non-mapping values pass through as is."""
    frozen = isinstance(params, core.FrozenDict)
    if not (frozen or isinstance(params, dict)):
        return params
    counts = {}
    renamed = {}
    for name in natural_sort(params):
        new_name = name
        numbered = _NUMBERED_MODULE.match(name)
        if numbered:
            module = numbered.group('module')
            index = counts.get(module, 0)
            counts[module] = index + 1
            new_name = f'{module}_{index}'
        renamed[new_name] = convert_pre_linen(params[name])
    return core.freeze(renamed) if frozen else renamed


def __getattr__(name):
    # The rest of Flax's module (Orbax and multiprocess helpers) is not simulated, and should say so when named.
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'flax.training.checkpoints.{name} is not supported by shardscope')
