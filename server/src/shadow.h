// Shadow evaluation: candidate behaviour sets (--shadow_config_dir) that
// are loaded, validated and hot-reloaded like the live ones but never
// served. A sampled share of live decisions (by decision id) is decided
// again with them after the reply is written, on a worker thread fed by a
// bounded queue; a full queue drops and counts, never blocks. The
// comparison is utilityctl replay's (utilityd::replay) with the live sets
// as the baseline, so the counters equal what a replay of the same
// decisions reports.
//
//   auto shadow = ShadowEvaluator::Start(options, live_store, &registry);
//   if ((*shadow)->Sampled(id)) (*shadow)->Offer(set, snapshot, decision);
//   v1::ReplayReport running = (*shadow)->Report();   // /api/v1/shadow
#ifndef UTILITYD_SERVER_SHADOW_H_
#define UTILITYD_SERVER_SHADOW_H_

#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/src/config_store.h"
#include "server/src/config_watcher.h"
#include "server/src/decision_log.h"
#include "server/src/draining_queue.h"
#include "server/src/service_metrics.h"
#include "utilityd/base/sync.h"
#include "utilityd/metrics/metrics.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::server {

class ShadowEvaluator {
 public:
  struct Options {
    // Candidate sets; empty turns shadow evaluation off.
    std::string config_dir;
    // Share (0..1) of live decisions decided again, chosen by decision id.
    double sample = 0.01;
    // Decisions waiting for the worker before new ones are dropped.
    size_t queue_capacity = 65536;
    // Share (0..1) of flipped decisions written to the server log with both
    // breakdowns, chosen by decision id.
    double log_flips = 0.01;
    absl::Duration reload_interval = absl::Seconds(2);
    // Names its log events (<name>_flip, ...) and its dropped-queue text.
    std::string name = "shadow";
    // What the counters' help calls the two sides; their keys in a logged
    // flip are baseline_name and candidate_key.
    std::string baseline_name = "live";
    std::string candidate_name = "shadow (candidate)";
    std::string candidate_key = "candidate";
    // Its metric families (service_metrics.h lists every name).
    ComparisonMetricNames metrics = kShadowMetrics;
  };

  // Loads the candidate sets (a bad directory is logged and retried, as for
  // the live sets) and starts the worker; nullptr when config_dir is empty.
  // INVALID_ARGUMENT for a rate outside 0..1 or a zero queue.
  static absl::StatusOr<std::unique_ptr<ShadowEvaluator>> Start(
      const Options& options, const ConfigStore* live,
      prometheus::Registry* registry);
  // Compares the decisions of `baseline`'s sets with `candidate`'s, both
  // loaded and reloaded by others (a canary's decisions decided again by
  // the live sets); options.config_dir and reload_interval are unused.
  static absl::StatusOr<std::unique_ptr<ShadowEvaluator>> Compare(
      const Options& options, const ConfigStore* baseline,
      const ConfigStore* candidate, prometheus::Registry* registry);
  // Decides what is queued, then stops the worker.
  ~ShadowEvaluator();

  bool Sampled(uint64_t id) const { return sampled_(id); }
  const IdSampler& sampler() const { return sampled_; }
  // Queues a copy of a live decision: the snapshot as received and what the
  // live set decided (`out`, its id set). Never blocks.
  void Offer(const loader::LoadedSet& set, const v1::AgentSnapshot& snapshot,
             const v1::Decision& out);

  // Everything compared so far: per set the from -> to matrix, churn,
  // errors, skips, score changes and example flips.
  v1::ReplayReport Report();
  // Waits until every decision queued before the call is compared (tests).
  void WaitIdle();
  const ConfigStore& store() const { return *store_; }

 private:
  // `candidate` null: the candidate sets are options.config_dir's, loaded
  // and watched here.
  ShadowEvaluator(const Options& options, const ConfigStore* live,
                  const ConfigStore* candidate, prometheus::Registry* registry);
  static absl::Status Check(const Options& options);
  void Compare(std::deque<std::string>& batch);
  void Compared(const replay::Comparison& c);

  const std::string name_;
  const std::string baseline_key_, candidate_key_;
  const ConfigStore* const live_;
  std::unique_ptr<ConfigStore> owned_;  // when loaded here
  const ConfigStore* store_;            // the candidate sets
  std::unique_ptr<ConfigWatcher> watcher_;
  const IdSampler sampled_;
  const IdSampler log_flips_;
  metrics::Family<prometheus::Counter> decisions_;
  metrics::Family<prometheus::Histogram> score_change_;
  prometheus::Counter& dropped_;
  // The worker's replayer; Report() and a reload of the candidate use it
  // too.
  utilityd::Mutex replay_mu_;
  std::unique_ptr<replay::Replayer> replayer_ ABSL_GUARDED_BY(replay_mu_);
  struct SetHandles {
    prometheus::Counter* results[4] = {};  // by Comparison::Result
    prometheus::Histogram* score_change = nullptr;
  };
  // Used by Compared, which the replayer calls with replay_mu_ held.
  absl::flat_hash_map<std::string, SetHandles> handles_;
  // Last: its worker starts once the rest is built.
  // Serialised DecisionLogEntry messages.
  std::unique_ptr<DrainingQueue<std::string>> queue_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_SHADOW_H_
