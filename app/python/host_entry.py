# Entry points into the embedded interpreter besides cells: a Jupyter kernel (`shardscope kernel`) and a
# python3-style program run (`shardscope python`), both with the simulated jax as `jax`.
import os
import sys
import traceback


def _hide_debugger_notices():
    # ipykernel's debugger (debugpy) warns on stderr that this interpreter uses frozen modules: true of every
    # embedded CPython, and nothing a notebook user can act on.
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")


def serve_kernel(connection_file, arm_interrupt):
    """Runs ipykernel's IPKernelApp on `connection_file` until a client shuts it down.

    `arm_interrupt` clears a stale engine stop request and chains SIGINT to the engine: ipykernel installs
    Python's KeyboardInterrupt handler around each execute request, and a long engine call (a jit over
    thousands of devices) must stop on it too.
    """
    _hide_debugger_notices()
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    sys.argv = ["shardscope-kernel", "-f", connection_file]
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    # matplotlib-inline applies InlineBackend.rc when pyplot's backend loads; since its 0.1.4 that is empty, so a
    # notebook of an older profile gets the settings (the 432x288 figures) of its own time back this way.
    import _shardscope_host_figures as figures

    era_rc = figures.inline_rc()
    if era_rc:
        app.config.InlineBackend.rc = era_rc
    app.initialize(["-f", connection_file])
    app.shell.events.register("pre_run_cell", lambda *args: arm_interrupt())
    app.start()
    return 0


def run_program(argv):
    """As `python3 FILE ARGS...` or `python3 -c CODE ARGS...`: returns the exit status."""
    import __main__

    if argv[0] == "-c":
        source, filename, sys.argv = argv[1], "<string>", ["-c"] + list(argv[2:])
        sys.path.insert(0, "")
    else:
        filename = argv[0]
        with open(filename, encoding="utf-8") as file:
            source = file.read()
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(filename)))
        __main__.__dict__["__file__"] = filename
    try:
        exec(compile(source, filename, "exec"), __main__.__dict__)
    except SystemExit as error:
        code = error.code
        if code is None or isinstance(code, int):
            return code or 0
        sys.stderr.write(str(code) + "\n")
        return 1
    except BaseException as error:  # as python3 does: the traceback on stderr, status 1
        sys.stderr.write("".join(traceback.format_exception(type(error), error, error.__traceback__)))
        return 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    return 0
