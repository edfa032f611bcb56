// ui::Session over a Jupyter kernel (`gui --connect FILE` / `--kernel NAME`): cells go to the kernel as execute
// requests on a worker thread; snapshots come from the inspection module running inside the kernel.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "ui/session.h"

namespace shardscope::gui {

struct KernelTarget {
  std::optional<std::string> connection_file;  // attach to a running kernel
  std::optional<std::string> kernel_name;      // start one from its installed kernelspec
  double timeout_seconds = 60;                 // how long the kernel may take to answer its first request
};

class KernelSession final : public ui::Session {
 public:
  // Call on the thread that started the interpreter, with the GIL held; connects (or starts the kernel) and
  // takes the first snapshot before returning. Throws RuntimeError naming the kernel when it cannot.
  explicit KernelSession(const KernelTarget& target);
  ~KernelSession() override;
  KernelSession(const KernelSession&) = delete;
  KernelSession& operator=(const KernelSession&) = delete;

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
  // With the GIL: the kernel's snapshot, or the previous one kept when it cannot be read (with the reason).
  std::shared_ptr<ui::SessionSnapshot> take_snapshot(std::uint64_t revision, std::string& problem);

  mutable std::mutex mutex_;
  std::condition_variable wake_worker_;
  std::deque<Job> queue_;
  std::optional<std::uint64_t> running_;
  std::vector<ui::CellRecord> finished_;
  std::shared_ptr<const ui::SessionSnapshot> snapshot_;
  std::uint64_t next_id_ = 1;
  std::uint64_t revision_ = 0;
  std::atomic<bool> interrupt_requested_{false};
  bool stopping_ = false;
  pybind11::object link_;
  PyThreadState* saved_state_ = nullptr;
  std::thread worker_;
};

}  // namespace shardscope::gui
