// The scoring queue's admission (docs/RELIABILITY.md, "Overload"): bounds
// in agents and bytes, refusal for a deadline the queue cannot meet (never
// when it is idle), work dropped when its deadline passed while it waited,
// the retry hint's range, and work done on the caller's thread counted
// against the same bounds.
#include "server/src/work_queue.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace utilityd::server {
namespace {

using Reason = WorkQueue::Reason;

TEST(WorkQueueTest, RefusesWhatWouldPassABoundAndAdmitsWhatFits) {
  WorkQueue q({.workers = 1, .max_agents = 100, .max_bytes = 1000});
  absl::Notification release;
  std::atomic<int> ran{0};
  WorkQueue::Refusal why;
  // One job holds the worker; the queue then holds what fits.
  ASSERT_TRUE(q.Submit({.agents = 60,
                        .bytes = 100,
                        .run =
                            [&](bool) {
                              release.WaitForNotification();
                              ++ran;
                            }},
                       &why));
  EXPECT_FALSE(
      q.Submit({.agents = 41, .bytes = 10, .run = [&](bool) { ++ran; }}, &why));
  EXPECT_EQ(why.reason, Reason::kFull);
  EXPECT_GE(why.retry_after, absl::Milliseconds(10));
  EXPECT_LE(why.retry_after, absl::Seconds(2));
  EXPECT_FALSE(
      q.Submit({.agents = 1, .bytes = 901, .run = [&](bool) { ++ran; }}, &why));
  EXPECT_EQ(why.reason, Reason::kFull);
  ASSERT_TRUE(q.Submit(
      {.agents = 40, .bytes = 900, .run = [&](bool) { ++ran; }}, &why));
  release.Notify();
  q.Stop();
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(q.stats().queued_agents + q.stats().running_agents, 0);
}

TEST(WorkQueueTest, AJobLargerThanTheBoundAloneIsRefusedEvenWhenIdle) {
  WorkQueue q({.workers = 1, .max_agents = 10});
  WorkQueue::Refusal why;
  EXPECT_FALSE(q.Submit({.agents = 11, .run = [](bool) {}}, &why));
  EXPECT_EQ(why.reason, Reason::kFull);
  EXPECT_TRUE(q.Submit({.agents = 10, .run = [](bool) {}}, &why));
}

TEST(WorkQueueTest, ADeadlineIsRefusedOnlyBehindWorkAndDroppedWhenPassed) {
  WorkQueue q({.workers = 1});
  WorkQueue::Refusal why;
  // Idle: even a deadline already passed is admitted; it comes up
  // expired and is not run as work.
  absl::Notification done;
  bool expired = false;
  ASSERT_TRUE(q.Submit({.agents = 1,
                        .deadline = absl::Now() - absl::Seconds(1),
                        .run =
                            [&](bool e) {
                              expired = e;
                              done.Notify();
                            }},
                       &why));
  done.WaitForNotification();
  EXPECT_TRUE(expired);
  // Behind a job that holds the worker, a deadline sooner than the queue's
  // expected wait is refused at the door.
  absl::Notification release;
  ASSERT_TRUE(q.Submit(
      {.agents = 1000, .run = [&](bool) { release.WaitForNotification(); }},
      &why));
  EXPECT_FALSE(q.Submit(
      {.agents = 1, .deadline = absl::Now(), .run = [](bool) {}}, &why));
  EXPECT_EQ(why.reason, Reason::kTooLate);
  release.Notify();
}

TEST(WorkQueueTest, WorkOnTheCallersThreadCountsAgainstTheSameBounds) {
  WorkQueue q({.workers = 1, .max_agents = 100});
  int64_t level = -1;
  q.on_level = [&](int64_t agents) { level = agents; };
  WorkQueue::Refusal why;
  ASSERT_TRUE(q.Reserve(80, 0, &why));
  EXPECT_EQ(level, 80);
  EXPECT_FALSE(q.Reserve(30, 0, &why));
  EXPECT_FALSE(q.Submit({.agents = 30, .run = [](bool) {}}, &why));
  q.Release(80, 0, absl::Milliseconds(1));
  EXPECT_EQ(level, 0);
  EXPECT_TRUE(q.Reserve(30, 0, &why));
  q.Release(30, 0, absl::Milliseconds(1));
}

TEST(WorkQueueTest, StoppedRefusesAndFinishesWhatWasQueued) {
  WorkQueue q({.workers = 2});
  std::atomic<int> ran{0};
  WorkQueue::Refusal why;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(q.Submit({.agents = 1, .run = [&](bool) { ++ran; }}, &why));
  }
  q.Stop();
  EXPECT_EQ(ran, 50);
  EXPECT_FALSE(q.Submit({.agents = 1, .run = [](bool) {}}, &why));
  EXPECT_EQ(why.reason, Reason::kStopped);
}

}  // namespace
}  // namespace utilityd::server
