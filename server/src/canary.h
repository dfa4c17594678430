// Canary rollouts (docs/CANARY.md): candidate behaviour sets
// (--canary_config_dir) served to a sticky share of agents
// (--canary_share, or the directory's `share` file), loaded, validated and
// hot-reloaded like the live sets. Which agents are in the share is a hash
// of the agent id (codec::InCanaryShare), the same on every replica. A
// sampled share of the canary's decisions is decided again with the live
// sets (shadow evaluation in reverse), so its churn against the live sets
// is measured while it serves.
//
//   auto canary = Canary::Start(options, &live_store, &registry);
//   Canary::Serving s = (*canary)->Current();  // per batch
//   codec::DecideBatch(live, request, &response, &recorder,
//                      {.canary = s.catalog(), .share = s.share});
//
// Raising the share to 1 serves the canary to every agent of its sets (a
// promotion); removing the directory, or every set from it, serves the
// live sets again (a rollback).
#ifndef UTILITYD_SERVER_CANARY_H_
#define UTILITYD_SERVER_CANARY_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/src/config_store.h"
#include "server/src/config_watcher.h"
#include "server/src/shadow.h"
#include "utilityd/base/sync.h"
#include "utilityd/metrics/metrics.h"

namespace utilityd::server {

class Canary {
 public:
  struct Options {
    // Candidate sets; empty turns canary serving off.
    std::string config_dir;
    // Share (0..1) of agents the canary decides; a file `share` in the
    // directory holding one number overrides it (so a ConfigMap sets it
    // for every replica at once).
    double share = 0;
    // Share (0..1) of the canary's decisions decided again with the live
    // sets (by decision id), and of their flips logged.
    double compare_sample = 0.05;
    double log_flips = 0.01;
    size_t queue_capacity = 65536;
    absl::Duration reload_interval = absl::Seconds(2);
  };

  // What one batch is decided with.
  struct Serving {
    std::shared_ptr<const Generation> generation;  // null: no canary
    double share = 0;
    const loader::Catalog* catalog() const {
      return generation != nullptr ? &generation->catalog : nullptr;
    }
  };

  // Loads the canary's sets (a missing or empty directory serves none; a
  // bad one is logged and retried, keeping the last good sets) and starts
  // watching; nullptr when config_dir is empty. INVALID_ARGUMENT for a
  // share or rate outside 0..1.
  static absl::StatusOr<std::unique_ptr<Canary>> Start(
      const Options& options, const ConfigStore* live,
      prometheus::Registry* registry);
  ~Canary();

  Serving Current() const;
  const ConfigStore& store() const { return *store_; }
  // The canary's decisions decided again with the live sets.
  ShadowEvaluator& compare() { return *compare_; }
  // Reloads now (tests; SIGHUP reloads through TriggerReload).
  void Reload();
  void TriggerReload() { watcher_->TriggerReload(); }

 private:
  Canary(const Options& options, prometheus::Registry* registry);
  // After a reload of the directory: the share file, and the gauges.
  void OnReload(const ReloadOutcome& outcome);

  const double flag_share_;
  std::unique_ptr<ConfigStore> store_;
  prometheus::Gauge& share_gauge_;
  metrics::Family<prometheus::Gauge> sets_info_;
  metrics::Family<prometheus::Counter> reloads_;
  mutable utilityd::Mutex mu_;
  double share_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<ShadowEvaluator> compare_;
  std::unique_ptr<ConfigWatcher> watcher_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_CANARY_H_
