"""shardscope's own tools beside the simulated jax: estimates that go beyond what JAX reports.

    import shardscope
    report = shardscope.explain(jax.jit(f), x, w)   # lowers f for these arguments, nothing runs
    report                 # the table: equations and collectives with bytes, FLOPs, time, bound, reason
    report.rows            # one dict per row; report.to_csv(), report.to_markdown()

Everything here is shardscope's estimate on public hardware figures, never JAX output.
"""

__all__ = ['explain', 'Explanation', 'notation', 'Notation', 'display']


class Explanation:
    """One program's explanation: rows (equations and the collectives before them), totals and memory fit."""

    def __init__(self, data):
        self._data = data
        self.rows = data['rows']
        self.hardware = data['hardware']
        self.compute_s = data['compute_s']
        self.memory_s = data['memory_s']
        self.communication_s = data['communication_s']
        self.serial_s = data['serial_s']
        self.overlapped_s = data['overlapped_s']
        self.bound = data['bound']
        self.peak_memory_bytes = data['peak_memory_bytes']
        self.memory_capacity_bytes = data['memory_capacity_bytes']
        self.memory_fit = data['memory_fit']

    @property
    def collectives(self):
        return [row for row in self.rows if row['kind'] != 'equation']

    @property
    def equations(self):
        return [row for row in self.rows if row['kind'] == 'equation']

    def to_text(self):
        return self._data['text']

    def to_markdown(self):
        return self._data['markdown']

    def to_csv(self):
        return self._data['csv']

    def __repr__(self):
        return self._data['text'].rstrip('\n')

    def _repr_markdown_(self):
        return self._data['markdown']


def explain(fun, *args, hardware=None, **kwargs):
    """Lowers jitted `fun` for `args` (arrays or jax.ShapeDtypeStruct) and explains the partitioned program.

    `hardware` names a device kind from shardscope's table (e.g. 'TPU v5 lite', 'NVIDIA H100 80GB HBM3') to
    price the plan on instead of the mesh's own devices.
    """
    import jax
    from jax._src import jit as _jit
    if not hasattr(fun, 'lower'):
        fun = jax.jit(fun)
    lowered = fun.lower(*args, **kwargs)
    inner = getattr(fun, '_fun', fun)
    name = _jit._name(inner) if hasattr(_jit, '_name') else getattr(inner, '__name__', 'f')
    if hardware is not None and not isinstance(hardware, str):
        raise TypeError(f'hardware must be a device kind string, got {type(hardware).__name__}: {hardware!r}')
    import _shardscope
    return Explanation(_shardscope.explain_lowered(lowered._lowered, name, hardware))


class Notation:
    """One sharding in several notations: JAX's spec and type, the scaling book's, Shardy's and XLA's."""

    def __init__(self, data, typeof):
        self.spec = data['spec']
        self.typeof = typeof
        self.book = data['book']
        self.shardy = data['shardy']
        self.shardy_mesh = data['shardy_mesh']
        self.hlo = data['hlo']
        self._text = data['text']

    def __repr__(self):
        lines = self._text.rstrip('\n').split('\n')
        if self.typeof is not None:
            lines.insert(2, 'jax.typeof:    ' + self.typeof)
        return '\n'.join(lines)


def notation(x, shape=None):
    """The notations of `x`'s sharding (an array), or of a NamedSharding for an array of `shape`."""
    import jax
    import _shardscope
    from jax.sharding import NamedSharding
    if isinstance(x, NamedSharding):
        if shape is None:
            raise TypeError('notation(sharding) needs the array shape: notation(sharding, shape=(8, 8))')
        return Notation(_shardscope.sharding_notations(x, len(shape)), None)
    sharding = getattr(x, 'sharding', None)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f'notation needs an array on a mesh (a NamedSharding), got {type(x).__name__} with '
                        f'sharding {sharding!r}')
    return Notation(_shardscope.sharding_notations(sharding, len(x.shape)), str(jax.typeof(x)))


def display(x):
    """Shows how `x` (a jax.Array, or anything with .shape and .sharding) is laid out over its devices.

    In a notebook the coloured grid is an SVG picture (an image/svg+xml display, with the text grid as its
    text/plain); elsewhere the text grid is printed, as jax.debug.visualize_array_sharding prints it.
    """
    import sys
    import _shardscope
    from jax import debug
    shape = tuple(x.shape)
    sharding = x.sharding
    text = _shardscope.visualize_sharding(shape, sharding)
    if debug._jupyter_shell() is None:
        sys.stdout.write(text)
        return
    from IPython.display import display as ipython_display
    ipython_display({'image/svg+xml': _shardscope.sharding_svg(shape, sharding), 'text/plain': text.rstrip('\n')},
                    raw=True)
