// A small fork-join thread pool: devices' kernels and big elementwise loops run on all cores.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace shardscope {

class ThreadPool {
 public:
  // `threads` counts the calling thread too: a pool of 1 runs everything on the caller.
  explicit ThreadPool(std::size_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  [[nodiscard]] std::size_t size() const { return workers_.size() + 1; }

  // Runs task(i) for every i in [0, count) and returns when all have finished; the first exception a
  // task throws is rethrown here. Calls from inside a task, or while another thread's job holds the
  // pool, run serially on the caller, so nesting never deadlocks.
  void parallel_for(std::size_t count, const std::function<void(std::size_t)>& task);

 private:
  struct Job;
  void worker_loop();
  static void run_tasks(Job& job);

  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::shared_ptr<Job> job_;  // guarded by mutex_
  uint64_t generation_ = 0;   // guarded by mutex_
  bool stopping_ = false;     // guarded by mutex_
};

// The process-wide pool, sized by std::thread::hardware_concurrency() unless overridden.
[[nodiscard]] std::shared_ptr<ThreadPool> default_thread_pool();
// Resizes the process-wide pool (0 restores the hardware default); jobs already running keep theirs.
void set_thread_count(std::size_t threads);
[[nodiscard]] std::size_t thread_count();

// Runs task(i) for i in [0, count) on the process-wide pool when `parallel` is true, else in order on
// the caller (small work is cheaper than waking threads).
void parallel_for(std::size_t count, bool parallel, const std::function<void(std::size_t)>& task);

// Work below this many elements runs on one thread: waking a worker costs microseconds.
inline constexpr int64_t kParallelMinElements = 1 << 15;

}  // namespace shardscope
