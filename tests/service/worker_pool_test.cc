// The worker pool's contract: bounded queue, immediate rejection when full,
// FIFO order, and a shutdown that runs everything it accepted.

#include "server/worker_pool.h"

#include <atomic>
#include <vector>

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace wayfinder::server {
namespace {

TEST(WorkerPoolTest, RejectsWhenQueueIsFull) {
  WorkerPool pool(1, 2);
  absl::Notification running, release;
  ASSERT_TRUE(pool.TrySubmit([&] {
    running.Notify();
    release.WaitForNotification();
  }));
  running.WaitForNotification();
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.TrySubmit([&] { ++ran; }));
  EXPECT_TRUE(pool.TrySubmit([&] { ++ran; }));
  EXPECT_EQ(pool.queue_depth(), 2u);
  EXPECT_FALSE(pool.TrySubmit([&] { ++ran; }));
  release.Notify();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 2);
}

TEST(WorkerPoolTest, RunsInOrderOnOneThread) {
  std::vector<int> order;
  absl::Mutex mu;
  {
    WorkerPool pool(1, 100);
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(pool.TrySubmit([&, i] {
        absl::MutexLock lock(&mu);
        order.push_back(i);
      }));
    }
  }  // the destructor drains the queue
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST(WorkerPoolTest, ShutdownRefusesNewWorkAndIsIdempotent) {
  WorkerPool pool(3, 10);
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pool.TrySubmit([&] { ++ran; }));
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 10);
  EXPECT_FALSE(pool.TrySubmit([&] { ++ran; }));
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace wayfinder::server
