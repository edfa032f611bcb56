# Where user code called into jax: JAX's source_info_util.summarize of the innermost frame outside jax.
import sys


def _is_library(filename):
    # The embedded jax, flax and optax modules and the host compile their code as `<shardscope ...>`.
    return filename.startswith('<shardscope')


def summarize_current():
    """`file:line:column (function)` of the innermost user frame (`file:line (function)` at column 0)."""
    frame = sys._getframe(1)
    while frame is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return 'unknown'
    code = frame.f_code
    line, column = frame.f_lineno, 0
    positions = list(code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        start_line, _, start_column, _ = positions[index]
        line = start_line if start_line is not None else line
        column = start_column or 0
    if column:
        return f'{code.co_filename}:{line}:{column} ({code.co_name})'
    return f'{code.co_filename}:{line} ({code.co_name})'
