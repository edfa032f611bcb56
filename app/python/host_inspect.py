# The inspection module: runs a script's cells under any Python with JAX, real or simulated, and records per cell
# what it printed and a JSON snapshot (devices, arrays and their shardings, compiled programs' collectives),
# through public JAX APIs only. `shardscope run --python` and `shardscope diff` run it as a script.
import ast
import io
import json
import math
import re
import sys
import traceback

MAX_VALUES = 4096  # elements of an array recorded for value comparison
MAX_PROGRAMS = 16  # jit programs lowered per cell
MAX_LEAVES = 64  # arrays recorded from one variable holding a pytree

_COLLECTIVE = re.compile(
    r"\b(all-reduce|all-gather|reduce-scatter|all-to-all|ragged-all-to-all|collective-permute|collective-broadcast)"
    r"(?:-start)?\(")


def device_snapshot(jax):
    """jax.devices() as the window's Devices view needs them."""
    out = []
    for d in jax.devices():
        coords = getattr(d, "coords", None)
        out.append({"id": d.id, "platform": d.platform, "device_kind": getattr(d, "device_kind", ""),
                    "process_index": getattr(d, "process_index", 0),
                    "coords": list(coords) if coords is not None else None,
                    "core_on_chip": getattr(d, "core_on_chip", None)})
    return out


def _number(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _values(x):
    import numpy as np
    if x.size > MAX_VALUES:
        return None
    try:
        a = np.asarray(x)
    except Exception:  # PRNG keys, deleted buffers
        return None
    if a.dtype.kind == "c":
        a = np.concatenate([a.real.reshape(-1), a.imag.reshape(-1)])
    elif a.dtype.kind not in "biuf":
        try:
            a = a.astype(np.float32)  # bfloat16 and the other ml_dtypes
        except Exception:
            return None
    return [_number(v) for v in a.reshape(-1).tolist()]


def array_snapshot(jax, x):
    """An array's type, sharding (spec, mesh, each device's block) and values."""
    record = {"shape": list(x.shape), "dtype": str(x.dtype)}
    try:
        record["type"] = str(jax.typeof(x))
    except Exception:
        pass
    sharding = getattr(x, "sharding", None)
    if sharding is not None:
        record["sharding"] = repr(sharding)
        spec = getattr(sharding, "spec", None)
        if spec is not None:
            record["spec"] = str(spec)
        mesh = getattr(sharding, "mesh", None)
        if mesh is not None and hasattr(mesh, "shape"):
            record["mesh"] = {str(k): int(v) for k, v in dict(mesh.shape).items()}
        record["memory_kind"] = getattr(sharding, "memory_kind", None)
        if mesh is not None and spec is not None and hasattr(mesh, "devices"):
            # What a front end needs to draw the sharding itself: the mesh's devices in order and the spec's
            # entries (None, or the axes splitting that dim).
            record["mesh_axis_names"] = [str(name) for name in mesh.axis_names]
            record["mesh_device_ids"] = [int(d.id) for d in mesh.devices.flat]
            types = getattr(mesh, "axis_types", None)
            if types is not None:
                record["mesh_axis_types"] = [getattr(t, "name", str(t)) for t in types]
            record["spec_entries"] = [None if entry is None else
                                      ([str(entry)] if isinstance(entry, str) else [str(a) for a in entry])
                                      for entry in spec]
        else:
            device_set = getattr(sharding, "device_set", None)
            if device_set is not None and len(device_set) == 1:
                record["device_id"] = int(next(iter(device_set)).id)
        try:
            indices = sharding.devices_indices_map(tuple(x.shape))
            record["blocks"] = {str(d.id): [[s.start, s.stop] for s in index] for d, index in
                                sorted(indices.items(), key=lambda item: item[0].id)}
        except Exception:
            pass
    values = _values(x)
    if values is not None:
        record["values"] = values
    return record


def variables_snapshot(jax, names_values):
    """Arrays bound to the given names, and the arrays inside pytrees (dicts, lists, module states)."""
    out = {}
    for name, value in names_values:
        if isinstance(value, jax.Array):
            out[name] = array_snapshot(jax, value)
            continue
        if not isinstance(value, (dict, list, tuple)):
            continue
        try:
            leaves = jax.tree_util.tree_flatten_with_path(value)[0]
        except Exception:
            continue
        arrays = [(path, leaf) for path, leaf in leaves if isinstance(leaf, jax.Array)]
        for path, leaf in arrays[:MAX_LEAVES]:
            record = array_snapshot(jax, leaf)
            record.update(tree=name, tree_type=type(value).__name__,
                          path=[jax.tree_util.keystr((key,)) for key in path])
            out[name + jax.tree_util.keystr(path)] = record
    return out


def collectives(hlo_text):
    """The collective operations of a compiled program's HLO text, with how often each appears."""
    counts = {}
    for match in _COLLECTIVE.finditer(hlo_text):
        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return counts


def program_snapshot(name, lowered, texts=False):
    record = {"name": name}
    compiled = lowered.compile()
    hlo = compiled.as_text()
    record["collectives"] = collectives(hlo)
    if texts:  # for a window's Program view
        record["hlo"] = hlo
        record["lowered"] = lowered.as_text()
    try:
        memory = compiled.memory_analysis()
        record["memory"] = {key: getattr(memory, key) for key in (
            "argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes", "alias_size_in_bytes")}
    except Exception:
        pass
    return record


class _Recorder:
    """Wraps jax.jit so each jitted function called in a cell is lowered afterwards with the same argument
    types: the program's collectives and memory come from compile().as_text() and memory_analysis()."""

    def __init__(self, jax, namespace):
        self.jax = jax
        self.namespace = namespace
        self.calls = []
        self.real_jit = jax.jit
        recorder = self

        class Jitted:
            def __init__(self, jitted, fun):
                self._jitted, self._fun = jitted, fun
                self.__wrapped__ = getattr(jitted, "__wrapped__", fun)
                self.__name__ = getattr(fun, "__name__", "jit")
                self.__doc__ = getattr(fun, "__doc__", None)

            def __call__(self, *args, **kwargs):
                # Types are read before the call (donated arguments are gone after it); a call that raised
                # leaves no program to show.
                types = recorder.argument_types(self, args, kwargs)
                out = self._jitted(*args, **kwargs)
                if types is not None:
                    recorder.calls.append((self, types))
                return out

            def __getattr__(self, name):
                return getattr(self._jitted, name)

            def __get__(self, instance, owner):  # a jitted method
                return self if instance is None else __import__("functools").partial(self, instance)

        def jit(fun=None, *args, **kwargs):
            # Only the script's own jit calls: a library's jitted internals keep JAX's own objects.
            if sys._getframe(1).f_globals is not recorder.namespace:
                return recorder.real_jit(fun, *args, **kwargs) if fun is not None else (
                    lambda f: recorder.real_jit(f, *args, **kwargs))
            if fun is None:
                return lambda f: Jitted(recorder.real_jit(f, *args, **kwargs), f)
            return Jitted(recorder.real_jit(fun, *args, **kwargs), fun)

        self.jit = jit

    def argument_types(self, jitted, args, kwargs):
        if len(self.calls) >= MAX_PROGRAMS or any(c[0] is jitted for c in self.calls):
            return None
        jax = self.jax

        def abstract(leaf):  # types only: donated arguments are gone once the call ran
            if isinstance(leaf, jax.Array):
                return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=leaf.sharding)
            return leaf

        try:
            return jax.tree_util.tree_map(abstract, (args, kwargs))
        except Exception:
            return None

    def take(self, texts=False):
        programs = []
        for jitted, (args, kwargs) in self.calls:
            try:
                programs.append(program_snapshot(jitted.__name__, jitted._jitted.lower(*args, **kwargs), texts))
            except Exception as error:  # a program JAX cannot lower again from types alone
                programs.append({"name": jitted.__name__, "error": repr(error)})
        self.calls = []
        return programs


def meshes_snapshot(jax, names_values):
    """Meshes bound to names: axes, sizes, types and device ids in mesh order."""
    out = {}
    for name, value in names_values:
        if not isinstance(value, jax.sharding.Mesh):
            continue
        record = {"axis_names": [str(a) for a in value.axis_names],
                  "axis_sizes": [int(n) for n in value.devices.shape],
                  "device_ids": [int(d.id) for d in value.devices.flat]}
        types = getattr(value, "axis_types", None)
        if types is not None:
            record["axis_types"] = [getattr(t, "name", str(t)) for t in types]
        out[name] = record
    return out


_attached = None  # the recorder `attach` installed in a kernel
_last_program = None  # the last program a snapshot reported


def attach(namespace):
    """Called once in a kernel a window attaches to: the jit calls of `namespace` (the notebook's globals()) are
    recorded so each snapshot can lower the last program again for its compiled text and collectives."""
    global _attached
    import jax
    if _attached is None or _attached.namespace is not namespace:
        _attached = _Recorder(jax, namespace)
        jax.jit = _attached.jit


def snapshot(namespace):
    """One JSON text for a front end attached to a running kernel (the window's Variables, canvas, Devices and
    Program views): the devices, every array bound in `namespace` with its sharding, and the last jit program
    run since the previous snapshot (when `attach` recorded one)."""
    import jax
    hidden = set()
    try:  # IPython's own names (In, Out, exit, get_ipython) are not the user's
        from IPython import get_ipython
        shell = get_ipython()
        if shell is not None:
            hidden = set(shell.user_ns_hidden)
    except ImportError:
        pass
    names = [(k, v) for k, v in list(namespace.items()) if not k.startswith("_") and k not in hidden]
    record = {"jax_version": getattr(jax, "__version__", ""), "devices": device_snapshot(jax),
              "variables": variables_snapshot(jax, names), "meshes": meshes_snapshot(jax, names)}
    global _last_program
    if _attached is not None:
        programs = _attached.take(texts=True)
        if programs:
            _last_program = programs[-1]
    if _last_program is not None:  # shown until another program runs, as the embedded session does
        record["program"] = _last_program
    return json.dumps(record)


def _display_text(value, pretty):
    if pretty:
        try:
            from IPython.lib.pretty import pretty as ipython_pretty
            return ipython_pretty(value)
        except ImportError:
            pass
    return repr(value)


def _ends_with_semicolon(source):
    import tokenize
    last = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER,
                                  tokenize.INDENT, tokenize.DEDENT):
                last = token
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def run_cell(source, number, ns, pretty):
    """Runs one cell with notebook semantics; returns (stdout, output text or None, error traceback)."""
    filename = "<cell %d>" % number
    saved = sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    output, error = None, ""
    try:
        tree = ast.parse(source, filename, "exec")
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr) and not _ends_with_semicolon(source):
            exec(compile(ast.Module(tree.body[:-1], type_ignores=[]), filename, "exec"), ns)
            value = eval(compile(ast.Expression(last.value), filename, "eval"), ns)
            if value is not None:
                output = _display_text(value, pretty)
        else:
            exec(compile(tree, filename, "exec"), ns)
    except BaseException as e:  # the run goes on, as a notebook's does
        error = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    finally:
        sys.stdout, sys.stderr = saved
    return out.getvalue(), err.getvalue(), output, error


def main(argv):
    """inspect CELLS.json RESULTS.jsonl [pretty|repr]: one JSON line for the session, then one per cell."""
    cells = json.load(open(argv[1], encoding="utf-8"))
    pretty = len(argv) < 4 or argv[3] == "pretty"
    # The script's own __main__: the inspection module's names stay out of its way, and its out of ours.
    import types
    main_module = types.ModuleType("__main__")
    sys.modules["__main__"] = main_module
    ns = main_module.__dict__
    ns["__builtins__"] = __builtins__
    import jax
    recorder = _Recorder(jax, ns)
    jax.jit = recorder.jit
    with open(argv[2], "w", encoding="utf-8") as results:
        session = {"jax_version": getattr(jax, "__version__", ""), "python": sys.version.split()[0],
                   "devices": device_snapshot(jax)}
        results.write(json.dumps(session) + "\n")
        results.flush()
        seen = {}
        for number, source in enumerate(cells, 1):
            stdout, stderr, output, error = run_cell(source, number, ns, pretty)
            changed = [(k, v) for k, v in list(ns.items()) if not k.startswith("_") and seen.get(k) is not v]
            seen = {k: v for k, v in ns.items() if not k.startswith("_")}
            record = {"cell": number, "stdout": stdout, "stderr": stderr, "output": output, "error": error}
            try:
                record["variables"] = variables_snapshot(jax, changed)
                record["programs"] = recorder.take()
            except BaseException as e:
                record["inspection_error"] = repr(e)
            results.write(json.dumps(record) + "\n")
            results.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
