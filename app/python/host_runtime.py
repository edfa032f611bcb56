# Notebook semantics for the embedded interpreter: run a cell, capture its streams, show its value.
import ast
import io
import linecache
import os
import signal
import sys
import threading
import tokenize
import traceback

import _shardscope_host_figures as figures
import _shardscope_host_magics as magics
import _shardscope_host_pretty as pretty

_counter = [0]


def namespace():
    return sys.modules["__main__"].__dict__


class CaptureStream(io.TextIOBase):
    """A text stream that keeps what is written and, when echoing, passes it on as it comes."""

    def __init__(self, echo_to=None):
        super().__init__()
        self._parts = []
        self._echo = echo_to

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        # As a UTF-8 terminal stream does: a lone surrogate ("\udcff") is a UnicodeEncodeError here, in the cell
        # that printed it, not text the host cannot read back.
        text.encode("utf-8")
        self._parts.append(text)
        if self._echo is not None:
            self._echo.write(text)
            self._echo.flush()
        return len(text)

    def flush(self):
        if self._echo is not None:
            self._echo.flush()

    def isatty(self):
        return self._echo is not None and self._echo.isatty()

    @property
    def encoding(self):
        return "utf-8"

    def getvalue(self):
        return "".join(self._parts)


def _ends_with_semicolon(source):
    """IPython's rule: a cell whose last token is `;` shows no value."""
    last = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER,
                                  tokenize.INDENT, tokenize.DEDENT):
                last = token
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def _register_source(filename, source):
    # So tracebacks can quote the cell's lines.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _parse(source, filename):
    """Parses a cell; lines holding magics are rewritten only when the cell is not plain Python."""
    try:
        return source, ast.parse(source, filename, "exec")
    except SyntaxError:
        rewritten = magics.transform_line_magics(source)
        if rewritten == source:
            raise
        return rewritten, ast.parse(rewritten, filename, "exec")


def run_source(source, filename=None, display=True):
    """Runs code in the user namespace; returns the last expression's value when it is shown."""
    if filename is None:  # a magic's body: it belongs to the cell running now
        filename = "<cell %d>" % _counter[0]
    stripped = source.lstrip("\n")
    ns = namespace()
    ns["__shardscope_magic__"] = lambda kind, text: magics.line_magic(ns, run_source, kind, text)
    if stripped.lstrip().startswith("%%"):
        header, _, body = stripped.lstrip()[2:].partition("\n")
        return magics.cell_magic(ns, run_source, header, body)
    _register_source(filename, source)
    source, tree = _parse(source, filename)
    _register_source(filename, source)
    if not tree.body:
        return None
    last = tree.body[-1]
    if isinstance(last, ast.Expr) and display and not _ends_with_semicolon(source):
        exec(compile(ast.Module(tree.body[:-1], type_ignores=[]), filename, "exec"), ns)
        return eval(compile(ast.Expression(last.value), filename, "eval"), ns)
    exec(compile(tree, filename, "exec"), ns)
    return None


def _edit_distance(a, b):
    # Python 3.12's suggestion metric: a case change costs 1, any other substitution, insertion or deletion 2.
    row = list(range(0, 2 * (len(b) + 1), 2))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], 2 * i
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else (1 if ca.lower() == cb.lower() else 2)
            previous, row[j] = row[j], min(row[j] + 2, row[j - 1] + 2, previous + cost)
    return row[-1]


def _suggestion(error):
    """The close name Python 3.12 suggests for an AttributeError carrying name and obj ("Did you mean: 'x'?")."""
    name, obj = getattr(error, "name", None), getattr(error, "obj", None)
    if not isinstance(name, str) or obj is None or len(name) > 40:
        return None
    try:
        candidates = dir(obj)
    except Exception:  # noqa: BLE001 -- as Python does, no suggestion when dir() fails
        return None
    if len(candidates) > 750:
        return None
    best, best_distance = None, len(name)
    for candidate in candidates:
        if candidate == name:
            continue
        limit = min((len(candidate) + len(name) + 3) * 2 // 6, best_distance - 1)
        distance = _edit_distance(name, candidate)
        if distance <= limit and (best is None or distance < best_distance):
            best, best_distance = candidate, distance
    return best


# IPython's %xmode: "Minimal" shows only the exception's own lines, the other modes the traceback.
exception_mode = ["Context"]


def format_exception(error):
    """The traceback as Python prints it, without the host's own frames."""
    if exception_mode[0] == "Minimal":
        return "".join(traceback.format_exception_only(type(error), error))
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith("<shardscope-host"):
        tb = tb.tb_next
    text = "".join(traceback.TracebackException(type(error), error, tb).format())
    # Python 3.11's traceback module does not add the suggestion its interpreter and 3.12 print.
    if sys.version_info < (3, 12) and isinstance(error, AttributeError):
        suggestion = _suggestion(error)
        if suggestion is not None and text.endswith("\n"):
            text = text[:-1] + f". Did you mean: '{suggestion}'?\n"
    return text


def _remember(value, number):
    ns = namespace()
    ns["___"], ns["__"], ns["_"] = ns.get("__"), ns.get("_"), value
    ns["_%d" % number] = value
    ns.setdefault("Out", {})[number] = value


def _arm_interrupt():
    # Another library (a GUI toolkit, a test framework) may have taken SIGINT since the last cell;
    # Ctrl-C must raise KeyboardInterrupt in the code that runs next.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # The host wraps Python's handler so that Ctrl-C also stops a long engine call.
        chain = globals().get("_chain_engine_interrupt")
        if chain is not None:
            chain()


def _show_figures(result, out, err):
    """As IPython's inline backend after each cell: the figures the cell left open are displayed, after its value."""
    try:
        texts = figures.end_cell()
    except Exception as error:  # noqa: BLE001 -- a matplotlib the cell broke: said, and the session goes on
        err.write(format_exception(error))
        return
    if not texts:
        return
    if result["output"] is not None:
        result["output"] += "".join("\n" + text for text in texts)
    else:
        out.write("".join(text + "\n" for text in texts))


def run_cell(source, echo=False, show_figures=True):
    """Runs one notebook cell. Returns a dict: stdout, stderr, output (text or None), error, status, exit_code.

    With show_figures, matplotlib figures are displayed as in a notebook (their text, at plt.show() and after the
    value); without, as in a program run, they are not."""
    _counter[0] += 1
    number = _counter[0]
    _arm_interrupt()
    saved = sys.stdout, sys.stderr
    out = CaptureStream(saved[0] if echo else None)
    err = CaptureStream(saved[1] if echo else None)
    result = {"output": None, "error": "", "status": "ok", "exit_code": 0}
    sys.stdout, sys.stderr = out, err
    figures.begin_cell(show_figures)
    try:
        value = run_source(source, "<cell %d>" % number)
        if value is not None:
            _remember(value, number)
            result["output"] = pretty.display_text(value)
    except SystemExit as error:
        code = error.code
        if code is None or isinstance(code, int):
            result["exit_code"] = code or 0
        else:
            err.write(str(code) + "\n")
            result["exit_code"] = 1
        result["status"] = "exit"
    except KeyboardInterrupt as error:
        result["status"], result["error"] = "interrupted", format_exception(error)
    except BaseException as error:  # the session survives anything the cell raises
        result["status"], result["error"] = "error", format_exception(error)
    finally:
        try:
            _show_figures(result, out, err)
        finally:
            sys.stdout, sys.stderr = saved
    result["stdout"], result["stderr"] = out.getvalue(), err.getvalue()
    return result


HISTORY_CAP = 10000  # entries the REPL keeps (README: "History and settings")


def repl(history_path, banner):
    """An interactive console on the user namespace; returns the exit status."""
    import code

    try:
        import readline
        import rlcompleter
    except ImportError:
        readline = None
    history = _History(readline, history_path) if readline is not None and history_path else None
    if readline is not None:
        readline.set_completer(rlcompleter.Completer(namespace()).complete)
        readline.parse_and_bind("tab: complete")

    class Console(code.InteractiveConsole):
        def raw_input(self, prompt=""):
            try:
                line = super().raw_input(prompt)
                if history is not None:
                    history.entered()  # on disk at once: a crash or a kill never loses what was typed
                return line
            except EOFError:
                # As python3 -i does: end of input inside a block ends the block, which then runs.
                if self.buffer:
                    self.push("")
                raise

        def runsource(self, source, filename="<input>", symbol="single"):
            if source.lstrip().startswith(("%", "!")) and not source.lstrip().startswith("%%"):
                text = source.lstrip()
                try:
                    value = magics.line_magic(namespace(), run_source, text[0], text[1:])
                    if value is not None:
                        sys.displayhook(value)
                except BaseException as error:
                    if isinstance(error, SystemExit):
                        raise
                    sys.stderr.write(format_exception(error))
                return False
            try:
                return super().runsource(source, filename, symbol)
            except (RecursionError, MemoryError) as error:
                # Compiling a 10,000-term expression: code.InteractiveConsole lets these escape the console;
                # python3's own prompt prints them (no frames: nothing ran) and reads the next line.
                sys.stderr.write("".join(traceback.format_exception_only(type(error), error)))
                return False

    saved_hook = sys.displayhook
    sys.displayhook = pretty.displayhook
    status = 0
    try:
        Console(namespace()).interact(banner=banner, exitmsg="")
    except SystemExit as error:
        status = error.code if isinstance(error.code, int) else (0 if error.code is None else 1)
    finally:
        sys.displayhook = saved_hook
        if history is not None:
            history.save()
    return status


class _History:
    """The REPL's readline history file: loaded with a word when it is cut to the cap, saved after every entry by
    writing a temporary file beside the real one and renaming it over, so a crash never leaves half a file and a
    symlinked history keeps its link (the link's target is what gets replaced)."""

    def __init__(self, readline, path):
        self._readline, self._path, self._failed = readline, path, False
        readline.set_history_length(HISTORY_CAP)
        if os.path.isdir(path):
            self._warn("%s is a directory, not a file: history is neither loaded nor saved" % path)
            self._failed = True
            return
        try:
            readline.read_history_file(path)
        except FileNotFoundError:
            return
        except OSError as error:
            self._warn("could not read history from %s: %s" % (path, error))
            return
        loaded = readline.get_current_history_length()
        if loaded > HISTORY_CAP:
            self._warn("%s holds %d entries; keeping the newest %d (the history cap)" % (path, loaded, HISTORY_CAP))
            # readline only trims when it writes: drop the oldest now so navigation matches what is kept.
            for _ in range(loaded - HISTORY_CAP):
                readline.remove_history_item(0)

    def _warn(self, message):
        sys.stderr.write("shardscope: %s\n" % message)

    def entered(self):
        self.save()

    def save(self):
        if self._failed:
            return
        target = os.path.realpath(self._path)
        temporary = "%s.%d.tmp" % (target, os.getpid())
        try:
            if os.path.isdir(target):
                raise IsADirectoryError("is a directory")
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            self._readline.write_history_file(temporary)
            if os.path.exists(target):
                os.chmod(temporary, os.stat(target).st_mode & 0o7777)
            os.replace(temporary, target)
        except OSError as error:
            try:
                os.remove(temporary)
            except OSError:
                pass
            # Said once: the session goes on without a history file rather than repeating the warning.
            self._warn("could not save history to %s: %s; history is not saved this session" % (self._path, error))
            self._failed = True
