# IPython magics a tutorial uses: %timeit/%%timeit, %time/%%time, %env, %%capture, %matplotlib inline; others are
# skipped.
import io
import itertools
import math
import os
import re
import shlex
import sys
import textwrap
import time

# A magic or shell line anywhere in a cell, optionally assigned: `x = %timeit -o f()`, `files = !ls`.
_LINE_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:(?P<target>[A-Za-z_][\w.]*)\s*=\s*)?(?P<kind>%|!)(?P<rest>.*)$")

_SKIPPED_NOTE = "shardscope: skipped {what} ({why})"


def note(what, why):
    sys.stderr.write(_SKIPPED_NOTE.format(what=what, why=why) + "\n")


def transform_line_magics(source):
    """Rewrites magic and shell lines as calls to the magic dispatcher; other lines are kept."""
    lines = source.split("\n")
    changed = False
    for i, line in enumerate(lines):
        match = _LINE_MAGIC.match(line)
        if not match or match.group("rest").startswith(("%", "=")):
            continue
        call = "__shardscope_magic__({!r}, {!r})".format(match.group("kind"), match.group("rest"))
        target = match.group("target")
        lines[i] = match.group("indent") + (target + " = " if target else "") + call
        changed = True
    return "\n".join(lines) if changed else source


def format_time(seconds, precision=3):
    """A duration as IPython writes it: '1.23 ms', '456 ns', '2min 3s'."""
    if seconds >= 60.0:
        parts = []
        left = seconds
        for suffix, length in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
            value = int(left / length)
            if value > 0:
                left = left % length
                parts.append("%d%s" % (value, suffix))
            if left < 1:
                break
        return " ".join(parts)
    units = ("s", "ms", "\u00b5s", "ns")
    order = min(-int(math.floor(math.log10(seconds)) // 3), 3) if seconds > 0.0 else 3
    return "%.*g %s" % (precision, seconds * 1000.0**order, units[order])


class TimeitResult:
    """What `%timeit -o` returns; its repr is the printed summary line."""

    def __init__(self, loops, repeat, best, worst, all_runs, precision):
        self.loops, self.repeat = loops, repeat
        self.best, self.worst = best, worst
        self.all_runs = all_runs
        self.timings = [run / loops for run in all_runs]
        self.average = math.fsum(self.timings) / len(self.timings)
        self.stdev = math.sqrt(math.fsum((t - self.average) ** 2 for t in self.timings) / len(self.timings))
        self._precision = precision

    def __str__(self):
        return "{} \u00b1 {} per loop (mean \u00b1 std. dev. of {} run{}, {:,} loop{} each)".format(
            format_time(self.average, self._precision), format_time(self.stdev, self._precision),
            self.repeat, "" if self.repeat == 1 else "s", self.loops, "" if self.loops == 1 else "s")

    __repr__ = __str__


def _parse_options(text, valued, flags):
    """Leading -x options of a magic line; returns (options, remaining statement)."""
    options = {}
    rest = text.strip()
    while rest.startswith("-"):
        match = re.match(r"-(\w)\s*(\S*)\s*", rest)
        if not match or (match.group(1) not in valued and match.group(1) not in flags):
            break
        name = match.group(1)
        if name in valued:
            if not match.group(2):
                break
            options[name] = match.group(2)
            rest = rest[match.end():]
        else:
            options[name] = True
            rest = rest[2:].lstrip()
    return options, rest


def timeit(namespace, line, cell=None):
    options, statement = _parse_options(line, valued={"n", "r", "p"}, flags={"q", "o"})
    setup = ""
    if cell is not None:
        setup, statement = statement, cell
    if not statement.strip():
        statement = "pass"
    source = ("def __shardscope_timed(_iterations, _clock):\n" + textwrap.indent(setup or "pass", "    ") +
              "\n    _start = _clock()\n    for _ in _iterations:\n" +
              textwrap.indent(transform_line_magics(statement), "        ") + "\n    return _clock() - _start\n")
    scope = {}
    exec(compile(source, "<timeit>", "exec"), namespace, scope)
    timed = scope["__shardscope_timed"]
    repeat = int(options.get("r", 7))
    precision = int(options.get("p", 3))
    # SHARDSCOPE_TIMEIT_ONCE=1 times one loop of one run: for tests that replay notebooks, where timings are
    # never compared and IPython's loop-count search would dominate the run.
    if os.environ.get("SHARDSCOPE_TIMEIT_ONCE") == "1":
        options["n"], repeat = 1, 1
    if "n" in options:
        loops = int(options["n"])
    else:
        # Like IPython: the smallest power of ten whose loop takes at least 0.2 s.
        for power in range(10):
            loops = 10**power
            if timed(itertools.repeat(None, loops), time.perf_counter) >= 0.2:
                break
    runs = [timed(itertools.repeat(None, loops), time.perf_counter) for _ in range(repeat)]
    best, worst = min(runs) / loops, max(runs) / loops
    result = TimeitResult(loops, repeat, best, worst, runs, precision)
    if not options.get("q"):
        if worst > 4 * best and best > 0 and worst > 1e-6:
            print("The slowest run took %0.2f times longer than the fastest. This could mean that an "
                  "intermediate result is being cached." % (worst / best))
        print(result)
    return result if options.get("o") else None


def time_magic(run_source, line, cell=None):
    """%time / %%time: runs the code, prints CPU and wall time, returns the last expression's value."""
    start_wall, start_cpu = time.perf_counter(), os.times()
    value = run_source(cell if cell is not None else line)
    end_cpu, wall = os.times(), time.perf_counter() - start_wall
    user, system = end_cpu.user - start_cpu.user, end_cpu.system - start_cpu.system
    print("CPU times: user {}, sys: {}, total: {}".format(format_time(user), format_time(system),
                                                          format_time(user + system)))
    print("Wall time: {}".format(format_time(wall)))
    return value


def env(line):
    text = line.strip()
    if not text:
        return dict(os.environ)
    match = re.match(r"^(\S+?)\s*(?:=\s*|\s+)(.*)$", text)
    if match is None:
        return os.environ.get(text, "")
    name, value = match.group(1), match.group(2)
    os.environ[name] = value
    print("env: {}={}".format(name, value))
    return None


class CapturedIO:
    """What `%%capture name` stores: the cell's stdout and stderr."""

    def __init__(self, stdout, stderr):
        self.stdout, self.stderr = stdout, stderr
        self.outputs = []

    def show(self):
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)

    __call__ = show


def capture(namespace, run_source, line, cell):
    args = shlex.split(line)
    name = next((a for a in args if not a.startswith("-")), None)
    saved = sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    if "--no-stdout" not in args:
        sys.stdout = out
    if "--no-stderr" not in args:
        sys.stderr = err
    try:
        run_source(cell)
    finally:
        sys.stdout, sys.stderr = saved
    if name:
        namespace[name] = CapturedIO(out.getvalue(), err.getvalue())


_SKIP_REASONS = {
    "matplotlib": "figures are shown inline by shardscope",
    "load_ext": "IPython extensions are not available",
    "reload_ext": "IPython extensions are not available",
    "autoreload": "modules are not reloaded",
    "config": "IPython configuration does not apply",
    "pip": "packages are not installed by shardscope",
    "conda": "packages are not installed by shardscope",
}


_XMODES = ["Plain", "Context", "Verbose", "Minimal"]


def xmode(line):
    """%xmode [mode]: IPython's exception reporting mode (cycles through the modes without an argument)."""
    import _shardscope_host_runtime as runtime

    wanted = line.strip()
    current = runtime.exception_mode[0]
    if not wanted:
        mode = _XMODES[(_XMODES.index(current) + 1) % len(_XMODES)]
    else:
        matches = [m for m in _XMODES if m.lower() == wanted.lower()]
        if not matches:
            raise ValueError(f"Unrecognized mode in FormattedTB: <{wanted}>")
        mode = matches[0]
    runtime.exception_mode[0] = mode
    print(f"Exception reporting mode: {mode}")
    return None


def line_magic(namespace, run_source, kind, text):
    """Runs `%name args` or `!command`; returns the magic's value."""
    if kind == "!":
        command = text.strip()
        why = "packages are not installed by shardscope" if re.match(r"(pip|pip3|conda)\b", command) else \
            "shell commands do not run in shardscope"
        note("`!" + command + "`", why)
        return None
    name, _, args = text.partition(" ")
    if name == "timeit":
        return timeit(namespace, args)
    if name == "time":
        return time_magic(run_source, args)
    if name == "env":
        return env(args)
    if name == "xmode":
        return xmode(args)
    if name == "matplotlib" and args.strip() == "inline":
        import _shardscope_host_figures as figures

        figures.use_inline()
        return None
    note("`%" + text.strip() + "`", _SKIP_REASONS.get(name, "this magic is not supported"))
    return None


def cell_magic(namespace, run_source, header, body):
    """Runs a `%%name args` cell; returns what the cell shows."""
    name, _, args = header.partition(" ")
    if name == "timeit":
        return timeit(namespace, args, body)
    if name == "time":
        return time_magic(run_source, args, body)
    if name == "capture":
        capture(namespace, run_source, args, body)
        return None
    note("`%%" + header.strip() + "` cell", "this cell magic is not supported")
    return None
