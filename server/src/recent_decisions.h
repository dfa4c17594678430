// The newest sampled decisions from real traffic, kept in memory for the
// inspector's live feed (GET /api/v1/decisions/recent).
//
// The request path only checks the sampler and, for the sampled few, copies
// the agent's snapshot and the decision's outcome into a fixed-size ring
// under a short lock, in place. Everything costly — the full score breakdown,
// factor names, the entry message — is built when the feed is read, by scoring
// the kept snapshot again with the set it was decided with (kept alive by the
// sample), which gives exactly the decision that was made.
//
//   RecentDecisions recent(/*capacity=*/500, /*sample=*/0.01);
//   if (recent.Sampled(id)) recent.Add(g, snapshot, now, decision, 0.2f);
//   auto newest = recent.Newest({.limit = 50, .behaviour_set = "arena_mage"});
#ifndef UTILITYD_SERVER_RECENT_DECISIONS_H_
#define UTILITYD_SERVER_RECENT_DECISIONS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "server/src/config_store.h"
#include "server/src/decision_log.h"
#include "utilityd/base/sync.h"
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

  // One decision as the request path hands it over.
  struct Sample {
    // The configuration the agent was decided with (keeps its set alive).
    std::shared_ptr<const Generation> generation;
    v1::AgentSnapshot snapshot;
    absl::Time time;
    // The decision as answered (id, action, target, score, switched).
    v1::Decision decision;
    float runner_up_score = 0;
  };

  // Keeps the newest `capacity` (at least 1) of a `sample` fraction of
  // decisions.
  RecentDecisions(size_t capacity, double sample);

  bool Sampled(uint64_t id) const { return sampled_(id); }
  const IdSampler& sampler() const { return sampled_; }
  // Thread-safe and cheap: the request path's own messages are copied into
  // the ring's oldest slot in place, under a short lock, so that the slot's
  // strings and arrays are reused rather than freed and allocated again
  // for every sample. The decision's explanation is not kept (made again
  // when read).
  void Add(std::shared_ptr<const Generation> generation,
           const v1::AgentSnapshot& snapshot, absl::Time time,
           const v1::Decision& decision, float runner_up_score);
  // Newest first, at most filter.limit of those matching, each with its
  // factors by name and its full breakdown.
  std::vector<v1::DecisionLogEntry> Newest(const Filter& filter) const;
  // How many it keeps.
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  const IdSampler sampled_;
  mutable utilityd::Mutex mu_;
  std::vector<Sample> ring_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;  // where the next sample goes
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_RECENT_DECISIONS_H_
