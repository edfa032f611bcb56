# jax.debug.breakpoint: a text debugger ("jdb") over the user's frames, entered when the program reaches it.
import cmd
import inspect
import pprint
import sys
import traceback

from jax._src import tree as tree_util


class Frame:
    """One user frame as the breakpoint saw it: its source around the line, and its locals (traced values are
    replaced by their values once the program runs)."""

    def __init__(self, filename, lineno, source, offset, local_values):
        self.filename = filename
        self.lineno = lineno
        self.source = source
        self.offset = offset
        self.locals = local_values

    @classmethod
    def of(cls, info):
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = ''.join(lines).split('\n')
            offset = info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        return cls(info.filename, info.lineno, source, offset, dict(info.frame.f_locals))


def _is_traced(value):
    try:
        return getattr(value, '_is_tracer', False) is True
    except Exception:  # a module or proxy whose attribute lookup raises is not a traced value
        return False


def _user_frame(info):
    # The embedded package's modules and the host runtime are named "<shardscope..."; other frames are the user's.
    return not info.filename.startswith('<shardscope')


class Debugger(cmd.Cmd):
    """The jdb command loop: p/pp expr, u(p), d(own), l(ist), w(here)/bt, c(ontinue), q(uit); any other line is
    evaluated in the current frame."""

    prompt = '(jdb) '
    intro = 'Entering jdb:'

    def __init__(self, frames):
        super().__init__(stdin=sys.stdin, stdout=sys.stdout)
        self.use_rawinput = False  # reads the REPL's (or kernel's) stdin, not the terminal's readline
        self.frames = frames
        self.index = 0

    def evaluate(self, expr):
        return eval(expr, {}, dict(self.frames[self.index].locals))

    def _report_error(self):
        kind, value = sys.exc_info()[:2]
        self.stdout.write('*** ' + traceback.format_exception_only(kind, value)[-1].strip() + '\n')

    def _show(self, expr, pretty):
        try:
            value = self.evaluate(expr)
            self.stdout.write((pprint.pformat(value) if pretty else repr(value)) + '\n')
        except Exception:  # any error of the user's expression is reported, and the session goes on
            self._report_error()

    def default(self, line):
        self._show(line, False)

    def do_p(self, arg):
        """p expression: print the value of an expression in the current frame."""
        self._show(arg, False)

    def do_pp(self, arg):
        """pp expression: pretty-print the value of an expression in the current frame."""
        self._show(arg, True)

    def context(self, lines=2):
        frame = self.frames[self.index]
        out = [f'> {frame.filename}({frame.lineno})']
        if frame.offset is not None:
            for i, text in enumerate(frame.source):
                if frame.offset - 1 - lines <= i <= frame.offset + lines:
                    out.append(('->  ' if i == frame.offset else '    ') + text)
        self.stdout.write('\n'.join(out) + '\n')

    def do_up(self, _):
        """u(p): move to the caller's frame."""
        if self.index == len(self.frames) - 1:
            self.stdout.write('At topmost frame.\n')
        else:
            self.index += 1
        self.context()
    do_u = do_up

    def do_down(self, _):
        """d(own): move back towards the breakpoint's frame."""
        if self.index == 0:
            self.stdout.write('At bottommost frame.\n')
        else:
            self.index -= 1
        self.context()
    do_d = do_down

    def do_list(self, _):
        """l(ist): show the source around the current line."""
        self.context(lines=5)
    do_l = do_list

    def do_where(self, _):
        """w(here), bt: the frames, most recent last."""
        out = ['Traceback:']
        for frame in reversed(self.frames):
            out.append(f'  File "{frame.filename}", line {frame.lineno}')
            out.append('    ' + (frame.source[frame.offset].strip() if frame.offset is not None else '<no source>'))
        self.stdout.write('\n'.join(out) + '\n')
    do_w = do_bt = do_where

    def do_continue(self, _):
        """c(ont(inue)): leave the debugger and let the program run on."""
        return True
    do_c = do_cont = do_continue

    def do_quit(self, _):
        """q(uit), exit: stop the program (the breakpoint's callback fails with SystemExit, as JAX's does)."""
        raise SystemExit(0)
    do_q = do_exit = do_EOF = do_quit


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None, **kwargs):
    """jax.debug.breakpoint: when the program reaches this point (eagerly now, or when a jitted program runs),
    opens jdb over the user's frames, their traced locals holding the values they have in that run."""
    from jax import debug
    if token is not None and ordered:
        raise ValueError('`ordered` and `token` are mutually exclusive arguments.')
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [info for info in infos if _user_frame(info)]
    frames = [Frame.of(info) for info in infos]
    del infos
    if num_frames is not None:
        frames = frames[:num_frames]
    # Traced locals travel through the program as operands of the callback; everything else stays as it was.
    names, traced = [], []
    for index, frame in enumerate(frames):
        for name, value in frame.locals.items():
            if _is_traced(value):
                names.append((index, name))
                traced.append(value)

    def enter(*values):
        for (index, name), value in zip(names, values):
            frames[index].locals[name] = value
        try:
            Debugger(frames).cmdloop()
        except SystemExit as stop:
            # Quitting ends the program, not the session: the runtime reports the callback's SystemExit, as
            # XLA's host callback does.
            from jax.errors import JaxRuntimeError
            raise JaxRuntimeError(f'INTERNAL: CpuCallback error calling callback: SystemExit: {stop.code}') from None

    if token is None:
        debug.callback(enter, *traced, ordered=ordered)
        return None
    # With a token, the breakpoint runs once the token's value is computed, and hands the token back.
    import jax
    shapes = tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(jax.numpy.shape(x), jax.numpy.result_type(x)), token)

    def with_token(token_value, *values):
        enter(*values)
        return token_value
    return jax.pure_callback(with_token, shapes, token, *traced)
