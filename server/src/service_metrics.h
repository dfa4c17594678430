// The metrics utilityd exports, and the recorders that feed them. Families
// are registered once; per-set handles are resolved once per set revision
// and cached, so recording a decision is a few relaxed atomic adds.
//
//   metrics::Registry registry;
//   ServiceMetrics m(&registry);
//   codec::DecideBatch(catalog, request, &response, &recorder);  // see
//   // DecisionServiceImpl for how the batch recorder is built
#ifndef UTILITYD_SERVER_SERVICE_METRICS_H_
#define UTILITYD_SERVER_SERVICE_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/src/config_store.h"
#include "utilityd/base/sync.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/metrics/metrics.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::server {

// Handles for one revision of one set.
struct SetMetrics {
  std::vector<metrics::Counter*> decisions;  // by action index
  std::vector<metrics::Counter*> vetoes;     // by action index
  metrics::Counter* switches = nullptr;
  metrics::Counter* no_action = nullptr;
  metrics::Counter* invalid_factors = nullptr;
  metrics::Histogram* selected_score = nullptr;
  metrics::Histogram* margin = nullptr;
  // Sets with a tree: ticks by the root's status (running, success,
  // failure), leaves started and halted by node id (null for nodes that are
  // not action leaves), state resets by engine::TreeReset.
  metrics::Counter* tree_ticks[3] = {};
  std::vector<metrics::Counter*> leaves_started;
  std::vector<metrics::Counter*> leaves_halted;
  std::vector<metrics::Counter*> tree_resets;
};

// Every utilityd_* metric, declared once, in the spirit of Envoy's stat
// macros: the member holding its family, its name, its help, and its labels
// (a histogram also its buckets, defined in service_metrics.cc).
// ServiceMetrics registers them in this order; dashboards and alerts in
// deploy/ read them by these names.
#define UTILITYD_SERVICE_METRICS(COUNTER, GAUGE, HISTOGRAM)                    \
  COUNTER(decisions, "utilityd_decisions_total",                               \
          "Agent decisions made, by chosen action.", "behaviour_set",          \
          "action", "variant")                                                 \
  COUNTER(switches, "utilityd_decision_switches_total",                        \
          "Decisions whose action differs from the agent's current "           \
          "action.",                                                           \
          "behaviour_set", "variant")                                          \
  COUNTER(no_action, "utilityd_no_action_total",                               \
          "Decisions where nothing was eligible and the set has no "           \
          "fallback.",                                                         \
          "behaviour_set", "variant")                                          \
  COUNTER(vetoes, "utilityd_vetoes_total",                                     \
          "Candidates vetoed (a consideration at 0, invalid input, no "        \
          "targets).",                                                         \
          "behaviour_set", "action", "variant")                                \
  COUNTER(tree_ticks, "utilityd_tree_ticks_total",                             \
          "Behaviour-tree ticks, by the root's status after the tick.",        \
          "behaviour_set", "status", "variant")                                \
  COUNTER(leaves_started, "utilityd_tree_leaves_started_total",                \
          "Tree leaves started, by leaf.", "behaviour_set", "leaf", "variant") \
  COUNTER(leaves_halted, "utilityd_tree_leaves_halted_total",                  \
          "Running tree leaves halted by an abort, a timeout or a "            \
          "re-scoring, by leaf.",                                              \
          "behaviour_set", "leaf", "variant")                                  \
  COUNTER(tree_resets, "utilityd_tree_state_resets_total",                     \
          "Tree states that could not be resumed (the tree restarted from "    \
          "its root), by reason.",                                             \
          "behaviour_set", "reason", "variant")                                \
  COUNTER(agent_errors, "utilityd_agent_errors_total",                         \
          "Agents answered with an error instead of a decision.",              \
          "behaviour_set", "code", "variant")                                  \
  COUNTER(resource_grants, "utilityd_resource_grants_total",                   \
          "Coordination: resource units newly granted to agents, by "          \
          "resource.",                                                         \
          "resource")                                                          \
  COUNTER(resource_denials, "utilityd_resource_denials_total",                 \
          "Coordination: candidates denied for want of a resource, by "        \
          "resource.",                                                         \
          "resource")                                                          \
  COUNTER(resource_preemptions, "utilityd_resource_preemptions_total",         \
          "Coordination: holdings taken by a higher-scoring agent, by "        \
          "resource.",                                                         \
          "resource")                                                          \
  COUNTER(invalid_factors, "utilityd_invalid_factors_total",                   \
          "Agents with a NaN or infinite factor that a consideration read.",   \
          "behaviour_set", "variant")                                          \
  HISTOGRAM(selected_score, "utilityd_selected_score",                         \
            "Score of the chosen candidate.", kScoreBuckets, "behaviour_set",  \
            "variant")                                                         \
  HISTOGRAM(margin, "utilityd_decision_margin",                                \
            "Winner's score minus the runner-up's; near 0 predicts "           \
            "dithering.",                                                      \
            kMarginBuckets, "behaviour_set", "variant")                        \
  HISTOGRAM(batch_duration, "utilityd_batch_duration_seconds",                 \
            "Time to decide one batch (a unary call or one stream "            \
            "message).",                                                       \
            kDurationBuckets)                                                  \
  HISTOGRAM(batch_agents, "utilityd_batch_agents", "Agents per batch.",        \
            kAgentBuckets)                                                     \
  GAUGE(active_streams, "utilityd_active_streams", "Open DecideStream calls.") \
  COUNTER(shed, "utilityd_shed_total",                                         \
          "Batches (unary calls and stream messages) refused unscored "        \
          "because the replica is overloaded, by reason: queue_full (the "     \
          "queue's agent or byte bound), deadline (it could not start "        \
          "before its deadline).",                                             \
          "reason")                                                            \
  COUNTER(expired, "utilityd_expired_total",                                   \
          "Batches dropped unscored: their deadline passed while they "        \
          "waited in the queue.")                                              \
  GAUGE(queued_agents, "utilityd_queued_agents",                               \
        "Agents waiting for a worker or being scored.")                        \
  HISTOGRAM(queue_wait, "utilityd_queue_wait_seconds",                         \
            "Time a batch waited in the queue for a worker.",                  \
            kDurationBuckets)                                                  \
  GAUGE(behaviour_sets, "utilityd_behaviour_sets", "Behaviour sets loaded.")   \
  COUNTER(reloads, "utilityd_config_reloads_total",                            \
          "Config reload attempts, by result.", "result")                      \
  GAUGE(last_reload_success,                                                   \
        "utilityd_config_last_reload_success_timestamp_seconds",               \
        "When the config last loaded successfully.")                           \
  GAUGE(set_info, "utilityd_behaviour_set_info",                               \
        "Loaded behaviour sets and their revisions (1).", "behaviour_set",     \
        "revision")                                                            \
  COUNTER(log_dropped, "utilityd_decision_log_dropped_total",                  \
          "Decision log lines dropped because the queue was full.")            \
  COUNTER(log_written, "utilityd_decision_log_written_total",                  \
          "Decision log lines written.")                                       \
  GAUGE(build_info, "utilityd_build_info",                                     \
        "utilityd's version and the SIMD target its curves run on (1).",       \
        "version", "simd_target")

// What one batch's decisions record — decisions by action, no action,
// switches, the selected score and the winning margin — counted locally
// (no atomics) and added to the shared metrics once per batch by Flush.
// The exported counts are exactly those of recording each decision; the
// histograms' sums may differ in their last bits (added in another order).
// One per thread; reused from batch to batch without allocating.
class DecisionTally {
 public:
  // Counts one decided agent of set `m`.
  void Add(const SetMetrics& m, const engine::AgentInput& in,
           const engine::BatchDecision& d) {
    PerSet& s = For(m);
    if (d.action >= 0) {
      ++s.decisions[d.action];
      s.score.Observe(d.score);
      if (d.runner_up_action >= 0)
        s.margin.Observe(d.score - d.runner_up_score);
    } else {
      ++s.no_action;
    }
    // The first decision of an agent is not a switch.
    if (d.switched && in.current_action >= 0) ++s.switches;
  }
  // Adds everything counted since the last Flush to the metrics.
  void Flush();

 private:
  struct PerSet {
    const SetMetrics* m = nullptr;
    std::vector<uint64_t> decisions;  // by action index
    uint64_t no_action = 0, switches = 0;
    metrics::HistogramTally score, margin;
  };
  PerSet& For(const SetMetrics& m) {
    if (last_ < used_ && sets_[last_].m == &m) return sets_[last_];
    return Find(m);
  }
  PerSet& Find(const SetMetrics& m);

  std::vector<PerSet> sets_;  // the first used_ are this batch's
  size_t used_ = 0, last_ = 0;
};

class ServiceMetrics {
 public:
  explicit ServiceMetrics(metrics::Registry* registry);

  metrics::Registry& registry() { return *registry_; }

  // Returns the handles of a loaded set (created on first use).
  const SetMetrics& ForSet(const loader::LoadedSet& set, v1::Variant variant);

  // Records one tree tick (and its first leaf as the decision's action).
  static void RecordTick(const SetMetrics& m, const engine::TreeTick& tick);
  // Vetoed candidates per action and agents with an invalid input, counted
  // by the engine for a batch.
  static void RecordVetoes(const SetMetrics& m,
                           absl::Span<const uint32_t> vetoes_by_action,
                           uint32_t agents_with_invalid_input);
  // Records a per-agent error; `set` is null when the set is not loaded
  // (its name is then not used as a label: callers choose it).
  void RecordAgentError(const loader::LoadedSet* set, absl::StatusCode code,
                        v1::Variant variant);
  // Coordination counts of one batch for one resource (a name a loaded
  // set declares).
  void RecordResources(absl::string_view resource, int grants, int denials,
                       int preemptions);
  // Records one batch (unary call or stream message).
  void RecordBatch(absl::Duration duration, int agents);
  // Records a reload attempt and republishes the set info metrics.
  void RecordReload(const ReloadOutcome& outcome, const Generation* current);

  metrics::Gauge& active_streams() { return *active_streams_cell_; }
  // Overload (docs/RELIABILITY.md): a batch refused (for its deadline, or
  // a full queue); one dropped because its deadline passed in
  // the queue; the agents queued; one batch's wait.
  void RecordShed(bool deadline) {
    (deadline ? shed_deadline_cell_ : shed_full_cell_)->Increment();
  }
  metrics::Counter& expired() { return *expired_cell_; }
  metrics::Gauge& queued_agents() { return *queued_agents_cell_; }
  metrics::Histogram& queue_wait() { return *queue_wait_cell_; }
  metrics::Counter& decision_log_dropped() { return *log_dropped_cell_; }
  metrics::Counter& decision_log_written() { return *log_written_cell_; }

  // The gRPC interceptor factory that records grpc_server_* metrics.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  GrpcInterceptorFactory();

 private:
  metrics::Registry* registry_;
  // One family per entry of UTILITYD_SERVICE_METRICS, named <member>_.
#define UTILITYD_COUNTER_MEMBER(member, ...) \
  metrics::Family<metrics::Counter>* member##_ = nullptr;
#define UTILITYD_GAUGE_MEMBER(member, ...) \
  metrics::Family<metrics::Gauge>* member##_ = nullptr;
#define UTILITYD_HISTOGRAM_MEMBER(member, ...) \
  metrics::Family<metrics::Histogram>* member##_ = nullptr;
  UTILITYD_SERVICE_METRICS(UTILITYD_COUNTER_MEMBER, UTILITYD_GAUGE_MEMBER,
                           UTILITYD_HISTOGRAM_MEMBER)
#undef UTILITYD_COUNTER_MEMBER
#undef UTILITYD_GAUGE_MEMBER
#undef UTILITYD_HISTOGRAM_MEMBER
  // The unlabelled cells recorded per batch or per stream.
  metrics::Histogram* batch_duration_cell_;
  metrics::Histogram* batch_agents_cell_;
  metrics::Gauge* active_streams_cell_;
  metrics::Counter* expired_cell_;
  metrics::Counter* shed_full_cell_;
  metrics::Counter* shed_deadline_cell_;
  metrics::Gauge* queued_agents_cell_;
  metrics::Histogram* queue_wait_cell_;
  metrics::Counter* log_dropped_cell_;
  metrics::Counter* log_written_cell_;

  utilityd::Mutex mu_;
  // Keyed by "name@revision"; entries are never removed (bounded by the
  // revisions ever loaded).
  absl::flat_hash_map<std::string, std::unique_ptr<SetMetrics>> sets_
      ABSL_GUARDED_BY(mu_);
};

// Go-style names of gRPC status codes ("OK", "InvalidArgument", ...), as
// grpc-go's Prometheus middleware labels grpc_code.
const char* GrpcCodeName(int code);

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_SERVICE_METRICS_H_
