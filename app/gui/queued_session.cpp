// The cell queue both window sessions share (see queued_session.h).
#include "gui/queued_session.h"

namespace shardscope::gui {

std::uint64_t QueuedSession::submit(const std::string& source) {
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  queue_.push_back({id, source});
  wake_worker_.notify_one();
  return id;
}

std::optional<std::uint64_t> QueuedSession::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

std::size_t QueuedSession::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::vector<ui::CellRecord> QueuedSession::take_finished() {
  std::lock_guard lock(mutex_);
  std::vector<ui::CellRecord> out;
  out.swap(finished_);
  return out;
}

std::shared_ptr<const ui::SessionSnapshot> QueuedSession::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

void QueuedSession::drop_queued_locked() {
  for (const Job& job : queue_) {
    finished_.push_back({job.id,
                         job.source,
                         ui::CellRecord::Status::kInterrupted,
                         {{ui::OutputSegment::Kind::kError, "KeyboardInterrupt (not run)\n", std::nullopt}},
                         0.0});
  }
  queue_.clear();
}

std::optional<QueuedSession::Job> QueuedSession::next_job() {
  std::unique_lock lock(mutex_);
  wake_worker_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (stopping_) return std::nullopt;
  Job job = std::move(queue_.front());
  queue_.pop_front();
  running_ = job.id;
  job_started_locked();
  return job;
}

void QueuedSession::finish(ui::CellRecord record, std::shared_ptr<ui::SessionSnapshot> next) {
  std::lock_guard lock(mutex_);
  job_finished_locked();
  running_.reset();
  if (next) {
    snapshot_ = std::move(next);
    ++revision_;
  }
  finished_.push_back(std::move(record));
}

void QueuedSession::request_stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_worker_.notify_all();
}

bool QueuedSession::busy() const {
  std::lock_guard lock(mutex_);
  return running_.has_value() || !queue_.empty();
}

}  // namespace shardscope::gui
