# Device-local layouts (jax._src.layout): Layout, Format, Layout.AUTO and the layout an array or compiled program has.
# Layouts are metadata here: values and shardings never depend on them.

import _shardscope


class AutoLayoutSingleton:
    def __repr__(self):
        return 'AUTO'


AutoLayout = AutoLayoutSingleton()


class Layout:
    """A device-local layout: dimension order from major to minor, plus tiling (named DeviceLocalLayout
    before 0.7.0, whose repr spells the private fields with a leading underscore)."""
    AUTO = AutoLayout

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits=0, *, _tiling=None,
                 _sub_byte_element_size_in_bits=None):
        if _tiling is not None:
            tiling = _tiling
        if _sub_byte_element_size_in_bits is not None:
            sub_byte_element_size_in_bits = _sub_byte_element_size_in_bits
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(map(tuple, tiling))
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    # The pre-0.7.0 attribute names.
    _tiling = property(lambda self: self.tiling)
    _sub_byte_element_size_in_bits = property(lambda self: self.sub_byte_element_size_in_bits)

    def __repr__(self):
        if _shardscope.jax_version_info() < (0, 7, 0):
            return (f'DeviceLocalLayout(major_to_minor={self.major_to_minor}, _tiling={self.tiling},'
                    f' _sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})')
        return (f'Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling},'
                f' sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})')

    def __hash__(self):
        return hash((self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits))

    def __eq__(self, other):
        return (isinstance(other, Layout) and self.major_to_minor == other.major_to_minor
                and self.tiling == other.tiling
                and self.sub_byte_element_size_in_bits == other.sub_byte_element_size_in_bits)

    def update(self, **kwargs):
        return Layout(kwargs.get('major_to_minor', self.major_to_minor), kwargs.get('tiling', self.tiling),
                      kwargs.get('sub_byte_element_size_in_bits', self.sub_byte_element_size_in_bits))

    def check_compatible_aval(self, aval_shape):
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError('Length of major_to_minor and the rank of the value should match.'
                             f' Got major_to_minor={self.major_to_minor} and shape={tuple(aval_shape)}')


def _is_sharding(value):
    from jax.sharding import Sharding
    return isinstance(value, (Sharding, _shardscope.NamedSharding, _shardscope.SingleDeviceSharding))


class Format:
    """A layout with the sharding it applies to (named Layout before 0.6.2; its fields were then
    device_local_layout and sharding)."""
    __slots__ = ['layout', 'sharding']

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(f'Sharding has to be concrete when layout is of type {type(layout)}. Please pass a'
                             ' `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` to the sharding'
                             f' argument. Got sharding {sharding}')
        if not isinstance(layout, (Layout, type(None), AutoLayoutSingleton)):
            raise TypeError('Invalid value received for the layout argument. Expected values are `None`,'
                            f' `Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}')
        if sharding is not None and not _is_sharding(sharding):
            raise TypeError('Invalid value received for the sharding argument. Expected values are `None` or an'
                            f' instance of `jax.Sharding`. Got {sharding} of type {type(sharding)}')
        self.layout = layout
        self.sharding = sharding

    @property
    def device_local_layout(self):
        return self.layout

    def __repr__(self):
        if _shardscope.jax_version_info() < (0, 6, 2):
            return f'Layout(device_local_layout={self.layout}, sharding={self.sharding})'
        if _shardscope.jax_version_info() < (0, 7, 0):
            return f'Format(device_local_layout={self.layout}, sharding={self.sharding})'
        return f'Format(layout={self.layout}, sharding={self.sharding})'

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __eq__(self, other):
        return isinstance(other, Format) and self.layout == other.layout and self.sharding == other.sharding


def default_layout(ndim):
    """XLA's default (descending, row-major) layout: minor_to_major (n-1, ..., 0), so major_to_minor 0..n-1."""
    return Layout(tuple(range(ndim)))


def array_layout(array):
    """The layout an array carries: the one it was placed or computed with, else the default."""
    layout = getattr(array, '_shardscope_layout', None)
    return layout if layout is not None else default_layout(len(array.shape))


def set_array_layout(array, layout, committed):
    """Records a layout on an array (a default one is not recorded); committed arrays are checked on calls."""
    if layout is not None and layout != default_layout(len(array.shape)):
        array._shardscope_layout = layout
    if committed:
        array._shardscope_committed_layout = True


def layout_is_committed(array):
    return getattr(array, '_shardscope_committed_layout', False)


def array_format(array):
    return Format(array_layout(array), array.sharding)


def array_format_attribute(array, name):
    """x.format from 0.6.2, x.layout (the Layout pair) before: the other name is not an attribute."""
    if (name == 'format') != (_shardscope.jax_version_info() >= (0, 6, 2)):
        raise AttributeError(f"'ArrayImpl' object has no attribute '{name}'")
    return array_format(array)


# --- Layout.AUTO: the layout the compiler picks for a parameter -------------------------------------------------
def auto_layouts(fun, leaves, name):
    """The layouts XLA:CPU's layout assignment picks for Layout.AUTO parameters: the rule is core's
    (exec/layout_assignment), modelled for one pattern only, a parameter only sliced down to one dimension
    (x[0, :], y[:, 0]) gets that dimension most minor; every other parameter the row-major default."""
    return [Layout(tuple(order)) for order in _shardscope.auto_layouts(fun, leaves, name)]


# --- Formats given to jax.jit ------------------------------------------------------------------------------------
def _is_format_leaf(x):
    return x is None or isinstance(x, Format)


def has_formats(shardings):
    from jax._src import tree as tree_util
    return any(isinstance(leaf, Format) for leaf in tree_util.tree_leaves(shardings, is_leaf=_is_format_leaf))


def strip_formats(shardings):
    """in_shardings/out_shardings with each Format replaced by its sharding (None where it has none)."""
    if not has_formats(shardings):
        return shardings
    from jax._src import tree as tree_util
    if isinstance(shardings, Format):
        return shardings.sharding
    stripped = tree_util.tree_map(lambda x: x.sharding if isinstance(x, Format) else x, shardings,
                                  is_leaf=_is_format_leaf)
    if all(leaf is None for leaf in tree_util.tree_leaves(stripped, is_leaf=lambda x: x is None)):
        return None
    return stripped


def layouts_per_leaf(formats, count):
    """The layout (a Layout, AUTO or None) jit was given for each of `count` flattened leaves: one Format covers
    all, a tree with one entry per leaf gives each its own."""
    from jax._src import tree as tree_util
    if formats is None:
        return [None] * count
    entries = tree_util.tree_leaves(formats, is_leaf=_is_format_leaf)
    if len(entries) == 1:
        entries = entries * count
    if len(entries) != count:
        return [None] * count
    return [e.layout if isinstance(e, Format) else None for e in entries]


def resolve_layouts(requested, ranks, auto, args=None):
    """Concrete layouts: a requested Layout as given, AUTO as the compiler picks (`auto()` per leaf, computed
    only when needed), unspecified as the committed argument's own or else the default."""
    picked = None
    out = []
    for i, (layout, rank) in enumerate(zip(requested, ranks)):
        if isinstance(layout, Layout):
            layout.check_compatible_aval((0,) * rank)
            out.append(layout)
        elif isinstance(layout, AutoLayoutSingleton):
            picked = auto() if picked is None else picked
            out.append(picked[i])
        elif args is not None and layout_is_committed(args[i]):
            out.append(array_layout(args[i]))  # pjit: a committed argument's layout is compiled for
        else:
            out.append(default_layout(rank))
    return out


def check_arg_layouts(args, required):
    """A compiled executable rejects a committed argument whose layout differs from the one it was compiled
    for; uncommitted arguments are relaid out. (JAX's compiled-call path words this in jaxlib; the text is
    pjit's for the same mismatch.)"""
    from jax._src.array_methods import ArrayImpl
    for arg, layout in zip(args, required):
        if type(arg) is not ArrayImpl or not layout_is_committed(arg):
            continue
        arg_layout = array_layout(arg)
        if arg_layout != layout:
            raise ValueError('Layout passed to jit does not match the layout on the respective arg. '
                             f'Got jit layout: {layout},\narg layout: {arg_layout} for arg type: {arg.aval}.')
