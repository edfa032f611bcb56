// The Python session behind the window: a worker thread for cells, an interrupter, snapshots of the namespace.
#include "gui/python_session.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <chrono>
#include <optional>

#include "api/session.h"
#include "api/transforms.h"
#include "api/typeof.h"
#include "base/python_format.h"
#include "cost/explain.h"
#include "exec/cancellation.h"
#include "exec/lowering.h"
#include "ir/jaxpr_printer.h"
#include "python/convert.h"
#include "python/host.h"

namespace py = pybind11;

namespace shardscope::gui {
namespace {

// Installed once in the interpreter as module `_shardscope_gui`: records each visualize_sharding call's
// place in the cell's stdout.
constexpr const char* kHooks = R"python(
import sys

visuals = []


def install():
    try:
        import jax.debug as debug
        import _shardscope
    except Exception:
        return
    original = debug.visualize_sharding
    if not getattr(original, '_shardscope_gui', False):
        def visualize_sharding(shape, sharding, **kwargs):
            out = sys.stdout
            # Offsets in UTF-8 bytes: the C++ side cuts the captured text as bytes.
            start = len(out.getvalue().encode('utf-8')) if hasattr(out, 'getvalue') else None
            result = original(shape, sharding, **kwargs)
            if start is not None:
                stop = len(out.getvalue().encode('utf-8'))
                visuals.append((start, stop, tuple(int(d) for d in shape), sharding))
            return result
        visualize_sharding._shardscope_gui = True
        debug.visualize_sharding = visualize_sharding


def parameter_trees(namespace, limit=2000):
    """Pytrees in the namespace that hold arrays (a Flax model's variables, a TrainState): for each, its name,
    type and [(expression, key-path entries, array, metadata box text)], at most `limit` arrays."""
    import types
    try:
        import jax
        from jax._src import tree as pytrees
    except Exception:
        return []
    meta = sys.modules.get('flax.core.meta')
    variablelib = sys.modules.get('flax.nnx.variablelib')  # nnx.state(model) and NNX modules hold Variables

    def boxed(x):
        return ((meta is not None and isinstance(x, meta.AxisMetadata))
                or (variablelib is not None and isinstance(x, variablelib.Variable)))

    def note_of(box):
        if variablelib is not None and isinstance(box, variablelib.Variable):
            metadata = box.get_metadata()
            for key in ('out_sharding', 'sharding', 'sharding_names'):
                if metadata.get(key) is not None:
                    return f'{type(box).__name__}({key}={metadata[key]!r})'
            return type(box).__name__
        names = getattr(box, 'names', None)
        return f'{type(box).__name__}(names={names!r})' if names is not None else type(box).__name__

    found = []
    for name, value in list(namespace.items()):
        if name.startswith('_') or isinstance(value, (types.ModuleType, type, jax.Array)):
            continue
        if not (boxed(value) or type(value) in pytrees._registry or isinstance(value, (tuple, list, dict))):
            continue
        if isinstance(value, (tuple, list, dict)) and len(value) > 100000:
            continue
        try:
            pairs, _ = pytrees.tree_flatten_with_path(value, is_leaf=boxed)
        except Exception:
            continue
        leaves, omitted = [], 0
        for path, leaf in pairs:
            expression = name + pytrees.keystr(path)
            note = ''
            if boxed(leaf):
                note = note_of(leaf)
                leaf = getattr(leaf, 'value', None)
                expression += '.value'
            if not isinstance(leaf, jax.Array) or getattr(leaf, '_is_tracer', False):
                continue
            if len(leaves) >= limit:
                omitted += 1
                continue
            leaves.append((expression, tuple(str(key) for key in path), leaf, note))
        if leaves:
            found.append((name, type(value).__name__, leaves, omitted))
    return found


def completions(text):
    import rlcompleter
    completer = rlcompleter.Completer(sys.modules['__main__'].__dict__)
    found = []
    for i in range(200):
        candidate = completer.complete(text, i)
        if candidate is None:
            break
        if candidate not in found:
            found.append(candidate)
    return found
)python";

py::module_ hooks() { return py::module_::import("_shardscope_gui"); }

void install_hooks() {
  py::module_ types = py::module_::import("types");
  py::object module = types.attr("ModuleType")("_shardscope_gui");
  py::dict globals = module.attr("__dict__");
  globals["__builtins__"] = py::module_::import("builtins");
  py::module_::import("sys").attr("modules")["_shardscope_gui"] = module;
  py::exec(kHooks, globals);
  hooks().attr("install")();
}

ui::CellRecord::Status status_of(python::CellResult::Status status) {
  switch (status) {
    case python::CellResult::Status::kOk: return ui::CellRecord::Status::kOk;
    case python::CellResult::Status::kError: return ui::CellRecord::Status::kError;
    case python::CellResult::Status::kInterrupted: return ui::CellRecord::Status::kInterrupted;
    case python::CellResult::Status::kExit: return ui::CellRecord::Status::kExit;
  }
  return ui::CellRecord::Status::kError;
}

std::optional<Sharding> sharding_of(const py::handle& object) {
  if (py::isinstance<NamedSharding>(object)) return object.cast<NamedSharding>();
  if (py::isinstance<SingleDeviceSharding>(object)) return object.cast<SingleDeviceSharding>();
  return std::nullopt;
}

// The cell's stdout cut around each visualize_sharding picture, in order.
std::vector<ui::OutputSegment> stdout_segments(const std::string& text, const py::list& visuals) {
  std::vector<ui::OutputSegment> parts;
  std::size_t at = 0;
  for (const py::handle item : visuals) {
    const auto record = item.cast<py::tuple>();
    const auto start = record[0].cast<std::size_t>();
    const auto stop = record[1].cast<std::size_t>();
    const std::optional<Sharding> sharding = sharding_of(record[3]);
    if (!sharding || start < at || stop > text.size() || start > stop) continue;
    if (start > at) parts.push_back({ui::OutputSegment::Kind::kStdout, text.substr(at, start - at), std::nullopt});
    ui::VisualOutput visual{text.substr(start, stop - start), record[2].cast<Shape>(), *sharding};
    parts.push_back({ui::OutputSegment::Kind::kVisual, visual.text, std::move(visual)});
    at = stop;
  }
  if (at < text.size()) parts.push_back({ui::OutputSegment::Kind::kStdout, text.substr(at), std::nullopt});
  return parts;
}

// What the program view shows of the engine's last run: for jit, every value's layout (as a table and in the
// lowered text); for shard_map, the body's local program under its mesh and specs.
ui::ProgramInfo program_info(const api::ProgramRunRecord& run, const JaxProfile& profile) {
  ui::ProgramInfo info;
  info.name = run.name;
  info.collectives = run.log.records();
  if (run.shard_map) {
    const ShardMapSpec& spec = *run.shard_map;
    const auto specs_text = [&](const std::vector<PartitionSpec>& specs) {
      std::vector<std::string> texts;
      for (const PartitionSpec& p : specs) texts.push_back(p.repr(profile));
      return python_tuple(texts);
    };
    info.kind = "shard_map";
    info.text = "shard_map(" + run.name + ", mesh=" + spec.mesh.repr(profile) +
                ",\n          in_specs=" + specs_text(spec.in_specs) + ", out_specs=" + specs_text(spec.out_specs) +
                ")\nbody (per-device values):\n";
    for (std::size_t i = 0; i < spec.in_specs.size() && i < run.program->invars.size(); ++i) {
      info.values.push_back(ui::shard_map_value_row("in[" + std::to_string(i) + "]", "argument",
                                                    run.program->invars[i].aval, spec.in_specs[i], spec.mesh, profile));
    }
    for (std::size_t o = 0; o < spec.out_specs.size() && o < run.program->outvars.size(); ++o) {
      info.values.push_back(ui::shard_map_value_row("out[" + std::to_string(o) + "]", "result",
                                                    atom_aval(run.program->outvars[o]), spec.out_specs[o], spec.mesh,
                                                    profile));
    }
  }
  info.text += print_jaxpr(*run.program, profile);
  info.text += "\nresult shardings:\n";
  for (const Sharding& sharding : run.out_shardings) info.text += "  " + sharding_repr(sharding, profile) + "\n";
  if (!run.shard_map && run.mesh && run.layouts) {
    info.values = ui::program_value_rows(*run.program, *run.layouts, *run.mesh, profile);
    PartitionPlan plan;
    plan.mesh = run.mesh;
    plan.layouts = *run.layouts;
    info.lowered = lowered_text(*run.program, plan, run.name, profile);
    if (run.args.size() == run.program->invars.size()) {
      try {
        const Lowered lowered(run.program, run.args, run.lowering, profile);
        auto compiled = std::make_shared<const Compiled>(lowered.compile());
        ProgramExplanation explanation = explain_compiled(*compiled, run.name);
        info.compiled = std::move(compiled);
        explanation.runs = 1;  // the run this view shows
        info.explain = render_explanations({explanation}, ExplainFormat::kText);
        info.explanation = std::move(explanation);
      } catch (const std::exception& e) {
        info.explain = std::string("# shardscope explain: this program cannot be priced: ") + e.what() + "\n";
      }
    }
  }
  return info;
}

// A concrete array as the variables table shows it; nothing for a tracer.
std::optional<ui::VariableInfo> variable_info(const std::string& name, const py::handle& value,
                                              const JaxProfile& profile) {
  const api::Value& held = value.cast<const python::PyValue&>().value();
  if (!held.is_concrete()) return std::nullopt;
  const Array& array = held.array();
  ui::VariableInfo info;
  info.name = name;
  info.aval = array.aval();
  info.sharding = array.sharding();
  info.type_text = api::typeof_text(held, profile);
  info.sharding_text = sharding_repr(array.sharding(), profile);
  info.bytes_per_device = array.bytes_per_device();
  return info;
}

std::shared_ptr<ui::SessionSnapshot> build_snapshot(std::uint64_t revision) {
  auto snapshot = std::make_shared<ui::SessionSnapshot>();
  snapshot->revision = revision;
  const api::SessionConfig& config = api::session();
  snapshot->profile = config.profile;
  snapshot->device_preset = config.device_preset;
  snapshot->devices = config.devices;
  py::dict ns = py::module_::import("__main__").attr("__dict__");
  for (const auto& [key, value] : ns) {
    const auto name = key.cast<std::string>();
    if (name.empty() || name[0] == '_') continue;
    if (py::isinstance<python::PyValue>(value)) {
      if (auto info = variable_info(name, value, config.profile)) snapshot->variables.push_back(std::move(*info));
    } else if (py::isinstance<Mesh>(value)) {
      snapshot->meshes.push_back({name, value.cast<Mesh>()});
    }
  }
  // Arrays inside pytrees (a Flax model's parameters with their partitioning boxes, a TrainState).
  try {
    for (const py::handle tree : hooks().attr("parameter_trees")(ns)) {
      const auto entry = tree.cast<py::tuple>();
      ui::TreeInfo info;
      info.name = entry[0].cast<std::string>();
      info.type_name = entry[1].cast<std::string>();
      info.omitted_leaves = entry[3].cast<std::size_t>();
      for (const py::handle leaf : entry[2]) {
        const auto parts = leaf.cast<py::tuple>();
        auto array = variable_info(parts[0].cast<std::string>(), parts[2], config.profile);
        if (!array) continue;
        array->tree_path = parts[1].cast<std::vector<std::string>>();
        array->annotation = parts[3].cast<std::string>();
        info.leaves.push_back(std::move(*array));
      }
      if (!info.leaves.empty()) snapshot->trees.push_back(std::move(info));
    }
  } catch (const py::error_already_set&) {
    // A pytree whose flattening raises is left out of the snapshot, not allowed to break the window.
  }
  const auto bound = [&](const char* name, const char* module_attr) {
    if (!ns.contains(name)) return false;
    try {
      py::object expected = py::module_::import("jax.sharding").attr(module_attr);
      return py::object(ns[name]).is(expected);
    } catch (const py::error_already_set&) {
      return false;
    }
  };
  if (bound("NamedSharding", "NamedSharding")) snapshot->names.named_sharding = "NamedSharding";
  if (bound("P", "PartitionSpec"))
    snapshot->names.partition_spec = "P";
  else if (bound("PartitionSpec", "PartitionSpec"))
    snapshot->names.partition_spec = "PartitionSpec";
  // The last program the engine ran: its jaxpr, the shardings its results came back with, and the collectives
  // the partitioner inserted (the engine's communication log of that run).
  if (const auto run = api::last_program_run()) snapshot->program = program_info(*run, config.profile);
  return snapshot;
}

}  // namespace

PythonSession::PythonSession() {
  python::start_interpreter();
  try {
    install_hooks();
  } catch (const py::error_already_set& error) {
    PyErr_Clear();
    (void)error;
  }
  snapshot_ = build_snapshot(revision_);
  saved_state_ = PyEval_SaveThread();
  worker_ = std::thread([this] { work(); });
  interrupter_ = std::thread([this] { interrupt_loop(); });
}

PythonSession::~PythonSession() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    if (running_) interrupt_target_ = running_;
  }
  wake_interrupter_.notify_all();
  wake_worker_.notify_all();
  worker_.join();
  interrupter_.join();
  PyEval_RestoreThread(saved_state_);
}

void PythonSession::interrupt() {
  std::lock_guard lock(mutex_);
  drop_queued_locked();
  if (running_) {
    // The engine stops at its next equation, device or chunk (a long C++ call holds the GIL, so the Python
    // interrupt below only lands once it returns).
    request_cancellation();
    interrupt_target_ = running_;
    wake_interrupter_.notify_one();
  }
}

void PythonSession::job_started_locked() {
  clear_cancellation();  // a Stop meant for an earlier cell must not stop this one
}

void PythonSession::job_finished_locked() {
  // An interrupt aimed at this cell that arrived too late must not hit the next one (the interrupter raises
  // only with the GIL, which this worker holds).
  PyThreadState_SetAsyncExc(worker_ident_, nullptr);
  interrupt_target_.reset();
}

std::vector<std::string> PythonSession::completions(const std::string& text) {
  if (busy()) return {};
  py::gil_scoped_acquire gil;
  try {
    return hooks().attr("completions")(text).cast<std::vector<std::string>>();
  } catch (const py::error_already_set&) {
    return {};
  }
}

void PythonSession::work() {
  py::gil_scoped_acquire gil;
  worker_ident_ = PyThread_get_thread_ident();
  for (;;) {
    std::optional<Job> next_cell;
    {
      // Wait without the GIL so completions and the interrupter can take it.
      py::gil_scoped_release release;
      next_cell = next_job();
    }
    if (!next_cell) return;
    const Job& job = *next_cell;
    const auto started = std::chrono::steady_clock::now();
    py::list visuals;
    try {
      hooks().attr("install")();  // the user may have reloaded jax
      visuals = hooks().attr("visuals");
      visuals.attr("clear")();
    } catch (const py::error_already_set&) {
      PyErr_Clear();
    }
    const python::CellResult result = python::run_cell(job.source);
    ui::CellRecord record;
    record.id = job.id;
    record.source = job.source;
    record.status = status_of(result.status);
    record.output = stdout_segments(result.stdout_text, visuals);
    if (!result.stderr_text.empty())
      record.output.push_back({ui::OutputSegment::Kind::kStderr, result.stderr_text, {}});
    if (result.output) record.output.push_back({ui::OutputSegment::Kind::kValue, *result.output + "\n", {}});
    if (!result.error.empty()) record.output.push_back({ui::OutputSegment::Kind::kError, result.error, {}});
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::shared_ptr<ui::SessionSnapshot> next;
    try {
      next = build_snapshot(revision_ + 1);
    } catch (const py::error_already_set&) {
      PyErr_Clear();
    } catch (const std::exception&) {
      // A namespace the snapshot cannot read keeps the previous snapshot.
    }
    finish(std::move(record), std::move(next));
  }
}

void PythonSession::interrupt_loop() {
  for (;;) {
    std::uint64_t target = 0;
    {
      std::unique_lock lock(mutex_);
      wake_interrupter_.wait(lock, [this] { return stopping_ || interrupt_target_.has_value(); });
      if (!interrupt_target_) return;
      target = *interrupt_target_;
    }
    // The worker changes `running_` only while holding the GIL, so with the GIL held here the check
    // and the raise see the same cell.
    py::gil_scoped_acquire gil;
    std::lock_guard lock(mutex_);
    if (running_ == target) PyThreadState_SetAsyncExc(worker_ident_, PyExc_KeyboardInterrupt);
    interrupt_target_.reset();
    if (stopping_) return;
  }
}

}  // namespace shardscope::gui
