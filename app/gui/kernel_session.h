// ui::Session over a Jupyter kernel (`gui --connect FILE` / `--kernel NAME`): cells go to the kernel as execute
// requests on a worker thread; snapshots come from the inspection module running inside the kernel.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <optional>
#include <thread>

#include "gui/queued_session.h"

namespace shardscope::gui {

struct KernelTarget {
  std::optional<std::string> connection_file;  // attach to a running kernel
  std::optional<std::string> kernel_name;      // start one from its installed kernelspec
  double timeout_seconds = 60;                 // how long the kernel may take to answer its first request
};

class KernelSession final : public QueuedSession {
 public:
  // Call on the thread that started the interpreter, with the GIL held; connects (or starts the kernel) and
  // takes the first snapshot before returning. Throws RuntimeError naming the kernel when it cannot.
  explicit KernelSession(const KernelTarget& target);
  ~KernelSession() override;
  KernelSession(const KernelSession&) = delete;
  KernelSession& operator=(const KernelSession&) = delete;

  void interrupt() override;
  [[nodiscard]] std::vector<std::string> completions(const std::string& text) override;

 private:
  void job_started_locked() override { interrupt_requested_ = false; }
  void work();
  // With the GIL: the kernel's snapshot, or the previous one kept when it cannot be read (with the reason).
  std::shared_ptr<ui::SessionSnapshot> take_snapshot(std::uint64_t revision, std::string& problem);

  std::atomic<bool> interrupt_requested_{false};
  pybind11::object link_;
  PyThreadState* saved_state_ = nullptr;
  std::thread worker_;
};

}  // namespace shardscope::gui
