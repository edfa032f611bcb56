# StandardCheckpointer: each leaf of the saved tree is stored whole under its key path (jax.tree_util's keystr) in
# one .npz file beside a JSON list of the paths; restoring places every array on the target leaf's sharding.
import json
import os
import pathlib
import shutil

import numpy as np

import jax
from orbax.checkpoint import args as _args

_ARRAYS = 'arrays.npz'
_METADATA = '_METADATA'


def _leaves_with_paths(tree):
    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    return [(jax.tree_util.keystr(path), leaf) for path, leaf in leaves], treedef


def _nested(paths_and_values):
    """The saved tree without a target: nested dicts keyed by the path's names and indices."""
    import re
    root = {}
    for path, value in paths_and_values:
        keys = [k for k in re.findall(r"\[(?:'([^']*)'|(\d+))\]|\.(\w+)", path)]
        names = [a or (int(b) if b else c) for a, b, c in keys]
        node = root
        for name in names[:-1]:
            node = node.setdefault(name, {})
        if names:
            node[names[-1]] = value
        else:
            root = value
    return root


class Checkpointer:
    """A checkpointer whose save and restore take orbax.checkpoint.args objects (or the tree directly)."""

    def __init__(self, handler=None, **kwargs):
        del handler, kwargs

    def save(self, directory, state=None, *, args=None, force=False):
        if args is not None:
            if not isinstance(args, _args.StandardSave):
                raise TypeError(f'save takes args=ocp.args.StandardSave(...), got {type(args).__name__}')
            state = args.item
        if state is None:
            raise ValueError('save needs the tree to save (state, or args=ocp.args.StandardSave(state))')
        directory = pathlib.Path(os.fspath(directory))
        if directory.exists():
            if not force:
                raise ValueError(f'Destination {directory} already exists.')
            shutil.rmtree(directory)
        leaves, _ = _leaves_with_paths(state)
        arrays = {}
        metadata = []
        for i, (path, leaf) in enumerate(leaves):
            value = np.asarray(jax.device_get(leaf))
            arrays[f'leaf_{i}'] = value
            metadata.append({'path': path, 'shape': list(value.shape), 'dtype': str(value.dtype)})
        directory.mkdir(parents=True)
        with open(directory / _ARRAYS, 'wb') as f:
            np.savez(f, **arrays)
        (directory / _METADATA).write_text(json.dumps({'leaves': metadata}))

    def restore(self, directory, target=None, *, args=None, strict=True):
        if args is not None:
            if not isinstance(args, _args.StandardRestore):
                raise TypeError(f'restore takes args=ocp.args.StandardRestore(...), got {type(args).__name__}')
            target, strict = args.item, args.strict
        directory = pathlib.Path(os.fspath(directory))
        if not (directory / _METADATA).is_file():
            raise FileNotFoundError(f'No checkpoint found at {directory}.')
        metadata = json.loads((directory / _METADATA).read_text())['leaves']
        with np.load(directory / _ARRAYS) as stored:
            saved = {entry['path']: stored[f'leaf_{i}'] for i, entry in enumerate(metadata)}
        if target is None:
            return _nested([(entry['path'], jax.numpy.asarray(saved[entry['path']])) for entry in metadata])
        leaves, treedef = _leaves_with_paths(target)
        restored = []
        for path, leaf in leaves:
            if path not in saved:
                if strict:
                    raise ValueError(f'The checkpoint at {directory} has no value for {path}; it holds '
                                     f'{", ".join(e["path"] for e in metadata)}')
                restored.append(leaf)
                continue
            value = saved[path]
            shape = getattr(leaf, 'shape', None)
            if shape is not None and tuple(shape) != value.shape:
                raise ValueError(f'Requested shape {tuple(shape)} for {path} differs from the saved shape '
                                 f'{value.shape}.')
            dtype = getattr(leaf, 'dtype', None)
            if dtype is not None:
                value = value.astype(dtype)
            sharding = getattr(leaf, 'sharding', None)
            restored.append(jax.device_put(value, sharding) if sharding is not None else jax.numpy.asarray(value))
        return jax.tree_util.tree_unflatten(treedef, restored)

    def wait_until_finished(self):
        """Saves finish before save returns here: nothing to wait for."""

    def close(self):
        """Nothing is held open between calls."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class StandardCheckpointer(Checkpointer):
    """Saves and restores a pytree of arrays: save(directory, state), restore(directory, target)."""
