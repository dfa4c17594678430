// A bounded queue that one worker thread drains in batches: producers never
// block — Offer says no when the queue is full and the caller counts the
// drop — and the worker hands everything queued to `drain` at once. The
// worker wakes when `batch` items wait or `linger` has passed since the
// first did, not for every item: waking a thread costs more than the work
// of a few items (on a VM, tens of microseconds), and a sampled stream of
// items would otherwise wake it thousands of times a second. The decision
// log's writer and shadow evaluation run on it.
//
//   DrainingQueue<Entry> queue(65536, [](std::deque<Entry>& batch) {...});
//   if (!queue.Offer(std::move(e))) dropped.Increment();
//   queue.Stop();   // drains what is queued, then joins (the destructor too)
#ifndef UTILITYD_SERVER_DRAINING_QUEUE_H_
#define UTILITYD_SERVER_DRAINING_QUEUE_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "utilityd/base/sync.h"

namespace utilityd::server {

template <typename T>
class DrainingQueue {
 public:
  // Starts the worker; `drain` runs on it, one batch at a time (the batch
  // is cleared afterwards).
  DrainingQueue(size_t capacity, std::function<void(std::deque<T>&)> drain,
                size_t batch = 256,
                absl::Duration linger = absl::Milliseconds(20))
      : capacity_(capacity),
        batch_(std::max<size_t>(1, std::min(batch, capacity))),
        linger_(linger),
        drain_(std::move(drain)) {
    worker_ = std::thread([this] { Run(); });
  }
  ~DrainingQueue() { Stop(); }
  DrainingQueue(const DrainingQueue&) = delete;
  DrainingQueue& operator=(const DrainingQueue&) = delete;

  // Queues `item`; false (and `item` untouched) when the queue is full.
  bool Offer(T&& item) {
    utilityd::MutexLock lock(&mu_);
    if (queue_.size() >= capacity_) return false;
    queue_.push_back(std::move(item));
    ++queued_;
    return true;
  }

  // Waits until everything queued before the call has been drained (at
  // most `linger` later than it could).
  void WaitIdle() {
    utilityd::MutexLock lock(&mu_);
    const int64_t target = queued_;
    auto caught_up = [this, target]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return drained_ >= target || stopped_;
    };
    mu_.Await(caught_up);
  }

  // Drains what is queued, then stops the worker. Idempotent.
  void Stop() {
    {
      utilityd::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (worker_.joinable()) worker_.join();
  }

 private:
  void Run() {
    std::deque<T> batch;
    while (true) {
      {
        utilityd::MutexLock lock(&mu_);
        auto any = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
          return stop_ || !queue_.empty();
        };
        mu_.Await(any);
        // Something waits: give it `linger` to become a batch.
        auto full = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
          return stop_ || queue_.size() >= batch_;
        };
        mu_.AwaitWithTimeout(full, linger_);
        if (queue_.empty() && stop_) {
          stopped_ = true;
          return;
        }
        batch.swap(queue_);
      }
      const auto n = static_cast<int64_t>(batch.size());
      drain_(batch);
      batch.clear();
      utilityd::MutexLock lock(&mu_);
      drained_ += n;
    }
  }

  const size_t capacity_;
  const size_t batch_;
  const absl::Duration linger_;
  const std::function<void(std::deque<T>&)> drain_;
  utilityd::Mutex mu_;
  std::deque<T> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int64_t queued_ ABSL_GUARDED_BY(mu_) = 0;   // ever queued
  int64_t drained_ ABSL_GUARDED_BY(mu_) = 0;  // ever drained
  std::thread worker_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_DRAINING_QUEUE_H_
