// Gives the heap's free memory back to the system after large requests.
// glibc keeps what a request freed in its arenas for reuse, so one 16 MiB
// request (parsed by gRPC into a message several times larger, then freed)
// would leave the process hundreds of MiB larger for good. Requests note
// their size; a thread wakes every `period` and, when a large one was noted
// since (in any of the last three rounds), calls malloc_trim, which
// returns the arenas' free pages.
//
//   MemoryReturner returner(absl::Seconds(1));
//   ...
//   MemoryReturner::Note(request.ByteSizeLong());   // on any thread
#ifndef UTILITYD_SERVER_MEMORY_RETURNER_H_
#define UTILITYD_SERVER_MEMORY_RETURNER_H_

#include <cstddef>
#include <cstdint>
#include <thread>

#include "absl/time/time.h"
#include "utilityd/base/sync.h"

namespace utilityd::server {

class MemoryReturner {
 public:
  // A request of this many bytes or more is large.
  static constexpr size_t kLargeBytes = 1 << 20;

  explicit MemoryReturner(absl::Duration period);
  ~MemoryReturner();  // stops the thread

  // Notes a request of `bytes`: when it is large, the next three rounds
  // trim.
  // Thread-safe and cheap (one relaxed atomic store when large).
  static void Note(size_t bytes);

  // Rounds that trimmed so far (for tests).
  int64_t trims() const;

 private:
  void Run();

  const absl::Duration period_;
  mutable utilityd::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t trims_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_MEMORY_RETURNER_H_
