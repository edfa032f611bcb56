# orbax.checkpoint.test_utils: the helper the guides use to start from an empty checkpoint directory.
import pathlib
import shutil


def erase_and_create_empty(path):
    """Removes `path` if it exists and creates it empty; returns it as a path object (`/` joins names)."""
    directory = pathlib.Path(path)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    return directory
