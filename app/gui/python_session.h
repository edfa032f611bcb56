// ui::Session over the embedded interpreter: cells run on a worker thread holding the GIL; the UI thread
// only reads snapshots under a mutex.
#pragma once

#include <Python.h>

#include <condition_variable>
#include <thread>

#include "gui/queued_session.h"

namespace shardscope::gui {

class PythonSession final : public QueuedSession {
 public:
  // Call on the thread that started the interpreter, with the GIL held; it is released until destruction.
  PythonSession();
  ~PythonSession() override;
  PythonSession(const PythonSession&) = delete;
  PythonSession& operator=(const PythonSession&) = delete;

  void interrupt() override;
  [[nodiscard]] std::vector<std::string> completions(const std::string& text) override;

 private:
  void job_started_locked() override;
  void job_finished_locked() override;
  void work();
  void interrupt_loop();

  std::condition_variable wake_interrupter_;
  unsigned long worker_ident_ = 0;  // Python's thread id of the worker
  std::optional<std::uint64_t> interrupt_target_;
  PyThreadState* saved_state_ = nullptr;
  std::thread worker_;
  std::thread interrupter_;
};

}  // namespace shardscope::gui
