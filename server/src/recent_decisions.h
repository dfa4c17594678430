// The newest sampled decisions from real traffic, kept in memory for the
// inspector's live feed (GET /api/v1/decisions/recent). The request path
// only checks the sampler and, for the sampled few, copies one entry into a
// fixed-size ring under a short lock.
//
//   RecentDecisions recent(/*capacity=*/500, /*sample=*/0.01);
//   if (recent.Sampled(id)) recent.Add(entry);
//   auto newest = recent.Newest({.limit = 50, .behaviour_set = "arena_mage"});
#ifndef UTILITYD_SERVER_RECENT_DECISIONS_H_
#define UTILITYD_SERVER_RECENT_DECISIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "server/src/decision_log.h"
#include "utilityd/sync.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::server {

class RecentDecisions {
 public:
  struct Filter {
    size_t limit = 50;
    std::string behaviour_set;  // empty: any
    std::string action;         // empty: any
    std::optional<bool> switched;
  };

  // Keeps the newest `capacity` (at least 1) of a `sample` fraction of
  // decisions.
  RecentDecisions(size_t capacity, double sample);

  bool Sampled(uint64_t id) const { return sampled_(id); }
  // Thread-safe.
  void Add(v1::DecisionLogEntry entry);
  // Newest first, at most filter.limit of those matching.
  std::vector<v1::DecisionLogEntry> Newest(const Filter& filter) const;

 private:
  const IdSampler sampled_;
  mutable utilityd::Mutex mu_;
  std::vector<v1::DecisionLogEntry> ring_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;  // where the next entry goes
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_RECENT_DECISIONS_H_
