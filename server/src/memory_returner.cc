#include "server/src/memory_returner.h"

#include <malloc.h>

#include <atomic>

namespace utilityd::server {
namespace {

// Rounds left to trim: a large request makes the next three trim, so what
// it frees after the first (its answer, sent later) is returned too.
std::atomic<int> rounds_to_trim{0};

}  // namespace

MemoryReturner::MemoryReturner(absl::Duration period)
    : period_(period), thread_([this] { Run(); }) {}

MemoryReturner::~MemoryReturner() {
  {
    utilityd::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void MemoryReturner::Note(size_t bytes) {
  if (bytes >= kLargeBytes) {
    rounds_to_trim.store(3, std::memory_order_relaxed);
  }
}

int64_t MemoryReturner::trims() const {
  utilityd::MutexLock lock(&mu_);
  return trims_;
}

void MemoryReturner::Run() {
  utilityd::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(
      [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; },
      period_)) {
    int left = rounds_to_trim.load(std::memory_order_relaxed);
    if (left <= 0 || !rounds_to_trim.compare_exchange_strong(
                         left, left - 1, std::memory_order_relaxed)) {
      continue;
    }
    mu_.Unlock();
    malloc_trim(0);
    mu_.Lock();
    ++trims_;
  }
}

}  // namespace utilityd::server
