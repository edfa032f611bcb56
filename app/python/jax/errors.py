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


class ConcretizationTypeError(JAXTypeError):
    def __init__(self, tracer, context=''):
        super().__init__('Abstract tracer value encountered where concrete value is expected: '
                         f'{_error_repr(tracer)}\n{context}\n')


class NonConcreteBooleanIndexError(JAXIndexError):
    def __init__(self, aval):
        super().__init__(f'Array boolean indices must be concrete; got {aval}\n')


class TracerArrayConversionError(JAXTypeError):
    def __init__(self, tracer):
        super().__init__('The numpy.ndarray conversion method __array__() was called on '
                         f'{_error_repr(tracer)}')


class TracerBoolConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        JAXTypeError.__init__(self, f'Attempted boolean conversion of {_error_repr(tracer)}.')


class TracerIntegerConversionError(JAXTypeError):
    def __init__(self, tracer):
        super().__init__(f'The __index__() method was called on {_error_repr(tracer)}')


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
