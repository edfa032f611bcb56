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


def _apply_era_settings():
    if not _host.shows_figures():
        return
    # IPython applied its rc as pyplot's backend loaded, once the notebook imported pyplot; a setting the notebook
    # changed before that (here: before its first figure loads the backend) is kept.
    for key, value in _host.inline_rc().items():
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
