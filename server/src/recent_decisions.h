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
// On a busy server the sampled fraction is lowered, a second at a time, so
// that about `max_per_second` enter: a feed of 500 read by a person needs
// no more, and at 10 M decisions a second 1% would copy 100,000 snapshots
// a second into it. The fraction rises back as traffic falls.
//
//   RecentDecisions recent(/*capacity=*/500, /*sample=*/0.01,
//                          /*max_per_second=*/1000);
//   IdSampler wanted = recent.sampler(absl::Now());   // once per batch
//   if (recent.Sampled(id)) recent.Add(g, snapshot, now, decision, 0.2f);
//   auto newest = recent.Newest({.limit = 50, .behaviour_set = "arena_mage"});
#ifndef UTILITYD_SERVER_RECENT_DECISIONS_H_
#define UTILITYD_SERVER_RECENT_DECISIONS_H_

#include <atomic>
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
  // decisions, lowered so that about `max_per_second` a second enter (0:
  // no limit).
  RecentDecisions(size_t capacity, double sample, double max_per_second = 0);

  // Whether decision `id` enters, at the fraction in force.
  bool Sampled(uint64_t id) const {
    return IdSampler(fraction_.load(std::memory_order_relaxed))(id);
  }
  // The sampler in force at `now` (a batch's time): once a second, the
  // first call adjusts the fraction to the samples that entered since.
  IdSampler sampler(absl::Time now);
  // The fraction in force.
  double fraction() const { return fraction_.load(std::memory_order_relaxed); }
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
  // Sets the fraction from the samples of the window ending at `now`.
  void Adjust(absl::Time now);

  const size_t capacity_;
  const double sample_, max_per_second_;
  std::atomic<double> fraction_;
  std::atomic<int64_t> next_adjust_ns_{0};  // Unix ns of the next Adjust
  mutable utilityd::Mutex mu_;
  absl::Time window_start_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t window_adds_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Sample> ring_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;  // where the next sample goes
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_RECENT_DECISIONS_H_
