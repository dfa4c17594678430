#include "server/src/work_queue.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

namespace utilityd::server {

namespace {

int WorkerCount(int asked) {
  return asked > 0 ? asked
                   : static_cast<int>(
                         std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

WorkQueue::WorkQueue(Options options)
    : options_(options), worker_count_(WorkerCount(options.workers)) {
  for (int i = 0; i < worker_count_; ++i) {
    workers_.emplace_back([this] { Work(); });
  }
}

WorkQueue::~WorkQueue() { Stop(); }

absl::Duration WorkQueue::ExpectedWaitLocked() const {
  // The agents ahead, shared by the workers, at the recent pace.
  const double agents = static_cast<double>(queued_agents_) +
                        0.5 * static_cast<double>(running_agents_);
  return absl::Seconds(agents * seconds_per_agent_ /
                       static_cast<double>(worker_count_));
}

bool WorkQueue::RefuseLocked(const Job& job, Refusal* refusal) const {
  refusal->reason = Reason::kNone;
  if (stopping_) {
    refusal->reason = Reason::kStopped;
    return true;
  }
  const bool idle = queue_.empty() && running_agents_ == 0;
  const absl::Duration wait = ExpectedWaitLocked();
  if ((options_.max_agents > 0 &&
       queued_agents_ + running_agents_ + job.agents > options_.max_agents) ||
      (options_.max_bytes > 0 && bytes_ + job.bytes > options_.max_bytes)) {
    refusal->reason = Reason::kFull;
  } else if (!idle && absl::Now() + wait > job.deadline) {
    refusal->reason = Reason::kTooLate;
  } else {
    return false;
  }
  // Half the queue drained: room for this job at the current pace.
  refusal->retry_after =
      std::clamp(wait / 2, absl::Milliseconds(10), absl::Seconds(2));
  return true;
}

bool WorkQueue::Submit(Job job, Refusal* refusal) {
  utilityd::MutexLock lock(&mu_);
  if (RefuseLocked(job, refusal)) return false;
  queued_agents_ += job.agents;
  bytes_ += job.bytes;
  queue_.push_back({std::move(job), absl::Now()});
  if (on_level) on_level(queued_agents_ + running_agents_);
  return true;
}

bool WorkQueue::Reserve(int64_t agents, int64_t bytes, Refusal* refusal) {
  utilityd::MutexLock lock(&mu_);
  if (RefuseLocked({.agents = agents, .bytes = bytes}, refusal)) return false;
  running_agents_ += agents;
  bytes_ += bytes;
  if (on_level) on_level(queued_agents_ + running_agents_);
  return true;
}

void WorkQueue::Release(int64_t agents, int64_t bytes, absl::Duration took) {
  utilityd::MutexLock lock(&mu_);
  DoneLocked(agents, bytes, took, false);
}

void WorkQueue::DoneLocked(int64_t agents, int64_t bytes, absl::Duration took,
                           bool expired) {
  running_agents_ -= agents;
  bytes_ -= bytes;
  if (!expired && agents > 0) {
    // The pace per agent, smoothed; work done on callers' threads counts
    // as a worker's.
    const double per_agent =
        absl::ToDoubleSeconds(took) / static_cast<double>(agents);
    seconds_per_agent_ = 0.9 * seconds_per_agent_ + 0.1 * per_agent;
  }
  if (on_level) on_level(queued_agents_ + running_agents_);
}

void WorkQueue::Work() {
  if (options_.nice != 0) {
    // Per thread on Linux: `who` is the thread's id. Raising niceness needs
    // no privilege; a failure leaves the worker as it was.
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)),
                      options_.nice);
  }
  while (true) {
    Entry entry;
    {
      utilityd::MutexLock lock(&mu_);
      mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      });
      if (queue_.empty()) return;  // stopping, and everything answered
      entry = std::move(queue_.front());
      queue_.pop_front();
      queued_agents_ -= entry.job.agents;
      running_agents_ += entry.job.agents;
    }
    const absl::Time start = absl::Now();
    if (on_wait) on_wait(absl::ToDoubleSeconds(start - entry.queued));
    const bool expired = start > entry.job.deadline;
    entry.job.run(expired);
    const absl::Duration took = absl::Now() - start;
    utilityd::MutexLock lock(&mu_);
    DoneLocked(entry.job.agents, entry.job.bytes, took, expired);
  }
}

void WorkQueue::Stop() {
  {
    utilityd::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

WorkQueue::Stats WorkQueue::stats() const {
  utilityd::MutexLock lock(&mu_);
  return {.queued_agents = queued_agents_,
          .running_agents = running_agents_,
          .bytes = bytes_,
          .workers = worker_count_,
          .seconds_per_agent = seconds_per_agent_};
}

}  // namespace utilityd::server
