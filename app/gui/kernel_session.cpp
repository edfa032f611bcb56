// The kernel-backed session: a thin shell over the host module `_shardscope_host_kernel_client` (the Jupyter
// protocol) and ui::snapshot_from_inspection (reading its snapshots).
#include "gui/kernel_session.h"

#include <chrono>
#include <cstring>

#include "base/error.h"
#include "python/host.h"
#include "python/host_sources.h"
#include "ui/model/kernel_snapshot.h"

namespace py = pybind11;

namespace shardscope::gui {

namespace {

const char* inspection_source() {
  for (const python::HostModuleSource& source : python::host_module_sources()) {
    if (std::strcmp(source.module_name, "_shardscope_host_inspect") == 0) return source.source;
  }
  throw runtime_error("the inspection module is not built in");
}

// "TypeName: message", without pybind11's traceback lines: what the user needs to fix the input.
std::string exception_text(py::error_already_set& error) {
  const std::string type = py::str(error.type().attr("__name__"));
  const std::string message = py::str(error.value());
  error.restore();
  PyErr_Clear();
  return message.empty() ? type : type + ": " + message;
}

ui::OutputSegment::Kind segment_kind(const std::string& name) {
  if (name == "stderr") return ui::OutputSegment::Kind::kStderr;
  if (name == "value") return ui::OutputSegment::Kind::kValue;
  if (name == "error") return ui::OutputSegment::Kind::kError;
  return ui::OutputSegment::Kind::kStdout;
}

ui::CellRecord::Status status_of(const std::string& status) {
  if (status == "ok") return ui::CellRecord::Status::kOk;
  if (status == "interrupted") return ui::CellRecord::Status::kInterrupted;
  return ui::CellRecord::Status::kError;
}

}  // namespace

KernelSession::KernelSession(const KernelTarget& target) {
  python::start_interpreter();
  try {
    py::object link_type = py::module_::import("_shardscope_host_kernel_client").attr("KernelLink");
    link_ = link_type(target.connection_file ? py::object(py::str(*target.connection_file)) : py::object(py::none()),
                      target.kernel_name ? py::object(py::str(*target.kernel_name)) : py::object(py::none()),
                      inspection_source(), target.timeout_seconds);
  } catch (py::error_already_set& error) {
    const std::string which = target.connection_file ? "with connection file '" + *target.connection_file + "'"
                                                     : "from kernelspec '" + target.kernel_name.value_or("") + "'";
    throw runtime_error("cannot attach to the kernel " + which + ": " + exception_text(error));
  }
  std::string problem;
  auto first = take_snapshot(0, problem);
  if (!first) throw runtime_error("cannot read the kernel's first snapshot: " + problem);
  snapshot_ = std::move(first);
  saved_state_ = PyEval_SaveThread();
  worker_ = std::thread([this] { work(); });
}

KernelSession::~KernelSession() {
  request_stop();
  interrupt_requested_ = true;  // a running cell is interrupted so the worker can stop
  worker_.join();
  PyEval_RestoreThread(saved_state_);
  try {
    link_.attr("close")();
  } catch (const py::error_already_set&) {
    PyErr_Clear();  // a kernel already gone has nothing to close
  }
  link_ = py::object();
}

void KernelSession::interrupt() {
  std::lock_guard lock(mutex_);
  drop_queued_locked();
  // The worker, waiting on the kernel's messages, sends the interrupt itself (it holds the GIL).
  if (running_) interrupt_requested_ = true;
}

std::vector<std::string> KernelSession::completions(const std::string& text) {
  if (busy()) return {};
  py::gil_scoped_acquire gil;
  try {
    return link_.attr("complete")(text).cast<std::vector<std::string>>();
  } catch (const py::error_already_set&) {
    return {};
  }
}

std::shared_ptr<ui::SessionSnapshot> KernelSession::take_snapshot(std::uint64_t revision, std::string& problem) {
  try {
    const std::string text = link_.attr("snapshot")().cast<std::string>();
    return ui::snapshot_from_inspection(nlohmann::json::parse(text), revision);
  } catch (py::error_already_set& error) {
    problem = exception_text(error);
  } catch (const std::exception& error) {
    problem = error.what();
  }
  return nullptr;
}

void KernelSession::work() {
  py::gil_scoped_acquire gil;
  const py::cpp_function interrupted([this] { return interrupt_requested_.load(); });
  for (;;) {
    std::optional<Job> next_cell;
    {
      py::gil_scoped_release release;
      next_cell = next_job();
    }
    if (!next_cell) return;
    const Job& job = *next_cell;
    const auto started = std::chrono::steady_clock::now();
    ui::CellRecord record;
    record.id = job.id;
    record.source = job.source;
    try {
      const py::tuple result = link_.attr("execute")(job.source, interrupted);
      record.status = status_of(result[0].cast<std::string>());
      for (const py::handle item : result[1].cast<py::list>()) {
        const py::tuple pair = item.cast<py::tuple>();
        record.output.push_back({segment_kind(pair[0].cast<std::string>()), pair[1].cast<std::string>(), {}});
      }
    } catch (py::error_already_set& error) {
      // A lost kernel fails this cell with the reason; the window and what the user typed stay.
      record.status = ui::CellRecord::Status::kError;
      record.output.push_back({ui::OutputSegment::Kind::kError, exception_text(error) + "\n", {}});
    }
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::string problem;
    std::shared_ptr<ui::SessionSnapshot> next = take_snapshot(revision_ + 1, problem);
    if (!next && !problem.empty()) {
      record.output.push_back(
          {ui::OutputSegment::Kind::kStderr, "shardscope: the kernel's snapshot failed: " + problem + "\n", {}});
    }
    finish(std::move(record), std::move(next));
  }
}

}  // namespace shardscope::gui
