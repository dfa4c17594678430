// Decisions are scored on a pool of workers fed by one bounded queue, not on
// gRPC's callback threads (docs/RELIABILITY.md, "Overload"). gRPC's threads
// only admit or refuse work, so health checks and new calls are answered at
// once however much is queued; what is queued is bounded in agents and in
// request bytes, and work that cannot be started before its deadline is
// refused at the door or dropped when it comes up.
//
//   WorkQueue queue({.workers = 2, .max_agents = 32768});
//   WorkQueue::Refusal why;
//   if (!queue.Submit({.agents = 256, .bytes = 9000, .deadline = d,
//                      .run = [](bool expired) { ... }}, &why)) {
//     ... answer RESOURCE_EXHAUSTED with why.retry_after ...
//   }
#ifndef UTILITYD_SERVER_SRC_WORK_QUEUE_H_
#define UTILITYD_SERVER_SRC_WORK_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "utilityd/base/sync.h"

namespace utilityd::server {

class WorkQueue {
 public:
  struct Options {
    // Scoring threads; 0: one per CPU the process may use.
    int workers = 0;
    // Agents queued and being scored, at most (a request is refused when
    // it would pass this); 0: unbounded.
    int64_t max_agents = 0;
    // Request bytes queued and being scored, at most; 0: unbounded.
    int64_t max_bytes = 0;
    // The workers' niceness (Linux, per thread): above gRPC's threads, so
    // that under load the threads that admit, refuse and answer health
    // checks still get the CPU first. 0 leaves them equal.
    int nice = 10;
  };

  struct Job {
    int64_t agents = 0;
    int64_t bytes = 0;
    // Past it the work is not worth starting: it is refused when the
    // queue ahead of it would take longer, and dropped (run(true)) when it
    // comes up late.
    absl::Time deadline = absl::InfiniteFuture();
    // Runs on a worker: expired is true when the deadline passed while the
    // job waited (then answer, do not score).
    std::function<void(bool expired)> run;
  };

  enum class Reason { kNone, kFull, kTooLate, kStopped };
  struct Refusal {
    Reason reason = Reason::kNone;
    // When the queue is expected to have room again: the retry hint.
    absl::Duration retry_after;
  };

  explicit WorkQueue(Options options);
  ~WorkQueue();  // Stop()s
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `job`, or refuses it (false, with why) when it would pass a
  // bound or cannot start before its deadline at the queue's current pace
  // (never for its deadline when nothing is queued). A job larger than a
  // bound alone is always refused: keep the bounds above the largest
  // request (utilityd warns at start when --max_queued_agents is below
  // --max_agents_per_request).
  [[nodiscard]] bool Submit(Job job, Refusal* refusal);

  // For work the caller does on its own thread (a stream's batch, scored
  // in gRPC's callback as it is read: a write started elsewhere waits for
  // gRPC's poller): admits it against the same bounds as Submit, or
  // refuses it; Release when done.
  [[nodiscard]] bool Reserve(int64_t agents, int64_t bytes, Refusal* refusal);
  void Release(int64_t agents, int64_t bytes, absl::Duration took);

  // Finishes what is queued, then stops the workers; Submit refuses
  // afterwards.
  void Stop();

  struct Stats {
    int64_t queued_agents = 0;   // waiting
    int64_t running_agents = 0;  // being scored
    int64_t bytes = 0;
    int workers = 0;
    double seconds_per_agent = 0;  // the recent pace, per worker
  };
  Stats stats() const;

  // Called with each job's time in the queue (seconds) as a worker takes
  // it, and with the agents queued and being scored after each change; set
  // before the first Submit.
  std::function<void(double)> on_wait;
  std::function<void(int64_t)> on_level;

 private:
  struct Entry {
    Job job;
    absl::Time queued;
  };
  void Work();
  absl::Duration ExpectedWaitLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `job` would pass a bound or its deadline; if so, why.
  bool RefuseLocked(const Job& job, Refusal* refusal) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DoneLocked(int64_t agents, int64_t bytes, absl::Duration took,
                  bool expired) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const int worker_count_;
  mutable utilityd::Mutex mu_;
  std::deque<Entry> queue_ ABSL_GUARDED_BY(mu_);
  int64_t queued_agents_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t running_agents_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Exponentially weighted seconds of scoring per agent.
  double seconds_per_agent_ ABSL_GUARDED_BY(mu_) = 1e-6;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_SRC_WORK_QUEUE_H_
