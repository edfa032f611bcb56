# flax.nnx.reprlib: the text reprs NNX objects print (Object/Attr generators), as Flax builds them: str() in
# Flax's colours where it finds a terminal or a notebook, repr() always without.
import dataclasses
import os
import sys
import typing as tp


def supports_color():
    """Flax colours when stdout is a terminal or IPython runs the code. A replayed notebook recording stands for
    IPython with FORCE_COLOR (the switch its coloured rich and termcolor output needs as well)."""
    import builtins
    get_ipython = getattr(builtins, 'get_ipython', None)
    if get_ipython is not None and get_ipython() is not None:
        return True
    is_a_tty = hasattr(sys.stdout, 'isatty') and sys.stdout.isatty()
    return is_a_tty or bool(os.environ.get('FORCE_COLOR'))


class Color(tp.NamedTuple):
    TYPE: str
    ATTRIBUTE: str
    SEP: str
    PAREN: str
    COMMENT: str
    INT: str
    STRING: str
    FLOAT: str
    BOOL: str
    NONE: str
    END: str


NO_COLOR = Color(*([''] * 11))
# Flax's palette (VS Code's Python theme).
COLOR = Color(TYPE='\x1b[38;2;79;201;177m', ATTRIBUTE='\x1b[38;2;156;220;254m', SEP='\x1b[38;2;212;212;212m',
              PAREN='\x1b[38;2;255;213;3m', COMMENT='\x1b[38;2;105;105;105m', INT='\x1b[38;2;182;207;169m',
              STRING='\x1b[38;2;207;144;120m', FLOAT='\x1b[38;2;182;207;169m', BOOL='\x1b[38;2;86;156;214m',
              NONE='\x1b[38;2;86;156;214m', END='\x1b[0m')
_CONTEXT = {'color': None}  # the palette of the repr being built; None outside one


def _current_color():
    color = _CONTEXT['color']
    if color is None:
        color = COLOR if supports_color() else NO_COLOR
    return color


@dataclasses.dataclass
class Object:
    type: tp.Any
    start: str = '('
    end: str = ')'
    kv_sep: str = '='
    indent: str = '  '
    empty_repr: str = ''
    comment: str = ''
    same_line: bool = False

    @property
    def elem_sep(self):
        return ', ' if self.same_line else ',\n'


@dataclasses.dataclass
class Attr:
    key: str
    value: tp.Any
    start: str = ''
    end: str = ''
    use_raw_value: bool = False
    use_raw_key: bool = False


def colorized(x):
    # Containers recurse, types print their name, scalars their repr, each in its colour.
    c = _current_color()
    if isinstance(x, list):
        return f'{c.PAREN}[{c.END}' + ', '.join(colorized(i) for i in x) + f'{c.PAREN}]{c.END}'
    if isinstance(x, tuple):
        if len(x) == 1:
            return f'{c.PAREN}({c.END}{colorized(x[0])},{c.PAREN}){c.END}'
        return f'{c.PAREN}({c.END}' + ', '.join(colorized(i) for i in x) + f'{c.PAREN}){c.END}'
    if isinstance(x, dict):
        items = ', '.join(f'{c.STRING}{k!r}{c.END}: {colorized(v)}' for k, v in x.items())
        return f'{c.PAREN}{{{c.END}{items}{c.PAREN}}}{c.END}'
    if isinstance(x, set):
        return f'{c.PAREN}{{{c.END}' + ', '.join(colorized(i) for i in x) + f'{c.PAREN}}}{c.END}'
    if isinstance(x, type):
        return f'{c.TYPE}{x.__name__}{c.END}'
    if isinstance(x, bool):
        return f'{c.BOOL}{x}{c.END}'
    if isinstance(x, int):
        return f'{c.INT}{x}{c.END}'
    if isinstance(x, str):
        return f'{c.STRING}{x!r}{c.END}'
    if isinstance(x, float):
        return f'{c.FLOAT}{x}{c.END}'
    if x is None:
        return f'{c.NONE}{x}{c.END}'
    if isinstance(x, Representable):
        return get_repr(x)
    return repr(x)


class Representable:
    __slots__ = ()

    def __nnx_repr__(self):
        raise NotImplementedError

    def __repr__(self):
        return _with_color(NO_COLOR, self)

    def __str__(self):
        return _with_color(_current_color(), self)


def _with_color(color, obj):
    previous = _CONTEXT['color']
    _CONTEXT['color'] = color
    try:
        return get_repr(obj)
    finally:
        _CONTEXT['color'] = previous


def get_repr(obj):
    c = _current_color()
    iterator = obj.__nnx_repr__()
    config = next(iterator)
    kv_sep = f'{c.SEP}{config.kv_sep}{c.END}'

    def repr_elem(elem):
        value = elem.value if elem.use_raw_value else colorized(elem.value)
        value = value.replace('\n', '\n' + config.indent)
        key = elem.key if elem.use_raw_key else f'{c.ATTRIBUTE}{elem.key}{c.END}'
        indent = '' if config.same_line else config.indent
        return f'{indent}{elem.start}{key}{kv_sep}{value}{elem.end}'

    elems = config.elem_sep.join(map(repr_elem, iterator))
    if elems:
        if config.same_line:
            body, comment = elems, ''
        else:
            body, comment = '\n' + elems + '\n', f'{c.COMMENT}{config.comment}{c.END}'
    else:
        body, comment = config.empty_repr, ''
    type_repr = config.type if isinstance(config.type, str) else config.type.__name__
    type_repr = f'{c.TYPE}{type_repr}{c.END}' if type_repr else ''
    start = f'{c.PAREN}{config.start}{c.END}' if config.start else ''
    end = f'{c.PAREN}{config.end}{c.END}' if config.end else ''
    return f'{type_repr}{start}{comment}{body}{end}'


@dataclasses.dataclass(repr=False)
class PrettyMapping(Representable):
    mapping: tp.Mapping

    def __nnx_repr__(self):
        yield Object(type=type(self), kv_sep=': ', start='({', end='})')
        for key, value in self.mapping.items():
            yield Attr(colorized(key), value, use_raw_key=True)


class MappingReprMixin(Representable):
    def __nnx_repr__(self):
        yield Object(type=type(self), kv_sep=': ', start='({', end='})')
        for key, value in self.items():
            yield Attr(colorized(key), value, use_raw_key=True)
