// The worker pool's contract: bounded queue, immediate rejection when full,
// FIFO order within a key and round-robin between keys, the queue-wait
// bound (at admission and at dequeue), and a shutdown that runs everything
// it accepted. Waits are measured on an injected clock: nothing here
// depends on how fast the machine is.

#include "server/worker_pool.h"

#include "server/admission.h"

#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

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

// A clock the test moves by hand.
class FakeClock {
 public:
  absl::Time Now() const {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  WorkerPool::Clock AsClock() {
    return [this] { return Now(); };
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ = absl::UnixEpoch();
};

// Keeps the pool's only worker busy until `release`; returns once it runs.
void Block(WorkerPool& pool, absl::Notification& release) {
  absl::Notification running;
  ASSERT_EQ(pool.Submit(99, [&](const WorkerPool::Start&) {
    running.Notify();
    release.WaitForNotification();
  }),
            WorkerPool::Admission::kQueued);
  running.WaitForNotification();
}

TEST(WorkerPoolTest, ServesKeysRoundRobin) {
  std::vector<std::string> order;
  absl::Mutex mu;
  auto record = [&](std::string name) {
    return [&, name](const WorkerPool::Start&) {
      absl::MutexLock lock(&mu);
      order.push_back(name);
    };
  };
  {
    WorkerPool pool(1, 100);
    absl::Notification release;
    Block(pool, release);
    // A flood from connection 1, then one call each from 2 and 3.
    for (int i = 1; i <= 4; ++i) {
      ASSERT_EQ(pool.Submit(1, record(absl::StrCat("a", i))), WorkerPool::Admission::kQueued);
    }
    ASSERT_EQ(pool.Submit(2, record("b1")), WorkerPool::Admission::kQueued);
    ASSERT_EQ(pool.Submit(3, record("c1")), WorkerPool::Admission::kQueued);
    ASSERT_EQ(pool.Submit(2, record("b2")), WorkerPool::Admission::kQueued);
    release.Notify();
  }  // the destructor drains the queue
  const std::vector<std::string> expected = {"a1", "b1", "c1", "a2", "b2", "a3", "a4"};
  EXPECT_EQ(order, expected);
}

TEST(WorkerPoolTest, TaskThatWaitedPastTheBoundStartsExpired) {
  FakeClock clock;
  WorkerPool pool(1, 10, absl::Milliseconds(100), clock.AsClock());
  absl::Notification release;
  Block(pool, release);
  std::vector<WorkerPool::Start> starts;
  absl::Mutex mu;
  auto record = [&](const WorkerPool::Start& s) {
    absl::MutexLock lock(&mu);
    starts.push_back(s);
  };
  ASSERT_EQ(pool.Submit(1, record), WorkerPool::Admission::kQueued);
  clock.Advance(absl::Milliseconds(60));
  ASSERT_EQ(pool.Submit(2, record), WorkerPool::Admission::kQueued);
  clock.Advance(absl::Milliseconds(60));  // the first waited 120 ms, the second 60
  release.Notify();
  pool.Shutdown();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_TRUE(starts[0].expired);
  EXPECT_EQ(starts[0].waited, absl::Milliseconds(120));
  EXPECT_FALSE(starts[1].expired);
  EXPECT_EQ(starts[1].waited, absl::Milliseconds(60));
  EXPECT_EQ(pool.expired(), 1u);
  // Both waits are in the histogram: 60 ms and 120 ms.
  const WorkerPool::WaitHistogram h = pool.wait_histogram();
  EXPECT_EQ(h.count, 3u);  // and the blocking task's zero wait
  EXPECT_NEAR(h.sum_seconds, 0.18, 1e-9);
  EXPECT_EQ(h.cumulative[0], 1u);   // <= 100 us: the blocker
  EXPECT_EQ(h.cumulative[8], 1u);   // <= 50 ms: not yet the 60
  EXPECT_EQ(h.cumulative[9], 2u);   // <= 100 ms: the 60
  EXPECT_EQ(h.cumulative[10], 3u);  // <= 250 ms: the 120
}

TEST(WorkerPoolTest, TrySubmitTasksAreExemptFromTheBound) {
  FakeClock clock;
  WorkerPool pool(1, 10, absl::Milliseconds(100), clock.AsClock());
  absl::Notification release;
  Block(pool, release);
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.TrySubmit([&] { ++ran; }));
  clock.Advance(absl::Seconds(5));
  release.Notify();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(pool.expired(), 0u);
}

TEST(WorkerPoolTest, RefusesAtAdmissionWhenTheExpectedWaitIsTooLong) {
  FakeClock clock;
  WorkerPool pool(1, 100, absl::Milliseconds(100), clock.AsClock());
  // Teach the pool its rate: three tasks queued behind a blocked worker,
  // each taking 40 ms of the fake clock, start 40 ms apart.
  {
    absl::Notification release, done;
    Block(pool, release);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(pool.Submit(1, [&, i](const WorkerPool::Start&) {
        clock.Advance(absl::Milliseconds(40));
        if (i == 2) done.Notify();
      }),
                WorkerPool::Admission::kQueued);
    }
    release.Notify();
    done.WaitForNotification();
  }
  absl::Notification release;
  Block(pool, release);
  int ran = 0;
  auto task = [&](const WorkerPool::Start& s) {
    if (!s.expired) ++ran;
  };
  // Connection 1 queues two (expected waits 0 and 40 ms); the third would
  // wait 80 ms, more than half the 100 ms bound: refused.
  EXPECT_EQ(pool.Submit(1, task), WorkerPool::Admission::kQueued);
  EXPECT_EQ(pool.Submit(1, task), WorkerPool::Admission::kQueued);
  absl::Duration expected;
  EXPECT_EQ(pool.Submit(1, task, &expected), WorkerPool::Admission::kWaitTooLong);
  EXPECT_EQ(expected, absl::Milliseconds(80));
  // Connection 2 is behind one task of connection 1 only (40 ms): admitted.
  EXPECT_EQ(pool.Submit(2, task), WorkerPool::Admission::kQueued);
  EXPECT_EQ(pool.refused_wait(), 1u);
  release.Notify();
  pool.Shutdown();
  EXPECT_EQ(ran, 3);
}

TEST(InlineCostEstimateTest, SkipsKindsThatOverrunAndProbesThemLessOftenWhileTheyDo) {
  InlineCostEstimate costs;
  const absl::Duration quick = absl::Microseconds(5);
  auto tries = [&costs](uint64_t kind, uint32_t calls) {
    int tried = 0;
    for (uint32_t i = 0; i < calls; ++i) tried += costs.ShouldTry(kind);
    return tried;
  };
  EXPECT_TRUE(costs.ShouldTry(7));  // a new kind tries
  for (int i = 0; i < 5; ++i) costs.Record(7, /*fit=*/false, quick);
  EXPECT_EQ(tries(7, 4), 4);  // still more than half fit
  costs.Record(7, /*fit=*/false, quick);
  EXPECT_EQ(tries(7, 4 * InlineCostEstimate::kProbeEvery), 4);  // one call in kProbeEvery
  costs.Record(7, /*fit=*/false, quick);  // a probe that overran: half as often
  EXPECT_EQ(tries(7, 4 * InlineCostEstimate::kProbeEvery), 2);
  for (uint32_t i = 1; i < InlineCostEstimate::kMaxBackoff + 3; ++i) {
    costs.Record(7, /*fit=*/false, quick);
  }
  const uint32_t rarest = InlineCostEstimate::kProbeEvery << InlineCostEstimate::kMaxBackoff;
  EXPECT_EQ(tries(7, 4 * rarest), 4);  // but never less often than this
  EXPECT_TRUE(costs.ShouldTry(8));     // other kinds are not affected
  for (int i = 0; i < 8; ++i) costs.Record(7, /*fit=*/true, quick);
  EXPECT_TRUE(costs.ShouldTry(7));  // fits again: tries again
}

TEST(InlineCostEstimateTest, AnAttemptThatFitsButTakesLongIsNotWorthIt) {
  InlineCostEstimate costs;
  const absl::Duration slow = InlineCostEstimate::kCheap + absl::Microseconds(1);
  for (int i = 0; i < 6; ++i) costs.Record(9, /*fit=*/true, slow);
  EXPECT_FALSE(costs.ShouldTry(9));
  for (int i = 0; i < 8; ++i) costs.Record(9, /*fit=*/true, InlineCostEstimate::kCheap);
  EXPECT_TRUE(costs.ShouldTry(9));
}

TEST(CallbackLatenessTest, WeightsSamplesAndForgetsStaleOnes) {
  CallbackLateness lateness;
  const absl::Time t = absl::FromUnixSeconds(1000);
  EXPECT_EQ(lateness.Current(t), absl::ZeroDuration());
  lateness.Record(absl::Milliseconds(400), t);
  EXPECT_EQ(lateness.Current(t), absl::Milliseconds(100));  // a quarter per sample
  for (int i = 0; i < 20; ++i) lateness.Record(absl::Milliseconds(400), t);
  EXPECT_GT(lateness.Current(t), absl::Milliseconds(390));
  EXPECT_EQ(lateness.Current(t + CallbackLateness::kFresh + absl::Milliseconds(1)),
            absl::ZeroDuration());
  int sampled = 0;
  for (int i = 0; i < 80; ++i) sampled += lateness.Sample();
  EXPECT_EQ(sampled, 10);
}

}  // namespace
}  // namespace wayfinder::server
