// The fork-join pool: every index runs exactly once, errors reach the caller, nesting and concurrent
// callers neither deadlock nor lose work.
#include "base/thread_pool.h"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace shardscope;

TEST_CASE("parallel_for runs every index exactly once for pools of 1, 2 and 4 threads") {
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      std::vector<std::atomic<int>> hits(count);
      pool.parallel_for(count, [&](std::size_t i) { hits[i].fetch_add(1); });
      for (std::size_t i = 0; i < count; ++i) CHECK(hits[i].load() == 1);
    }
  }
}

TEST_CASE("parallel_for uses more than one thread when it has them") {
  ThreadPool pool(2);
  std::atomic<int> running{0};
  std::atomic<int> overlapped{0};
  // Each task waits briefly for a second one to start: only a second thread can make that happen.
  pool.parallel_for(2, [&](std::size_t) {
    running.fetch_add(1);
    for (int spin = 0; spin < 2000 && running.load() < 2; ++spin)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (running.load() == 2) overlapped.fetch_add(1);
  });
  CHECK(overlapped.load() == 2);
}

TEST_CASE("a task's exception is rethrown to the caller after the other tasks finish") {
  ThreadPool pool(2);
  std::atomic<int> done{0};
  CHECK_THROWS_AS(pool.parallel_for(64,
                                    [&](std::size_t i) {
                                      if (i == 5) throw std::invalid_argument("task 5");
                                      done.fetch_add(1);
                                    }),
                  std::invalid_argument);
  CHECK(done.load() == 63);
  // The pool still works afterwards.
  std::atomic<int> again{0};
  pool.parallel_for(10, [&](std::size_t) { again.fetch_add(1); });
  CHECK(again.load() == 10);
}

TEST_CASE("nested parallel_for runs inline instead of deadlocking") {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  pool.parallel_for(4, [&](std::size_t) { pool.parallel_for(5, [&](std::size_t) { total.fetch_add(1); }); });
  CHECK(total.load() == 20);
}

TEST_CASE("two threads submitting at once both get all their work done") {
  ThreadPool pool(2);
  std::atomic<int> first{0};
  std::atomic<int> second{0};
  std::thread other([&] {
    for (int round = 0; round < 50; ++round) pool.parallel_for(16, [&](std::size_t) { second.fetch_add(1); });
  });
  for (int round = 0; round < 50; ++round) pool.parallel_for(16, [&](std::size_t) { first.fetch_add(1); });
  other.join();
  CHECK(first.load() == 800);
  CHECK(second.load() == 800);
}

TEST_CASE("the process-wide pool can be resized and restored") {
  set_thread_count(3);
  CHECK(thread_count() == 3);
  std::atomic<int> hits{0};
  parallel_for(100, true, [&](std::size_t) { hits.fetch_add(1); });
  parallel_for(100, false, [&](std::size_t) { hits.fetch_add(1); });
  CHECK(hits.load() == 200);
  set_thread_count(0);
  CHECK(thread_count() == std::max<std::size_t>(1, std::thread::hardware_concurrency()));
}
