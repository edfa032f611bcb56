# jax.profiler: the annotations (which name a region in a trace and change nothing else) work; capturing a trace
# or a memory profile is not simulated and raises NotImplementedError naming the function.
import functools


class TraceAnnotation:
    """`with jax.profiler.TraceAnnotation('name'):` names the block in a profiler trace; no trace is captured here."""

    def __init__(self, name, **kwargs):
        self.name, self.kwargs = name, kwargs

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A TraceAnnotation that marks one training step (step_num=...)."""

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """func, each call inside a TraceAnnotation named `name` (func's qualified name by default)."""
    name = name or getattr(func, '__qualname__', None) or getattr(func, '__name__', 'function')

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    raise NotImplementedError(f'jax.profiler.{name} is not supported by shardscope')
