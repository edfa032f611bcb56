# Python's own TypeError texts for calls the engine's bindings cannot take, in place of pybind11's dump.
import re

# "1. (a: object, axis: object = None) -> object" for functions, "1. _shardscope.Mesh(devices: object, ...)" for
# constructors (whose `self` the dump leaves out).
_OVERLOAD = re.compile(r'^\s*\d+\. (?:[\w.]+)?\((.*)\)(?: -> .*)?$', re.M)


def _split_params(text):
    params, depth, current, quote = [], 0, '', None
    for ch in text:
        if quote:
            current += ch
            if ch == quote:
                quote = None
            continue
        if ch in '\'"':
            quote = ch
        elif ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        elif ch == ',' and depth == 0:
            params.append(current.strip())
            current = ''
            continue
        current += ch
    if current.strip():
        params.append(current.strip())
    return params


def _parse(signature):
    """(positional names with has-default flags, keyword-only names, *args?, **kwargs?, shown text)."""
    positional, keyword_only, star, star_star, shown = [], [], False, False, []
    after_star = False
    for param in _split_params(signature):
        if param == '/':
            continue
        if param == '*':
            after_star = True
            shown.append('*')
            continue
        if param.startswith('**'):
            star_star = True
            shown.append(param.split(':')[0])
            continue
        if param.startswith('*'):
            star, after_star = True, True
            shown.append(param.split(':')[0])
            continue
        name = param.split(':', 1)[0].split('=', 1)[0].strip()
        has_default = '=' in param
        default = param.split('=', 1)[1].strip() if has_default else None
        shown.append(f'{name}={default}' if has_default else name)
        (keyword_only if after_star else positional).append((name, has_default))
    return positional, keyword_only, star, star_star, ', '.join(shown)


def _plural(n, word):
    return f'{n} {word}' if n == 1 else f'{n} {word}s'


def _quoted(names):
    names = [f"'{n}'" for n in names]
    return names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]


def message(name, dump, args, kwargs):
    """What CPython would say calling a Python function of the binding's first signature with these arguments."""
    signatures = _OVERLOAD.findall(dump)
    if not signatures:
        return None
    positional, keyword_only, star, star_star, shown = _parse(signatures[0])
    # CPython counts a method's `self` in "takes N positional arguments"; the constructor's dump leaves it out.
    self_counted = 0
    if name.endswith('.__init__') and not (positional and positional[0][0] == 'self'):
        args = args[1:]
        self_counted = 1
    names = [n for n, _ in positional] + [n for n, _ in keyword_only]
    if not star_star:
        for key in kwargs:
            if key not in names:
                return f"{name}() got an unexpected keyword argument '{key}'"
    if not star and len(args) > len(positional):
        required = sum(1 for _, d in positional if not d) + self_counted
        most = len(positional) + self_counted
        takes = f'from {required} to {most}' if required != most else str(most)
        given = len(args) + self_counted
        were = 'was' if given == 1 else 'were'
        return (f'{name}() takes {takes} positional argument{"" if takes == "1" else "s"} '
                f'but {given} {were} given')
    missing = [n for i, (n, d) in enumerate(positional) if not d and i >= len(args) and n not in kwargs]
    if missing:
        return f'{name}() missing {_plural(len(missing), "required positional argument")}: {_quoted(missing)}'
    missing = [n for n, d in keyword_only if not d and n not in kwargs]
    if missing:
        return f'{name}() missing {_plural(len(missing), "required keyword-only argument")}: {_quoted(missing)}'
    shown_args = args[1:] if positional and positional[0][0] == 'self' else args
    given = [type(a).__name__ for a in shown_args] + [f'{k}={type(v).__name__}' for k, v in kwargs.items()]
    return (f'{name}() got an argument of a type it does not accept: called with ({", ".join(given)}); '
            f'it takes ({shown.removeprefix("self, ").removeprefix("self")})')


def _is_abstract(value):
    return getattr(value, '_is_tracer', False) and getattr(value, '_known_value', None) is None \
        and getattr(value, 'ndim', None) == 0


def traced_shape_message(args, kwargs):
    """JAX's canonicalize_shape TypeError when a shape argument holds traced integers; None when none does."""
    from jax import errors
    for arg in list(args) + list(kwargs.values()):
        if isinstance(arg, (tuple, list)):
            shape = arg
        elif _is_abstract(arg) and 'int' in arg.dtype.name:
            shape = [arg]
        else:
            continue
        traced = [x for x in shape if _is_abstract(x)]
        if not traced:
            continue
        return (f'Shapes must be 1D sequences of concrete values of integer type, got {shape!r}.\n'
                'If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.'
                + ''.join(errors._origin_msg(x) for x in traced))
    return None
