// The fork-join pool: workers sleep on a condition variable and share one job's index counter.
#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>

namespace shardscope {
namespace {

// Set on pool workers and on a caller while it runs its own job's tasks: nested jobs run inline.
thread_local bool t_inside_pool = false;

}  // namespace

struct ThreadPool::Job {
  std::size_t count = 0;
  const std::function<void(std::size_t)>* task = nullptr;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::mutex error_mutex;
  std::exception_ptr error;  // guarded by error_mutex
};

ThreadPool::ThreadPool(std::size_t threads) {
  const std::size_t extra = threads > 1 ? threads - 1 : 0;
  workers_.reserve(extra);
  for (std::size_t i = 0; i < extra; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::run_tasks(Job& job) {
  for (;;) {
    const std::size_t i = job.next.fetch_add(1);
    if (i >= job.count) return;
    try {
      (*job.task)(i);
    } catch (...) {
      const std::lock_guard lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
    }
    job.finished.fetch_add(1);
  }
}

void ThreadPool::worker_loop() {
  t_inside_pool = true;
  uint64_t seen = 0;
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    if (!job) continue;
    run_tasks(*job);
    if (job->finished.load() == job->count) {
      // Lock so the notification cannot slip between the caller's check and its wait.
      const std::lock_guard lock(mutex_);
      done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(std::size_t count, const std::function<void(std::size_t)>& task) {
  const auto run_inline = [&] {
    for (std::size_t i = 0; i < count; ++i) task(i);
  };
  if (count <= 1 || workers_.empty() || t_inside_pool) {
    run_inline();
    return;
  }
  std::unique_lock submit(submit_mutex_, std::try_to_lock);
  if (!submit.owns_lock()) {
    run_inline();  // another thread's job has the workers; ours would only wait for them
    return;
  }
  auto job = std::make_shared<Job>();
  job->count = count;
  job->task = &task;
  {
    const std::lock_guard lock(mutex_);
    job_ = job;
    ++generation_;
  }
  wake_.notify_all();
  t_inside_pool = true;
  run_tasks(*job);
  t_inside_pool = false;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return job->finished.load() == job->count; });
    job_.reset();
  }
  if (job->error) std::rethrow_exception(job->error);
}

namespace {

struct DefaultPool {
  std::mutex mutex;
  std::shared_ptr<ThreadPool> pool;  // guarded by mutex
};

DefaultPool& default_pool_state() {
  static DefaultPool state;
  return state;
}

std::size_t hardware_threads() { return std::max<std::size_t>(1, std::thread::hardware_concurrency()); }

}  // namespace

std::shared_ptr<ThreadPool> default_thread_pool() {
  DefaultPool& state = default_pool_state();
  const std::lock_guard lock(state.mutex);
  if (!state.pool) state.pool = std::make_shared<ThreadPool>(hardware_threads());
  return state.pool;
}

void set_thread_count(std::size_t threads) {
  auto pool = std::make_shared<ThreadPool>(threads == 0 ? hardware_threads() : threads);
  DefaultPool& state = default_pool_state();
  const std::lock_guard lock(state.mutex);
  state.pool.swap(pool);
  // The old pool is destroyed after the lock is released, once no running job holds it.
}

std::size_t thread_count() { return default_thread_pool()->size(); }

void parallel_for(std::size_t count, bool parallel, const std::function<void(std::size_t)>& task) {
  if (!parallel || count <= 1) {
    for (std::size_t i = 0; i < count; ++i) task(i);
    return;
  }
  default_thread_pool()->parallel_for(count, task);
}

}  // namespace shardscope
