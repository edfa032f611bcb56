// ui::Session over the embedded interpreter: cells run on a worker thread holding the GIL; the UI thread
// only reads snapshots under a mutex.
#pragma once

#include <Python.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "ui/session.h"

namespace shardscope::gui {

class PythonSession final : public ui::Session {
 public:
  // Call on the thread that started the interpreter, with the GIL held; it is released until destruction.
  PythonSession();
  ~PythonSession() override;
  PythonSession(const PythonSession&) = delete;
  PythonSession& operator=(const PythonSession&) = delete;

  std::uint64_t submit(const std::string& source) override;
  [[nodiscard]] std::optional<std::uint64_t> running() const override;
  [[nodiscard]] std::size_t queued() const override;
  void interrupt() override;
  [[nodiscard]] std::vector<ui::CellRecord> take_finished() override;
  [[nodiscard]] std::shared_ptr<const ui::SessionSnapshot> snapshot() const override;
  [[nodiscard]] std::vector<std::string> completions(const std::string& text) override;

 private:
  struct Job {
    std::uint64_t id;
    std::string source;
  };
  void work();
  void interrupt_loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_worker_;
  std::condition_variable wake_interrupter_;
  std::deque<Job> queue_;
  std::optional<std::uint64_t> running_;
  std::vector<ui::CellRecord> finished_;
  std::shared_ptr<const ui::SessionSnapshot> snapshot_;
  std::uint64_t next_id_ = 1;
  std::uint64_t revision_ = 0;
  unsigned long worker_ident_ = 0;  // Python's thread id of the worker
  std::optional<std::uint64_t> interrupt_target_;
  bool stopping_ = false;
  PyThreadState* saved_state_ = nullptr;
  std::thread worker_;
  std::thread interrupter_;
};

}  // namespace shardscope::gui
