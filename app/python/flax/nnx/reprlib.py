# flax.nnx.reprlib: the text reprs NNX objects print (Object/Attr generators), as Flax builds them without colour.
import dataclasses
import typing as tp


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
    # Flax's colourless rendering: containers recurse, types print their name, the rest their repr.
    if isinstance(x, list):
        return '[' + ', '.join(colorized(i) for i in x) + ']'
    if isinstance(x, tuple):
        if len(x) == 1:
            return f'({colorized(x[0])},)'
        return '(' + ', '.join(colorized(i) for i in x) + ')'
    if isinstance(x, dict):
        return '{' + ', '.join(f'{k!r}: {colorized(v)}' for k, v in x.items()) + '}'
    if isinstance(x, type):
        return x.__name__
    if isinstance(x, (bool, int, float)) or x is None:
        return repr(x) if not isinstance(x, float) else str(x)
    if isinstance(x, str):
        return repr(x)
    if isinstance(x, Representable):
        return get_repr(x)
    return repr(x)


class Representable:
    __slots__ = ()

    def __nnx_repr__(self):
        raise NotImplementedError

    def __repr__(self):
        return get_repr(self)

    def __str__(self):
        return get_repr(self)


def get_repr(obj):
    iterator = obj.__nnx_repr__()
    config = next(iterator)

    def repr_elem(elem):
        value = elem.value if elem.use_raw_value else colorized(elem.value)
        value = value.replace('\n', '\n' + config.indent)
        indent = '' if config.same_line else config.indent
        return f'{indent}{elem.start}{elem.key}{config.kv_sep}{value}{elem.end}'

    elems = config.elem_sep.join(map(repr_elem, iterator))
    if elems:
        if config.same_line:
            body, comment = elems, ''
        else:
            body, comment = '\n' + elems + '\n', config.comment
    else:
        body, comment = config.empty_repr, ''
    type_repr = config.type if isinstance(config.type, str) else config.type.__name__
    return f'{type_repr}{config.start}{comment}{body}{config.end}'


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
