"""The matplotlib backend of shardscope's cells (module://shardscope._inline_backend), after IPython's inline backend.

Figures draw on Agg canvases and never open a window. plt.show() and the end of a cell display every open figure as
its text (`<Figure size 640x480 with 1 Axes>`) and close it; a program run shows nothing. Which figures to show and
when is the host's (_shardscope_host_figures); this module is what matplotlib loads.
"""
import matplotlib
from matplotlib.backends.backend_agg import (  # noqa: F401 -- the backend's interface, as matplotlib_inline's
    FigureCanvasAgg,
    new_figure_manager,
    new_figure_manager_given_figure,
)

import _shardscope_host_figures as _host

FigureCanvas = FigureCanvasAgg

# IPython's InlineBackend.rc: the settings its inline backend laid over matplotlib's own until matplotlib-inline 0.1.4
# (tagged 2022-08-16) stopped overriding them ("Remove matplotlib rc overrides", ipython/ipython#10383). A figure was
# 6x4 inches at 72 dpi, `<Figure size 432x288 ...>`; since then it is matplotlib's 6.4x4.8 at 100 dpi, 640x480.
_INLINE_RC_UNTIL_0_1_4 = {
    'figure.figsize': (6.0, 4.0),
    'figure.facecolor': (1, 1, 1, 0),
    'figure.edgecolor': (1, 1, 1, 0),
    'font.size': 10,
    'figure.dpi': 72,
    'figure.subplot.bottom': .125,
}

# The JAX profiles of notebooks run before that release: jax 0.3.16 (August 12, 2022) is the last one out before it,
# jax 0.3.17 (August 31, 2022) the first after.
_FIRST_JAX_WITHOUT_INLINE_RC = (0, 3, 17)


def _profile_version():
    try:
        import _shardscope
    except ImportError:  # the host alone, without the simulated jax: the newest profile
        return None
    return tuple(int(part) for part in _shardscope.jax_version().split('.')[:3])


def _apply_era_settings():
    version = _profile_version()
    if not _host.shows_figures() or version is None or version >= _FIRST_JAX_WITHOUT_INLINE_RC:
        return
    # IPython applied its rc as pyplot's backend loaded, once the notebook imported pyplot; a setting the notebook
    # changed before that (here: before its first figure loads the backend) is kept.
    for key, value in _INLINE_RC_UNTIL_0_1_4.items():
        if matplotlib.rcParams[key] == matplotlib.rcParamsDefault[key]:
            matplotlib.rcParams[key] = value


def show(close=None, block=None):
    """plt.show(): in a notebook cell the open figures are displayed and closed; in a program run nothing happens,
    as under `python script.py` with a headless backend (the figures stay open for savefig)."""
    _host.show()


def draw_if_interactive():
    # The inline backend draws when a figure is displayed, not after every pyplot call.
    pass


_apply_era_settings()
if _host.shows_figures():
    matplotlib.interactive(True)  # as IPython's activate_matplotlib
