# matplotlib in cells, as IPython's inline backend shows it: a headless backend, and every open figure shown (as its
# text) at plt.show() and at the end of the cell, then closed; a program run (`shardscope run script.py`) shows none.
import os
import sys

# shardscope/_inline_backend.py: Agg canvases, plt.show() handled here. Never a GUI backend: cells run without a
# display, in the window's worker thread as well as on a terminal.
BACKEND = "module://shardscope._inline_backend"

_state = {"show": True, "saved_backend": None, "set_backend": False}

# IPython's InlineBackend.rc: the settings its inline backend laid over matplotlib's own until matplotlib-inline 0.1.4
# (tagged 2022-08-16) stopped overriding them ("Remove matplotlib rc overrides", ipython/ipython#10383). A figure was
# 6x4 inches at 72 dpi, `<Figure size 432x288 ...>`; since then it is matplotlib's 6.4x4.8 at 100 dpi, 640x480.
_INLINE_RC_UNTIL_0_1_4 = {
    "figure.figsize": (6.0, 4.0),
    "figure.facecolor": (1, 1, 1, 0),
    "figure.edgecolor": (1, 1, 1, 0),
    "font.size": 10,
    "figure.dpi": 72,
    "figure.subplot.bottom": .125,
}

# The JAX profiles of notebooks run before that release: jax 0.3.16 (August 12, 2022) is the last one out before it,
# jax 0.3.17 (August 31, 2022) the first after.
_FIRST_JAX_WITHOUT_INLINE_RC = (0, 3, 17)


def inline_rc():
    """The rcParams IPython's inline backend set for a notebook of the JAX profile's time ({} from 0.3.17 on)."""
    try:
        import _shardscope
    except ImportError:  # the host alone, without the simulated jax: the newest profile
        return {}
    version = _shardscope.jax_version_info()
    return dict(_INLINE_RC_UNTIL_0_1_4) if version < _FIRST_JAX_WITHOUT_INLINE_RC else {}


def shows_figures():
    """Whether figures are displayed: in notebook cells, not in a program run nor for a recorder of plain repr()
    (SHARDSCOPE_DISPLAY=repr reproduces a script runner, where plt.show() on a headless backend shows nothing)."""
    return _state["show"] and os.environ.get("SHARDSCOPE_DISPLAY") != "repr"


def begin_cell(show):
    """Before a cell runs: picks the backend for a matplotlib the cell may import."""
    _state["show"] = show
    if "matplotlib" not in sys.modules:
        # As ipykernel does, through the variable matplotlib reads at import; the user's own value comes back after
        # the cell (end_cell), so a python3 the cell starts as a subprocess still finds its backend.
        _state["saved_backend"] = os.environ.get("MPLBACKEND")
        os.environ["MPLBACKEND"] = BACKEND
        _state["set_backend"] = True


def _restore_environment():
    if not _state["set_backend"]:
        return
    _state["set_backend"] = False
    if _state["saved_backend"] is None:
        os.environ.pop("MPLBACKEND", None)
    else:
        os.environ["MPLBACKEND"] = _state["saved_backend"]


def _inline_active():
    """Whether pyplot draws with the inline backend (not after matplotlib.use('agg') or another backend)."""
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None or "matplotlib.pyplot" not in sys.modules:
        return False
    try:
        backend = dict.__getitem__(matplotlib.rcParams, "backend")
    except Exception:  # noqa: BLE001 -- a matplotlib the cell broke shows nothing
        return False
    return isinstance(backend, str) and backend.lower() == BACKEND.lower()


def take_figures():
    """The text of every open figure (its repr, what a notebook's display_data holds as text/plain), oldest first;
    the figures are closed, so a later cell does not show them again. Empty when figures are not displayed."""
    if not shows_figures() or not _inline_active():
        return []
    from matplotlib import pyplot
    from matplotlib._pylab_helpers import Gcf

    texts = [repr(manager.canvas.figure) for manager in Gcf.get_all_fig_managers()]
    if texts:
        pyplot.close("all")
    return texts


def show():
    """plt.show(): the open figures are displayed now, in order with what the cell prints, and closed."""
    for text in take_figures():
        sys.stdout.write(text + "\n")


def end_cell():
    """After a cell: the texts of the figures it left open, to display after its value."""
    _restore_environment()
    return take_figures()


def use_inline():
    """`%matplotlib inline`: the inline backend, with the era's settings applied now (as IPython applied them)."""
    import importlib

    import matplotlib

    matplotlib.use(BACKEND)  # nothing to do when pyplot already draws with it
    importlib.import_module(BACKEND[len("module://"):])
    import matplotlib.pyplot  # noqa: F401 -- as IPython's %matplotlib imports pyplot
