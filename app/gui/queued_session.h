// What both window sessions share: cells queued in order for one worker thread, finished cells handed to the
// UI thread, and the latest snapshot, all behind one mutex.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include "ui/session.h"

namespace shardscope::gui {

class QueuedSession : public ui::Session {
 public:
  std::uint64_t submit(const std::string& source) override;
  [[nodiscard]] std::optional<std::uint64_t> running() const override;
  [[nodiscard]] std::size_t queued() const override;
  [[nodiscard]] std::vector<ui::CellRecord> take_finished() override;
  [[nodiscard]] std::shared_ptr<const ui::SessionSnapshot> snapshot() const override;

 protected:
  struct Job {
    std::uint64_t id = 0;
    std::string source;
  };
  // With `mutex_` held: queued cells are dropped as a notebook drops them after an interrupt, each reported.
  void drop_queued_locked();
  // Blocks until a cell is queued (it becomes the running one) or stopping; nullopt when stopping.
  [[nodiscard]] std::optional<Job> next_job();
  // The running cell finished: its record and, when one could be taken, the snapshot after it.
  void finish(ui::CellRecord record, std::shared_ptr<ui::SessionSnapshot> next);
  // Asks the worker to stop after the running cell; queued cells are dropped.
  void request_stop();
  [[nodiscard]] bool busy() const;
  // Called with `mutex_` held when a cell becomes the running one, and when it finished.
  virtual void job_started_locked() {}
  virtual void job_finished_locked() {}

  mutable std::mutex mutex_;
  std::condition_variable wake_worker_;
  std::deque<Job> queue_;
  std::optional<std::uint64_t> running_;
  std::vector<ui::CellRecord> finished_;
  std::shared_ptr<const ui::SessionSnapshot> snapshot_;
  std::uint64_t next_id_ = 1;
  std::uint64_t revision_ = 0;
  bool stopping_ = false;
};

}  // namespace shardscope::gui
