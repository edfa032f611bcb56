"""shardscope's own tools beside the simulated jax: estimates that go beyond what JAX reports.

    import shardscope
    report = shardscope.explain(jax.jit(f), x, w)   # lowers f for these arguments, nothing runs
    report                 # the table: equations and collectives with bytes, FLOPs, time, bound, reason
    report.rows            # one dict per row; report.to_csv(), report.to_markdown()
    report.why(0)          # why the first collective runs: the layouts behind it, back to the arguments
    shardscope.compare(jax.jit(f), x, w, preset='tpu-v5p-8')          # the same plan on other hardware
    shardscope.compare(jax.jit(f), x, w, specs={'w': P('model', None)})  # another layout for w

Everything here is shardscope's estimate on public hardware figures, never JAX output.
"""

__all__ = ['explain', 'Explanation', 'compare', 'Comparison', 'notation', 'Notation', 'display', 'use_devices']


class _Text(str):
    """Prose that shows as itself at the prompt (not as a quoted string)."""

    def __repr__(self):
        return str(self).rstrip('\n')


class _Report:
    """A report rendered three ways by the engine: text (its repr), Markdown (a notebook's rendering) and CSV."""

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


class Explanation(_Report):
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

    def why(self, collective=None):
        """Why collective `collective` (its index in .collectives) runs: the op that needs it and where each layout
        came from, back to the arguments, constraints and out_shardings. With no index: every collective's answer,
        then why each result is laid out as it is."""
        answers = self._data['why_collectives']
        if collective is None:
            return _Text(''.join(answers) + ''.join(self._data['why_results']))
        if isinstance(collective, bool) or not isinstance(collective, int):
            raise TypeError(f'why takes a collective index (int), got {type(collective).__name__}: {collective!r}')
        if not -len(answers) <= collective < len(answers):
            raise IndexError(f'the program has {len(answers)} collectives; got index {collective}')
        return _Text(answers[collective])



def explain(fun, *args, hardware=None, **kwargs):
    """Lowers jitted `fun` for `args` (arrays or jax.ShapeDtypeStruct) and explains the partitioned program.

    `hardware` names a device kind from shardscope's table (e.g. 'TPU v5 lite', 'NVIDIA H100 80GB HBM3') to
    price the plan on instead of the mesh's own devices.
    """
    if hardware is not None and not isinstance(hardware, str):
        raise TypeError(f'hardware must be a device kind string, got {type(hardware).__name__}: {hardware!r}')
    lowered, name = _lowered_and_name(fun, args, kwargs)
    import _shardscope
    return Explanation(_shardscope.explain_lowered(lowered._lowered, name, hardware))


class Comparison(_Report):
    """Two explanations of one program side by side: quantities with their deltas, the collectives that differ,
    and the verdict (which side wins and why)."""

    def __init__(self, data):
        self._data = data
        self.base_label = data['base_label']
        self.other_label = data['other_label']
        self.base_serial_s = data['base_serial_s']
        self.other_serial_s = data['other_serial_s']
        self.verdict = data['verdict']
        self.quantities = data['quantities']
        self.differences = data['differences']



def _lowered_and_name(fun, args, kwargs):
    import jax
    from jax._src import jit as _jit
    if not hasattr(fun, 'lower'):
        fun = jax.jit(fun)
    lowered = fun.lower(*args, **kwargs)
    inner = getattr(fun, '_fun', fun)
    name = _jit._name(inner) if hasattr(_jit, '_name') else getattr(inner, '__name__', 'f')
    return lowered, name


def _argument_label(fun, argument):
    """'args[i]' for an argument given by position or by its parameter name in `fun`'s signature."""
    import inspect
    if isinstance(argument, int) and not isinstance(argument, bool):
        return f'args[{argument}]'
    inner = getattr(fun, '_fun', fun)
    try:
        names = [p.name for p in inspect.signature(inner).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    if argument in names:
        return f'args[{names.index(argument)}]'
    return str(argument)


def compare(fun, *args, preset=None, specs=None, hardware=None, **kwargs):
    """Explains jitted `fun` for `args` as lowered and once more otherwise, side by side.

    `preset` names a device preset ('tpu-v5p-8': the mesh's axes laid on its devices) or a device kind
    ('TPU v5 lite': the same devices priced on its figures). `specs` maps arguments (by name, or by position)
    to PartitionSpecs laid on the mesh they already use, and sharding propagation runs again. Give either or both.
    `hardware` prices both sides on a device kind, as in explain().
    """
    from jax.sharding import PartitionSpec
    if preset is None and not specs:
        raise ValueError('compare needs preset= (a device preset or device kind) or specs= ({argument: P(...)})')
    if preset is not None and not isinstance(preset, str):
        raise TypeError(f'preset must be a device preset or device kind string, got {type(preset).__name__}: '
                        f'{preset!r}')
    if hardware is not None and not isinstance(hardware, str):
        raise TypeError(f'hardware must be a device kind string, got {type(hardware).__name__}: {hardware!r}')
    pairs = []
    labels = [preset] if preset is not None else []
    for argument, spec in (specs or {}).items():
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f'specs[{argument!r}] must be a PartitionSpec, got {type(spec).__name__}: {spec!r}')
        pairs.append((_argument_label(fun, argument), spec))
        labels.append(f'{argument}={spec!r}')
    lowered, name = _lowered_and_name(fun, args, kwargs)
    import _shardscope
    return Comparison(_shardscope.compare_lowered(lowered._lowered, name, preset, pairs, hardware, ', '.join(labels)))


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


def use_devices(preset):
    """Switches the simulated devices to a preset ('cpu:8', 'tpu-v5e-16', ...), as `--devices` does at start.

    Arrays made before keep their old devices: clear the namespace first (the window's preset switch does).
    An unknown preset raises ValueError naming it.
    """
    import _shardscope
    if not isinstance(preset, str):
        raise TypeError(f'use_devices takes a preset name (str), got {type(preset).__name__}: {preset!r}')
    _shardscope.set_device_preset(preset)
