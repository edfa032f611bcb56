# jax.errors: JAX's own exception classes, with the messages and documentation links JAX gives them.
__all__ = ['JaxRuntimeError', 'JAXTypeError', 'JAXIndexError', 'ConcretizationTypeError', 'NonConcreteBooleanIndexError',
           'TracerArrayConversionError', 'TracerBoolConversionError', 'TracerIntegerConversionError',
           'UnexpectedTracerError', 'KeyReuseError']

_ERROR_PAGE = 'https://docs.jax.dev/en/latest/errors.html'


class _JAXErrorMixin:
    def __init__(self, message):
        super().__init__(f'{message}\nSee {_ERROR_PAGE}#jax.errors.{type(self).__name__}')


class JAXTypeError(_JAXErrorMixin, TypeError):
    pass


class JAXIndexError(_JAXErrorMixin, IndexError):
    pass


class _ShapeOnly:
    """Stands for a tracer the error names but the caller does not hold (jnp.nonzero's count)."""

    def __init__(self, aval_str):
        self._aval_str = aval_str


def _error_repr(tracer):
    return f'traced array with shape {tracer._aval_str}'


# What is being traced, innermost last: (trace level, "name at file:line", what for, one name per argument). The
# concretization errors below say which function's arguments a tracer came from, as JAX's do.
_tracing = []


class tracing:
    """Context manager: the trace opened inside it traces `fun` for `traced_for` with these argument names."""

    def __init__(self, fun, traced_for, arg_names):
        self._entry = (fun, traced_for, arg_names)

    def __enter__(self):
        import _shardscope
        fun, traced_for, arg_names = self._entry
        _tracing.append((_shardscope.debug.current_trace_level(), fun, traced_for, arg_names))
        return self

    def __exit__(self, *exc):
        _tracing.pop()
        return False


def _origin_msg(tracer):
    """"\nThe error occurred while tracing the function f at file:line for jit. ...", or "" when unknown."""
    batch_origin = getattr(tracer, '_batch_origin', None)
    if batch_origin is not None:
        # A vmap body's value: JAX's BatchTracer says where it was made.
        return f'\nThis BatchTracer with object id {id(tracer)} was created on line:\n  {batch_origin}'
    progenitors = getattr(tracer, '_progenitors', None)
    if progenitors is None:
        return ''
    level, positions = progenitors
    entry = next((e for e in reversed(_tracing) if e[0] == level), None)
    if entry is None:
        return ''
    from jax._src.jit import _source_info
    _, fun, traced_for, arg_names = entry
    origin = f'The error occurred while tracing the function {_source_info(fun)} for {traced_for}. '
    if positions:
        if arg_names is None or any(i >= len(arg_names) for i in positions):
            return ''
        names = [arg_names[i] for i in positions]
        if len(names) == 1:
            described = f'the argument {names[0]}'
        elif len(names) == 2:
            described = f'the arguments {names[0]} and {names[1]}'
        else:
            described = f"the arguments {', '.join(names[:-1])}, and {names[-1]}"
        origin += ('This concrete value was not available in Python because it depends on the '
                   f"value{'s' if len(names) > 1 else ''} of {described}.")
    else:
        operations = getattr(tracer, '_origin_operations', [])
        if operations:
            origin += ('This value became a tracer due to JAX operations on these lines:\n\n'
                       + '\n\n'.join(f'  operation {op}' for op in operations[:5]))
            if len(operations) > 5:
                origin += '\n\n(Additional originating lines are not shown.)'
    return '\n' + origin


class ConcretizationTypeError(JAXTypeError):
    def __init__(self, tracer, context=''):
        super().__init__('Abstract tracer value encountered where concrete value is expected: '
                         f'{_error_repr(tracer)}\n{context}{_origin_msg(tracer)}\n')


class NonConcreteBooleanIndexError(JAXIndexError):
    def __init__(self, aval):
        super().__init__(f'Array boolean indices must be concrete; got {aval}\n')


class TracerArrayConversionError(JAXTypeError):
    def __init__(self, tracer):
        super().__init__('The numpy.ndarray conversion method __array__() was called on '
                         f'{_error_repr(tracer)}{_origin_msg(tracer)}')


class TracerBoolConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        JAXTypeError.__init__(self, f'Attempted boolean conversion of {_error_repr(tracer)}.{_origin_msg(tracer)}')


class TracerIntegerConversionError(JAXTypeError):
    def __init__(self, tracer):
        super().__init__(f'The __index__() method was called on {_error_repr(tracer)}{_origin_msg(tracer)}')


class UnexpectedTracerError(JAXTypeError):
    pass


class KeyReuseError(JAXTypeError):
    pass


class JaxRuntimeError(RuntimeError):
    """A runtime error from the compiler or a device (jaxlib's XlaRuntimeError); messages start with a status code."""


for _cls in (JaxRuntimeError, JAXTypeError, JAXIndexError, ConcretizationTypeError, NonConcreteBooleanIndexError,
             TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
             UnexpectedTracerError, KeyReuseError):
    _cls.__module__ = 'jax.errors'
del _cls
