// utilityd's mutex: absl::Mutex, made visible to ThreadSanitizer.
//
// Debian's Abseil is not built with TSan, so its Mutex carries no race
// annotations and TSan would report every access it guards. Under TSan
// (-fsanitize=thread) this wrapper tells TSan where each lock is acquired
// and released; otherwise it compiles to absl::Mutex exactly.
//
//   utilityd::Mutex mu;
//   int n ABSL_GUARDED_BY(mu) = 0;
//   { utilityd::MutexLock lock(&mu); ++n; }
//   mu.Await([&] { return n > 0; });   // with mu held
#ifndef UTILITYD_BASE_SYNC_H_
#define UTILITYD_BASE_SYNC_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#if defined(__SANITIZE_THREAD__)
#define UTILITYD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UTILITYD_TSAN 1
#endif
#endif

#ifdef UTILITYD_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace utilityd {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.Lock();
    Acquired();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    Releasing();
    mu_.Unlock();
  }
  // Waits, with the lock held, until `pred()` is true; the lock is released
  // while waiting. Abseil may evaluate `pred` on whichever thread holds the
  // lock; it is annotated as holding it.
  template <typename Pred>
  void Await(const Pred& pred) {
    const auto annotated = [this, &pred] { return Evaluate(pred); };
    Releasing();
    mu_.Await(absl::Condition(&annotated));
    Acquired();
  }
  // As Await; false when `timeout` passed first.
  template <typename Pred>
  bool AwaitWithTimeout(const Pred& pred, absl::Duration timeout) {
    const auto annotated = [this, &pred] { return Evaluate(pred); };
    Releasing();
    const bool met = mu_.AwaitWithTimeout(absl::Condition(&annotated), timeout);
    Acquired();
    return met;
  }

 private:
  template <typename Pred>
  bool Evaluate(const Pred& pred) {
    Acquired();
    const bool result = pred();
    Releasing();
    return result;
  }
#ifdef UTILITYD_TSAN
  void Acquired() { __tsan_acquire(this); }
  void Releasing() { __tsan_release(this); }
#else
  void Acquired() {}
  void Releasing() {}
#endif
  absl::Mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace utilityd

#endif  // UTILITYD_BASE_SYNC_H_
