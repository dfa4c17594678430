// The metrics utilityd exports, on prometheus-cpp, and the tally that feeds
// them. Families are registered once; per-set handles are resolved once per
// set revision and cached; a batch's agents are counted in its own working
// memory and handed to prometheus-cpp once per batch.
//
//   prometheus::Registry registry;
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

// Handles for one revision of one set (prometheus-cpp children).
struct SetMetrics {
  std::vector<prometheus::Counter*> decisions;  // by action index
  std::vector<prometheus::Counter*> vetoes;     // by action index
  prometheus::Counter* switches = nullptr;
  prometheus::Counter* no_action = nullptr;
  prometheus::Counter* invalid_factors = nullptr;
  prometheus::Histogram* selected_score = nullptr;
  prometheus::Histogram* margin = nullptr;
  const metrics::Buckets* score_buckets = nullptr;
  const metrics::Buckets* margin_buckets = nullptr;
  // Sets with a tree: ticks by the root's status (running, success,
  // failure), leaves started and halted by node id (null for nodes that are
  // not action leaves), state resets by engine::TreeReset.
  prometheus::Counter* tree_ticks[4] = {};
  std::vector<prometheus::Counter*> leaves_started;
  std::vector<prometheus::Counter*> leaves_halted;
  std::vector<prometheus::Counter*> tree_resets;
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

class ServiceMetrics;

// The families the optional parts register when they are on, named here
// so that this header lists every utilityd_* name: shadow evaluation's
// (shadow.h), the canary's comparison with the live sets (the same three
// kinds), and the canary's own (canary.cc).
struct ComparisonMetricNames {
  const char* decisions;     // counter, by behaviour_set and result
  const char* score_change;  // histogram, by behaviour_set
  const char* dropped;       // counter
};
inline constexpr ComparisonMetricNames kShadowMetrics{
    .decisions = "utilityd_shadow_decisions_total",
    .score_change = "utilityd_shadow_score_change",
    .dropped = "utilityd_shadow_dropped_total"};
inline constexpr ComparisonMetricNames kCanaryCompareMetrics{
    .decisions = "utilityd_canary_compare_decisions_total",
    .score_change = "utilityd_canary_compare_score_change",
    .dropped = "utilityd_canary_compare_dropped_total"};
inline constexpr const char* kCanaryShareMetric = "utilityd_canary_share";
inline constexpr const char* kCanarySetInfoMetric = "utilityd_canary_set_info";
inline constexpr const char* kCanaryReloadsMetric =
    "utilityd_canary_reloads_total";

// Everything one batch's agents record — decisions by action, no action,
// switches, the selected score and the winning margin, vetoes, invalid
// factors, tree ticks, leaves and resets, agent errors — counted in the
// batch's own working memory (no atomics, no lock) and handed to
// prometheus-cpp once per batch by Flush: one Increment(n) per label set
// that counted anything, one ObserveMultiple per histogram. The exported
// counts are exactly those of recording each agent; a histogram's sum may
// differ in its last bits (added in another order). One per thread; reused
// from batch to batch without allocating.
class DecisionTally {
 public:
  // Counts one decided agent of set `m`.
  void Add(const SetMetrics& m, const engine::AgentInput& in,
           const engine::BatchDecision& d) {
    Count(For(m), in.current_action, d);
  }
  // Counts the decided rows of one block of set `m`: row rows[g] decided
  // as decisions[g], except where errors[g] is not OK (those are
  // AddError's), row r running current_action[r] (empty: none runs).
  void AddRows(const SetMetrics& m, absl::Span<const int> rows,
               absl::Span<const int32_t> current_action,
               absl::Span<const engine::BatchDecision> decisions,
               absl::Span<const absl::Status> errors);
  // Counts one tree tick (its first leaf as the decision's action).
  void AddTick(const SetMetrics& m, const engine::TreeTick& tick);
  // Counts the candidates vetoed per action and the agents with an invalid
  // input of one engine pass.
  void AddVetoes(const SetMetrics& m, absl::Span<const uint32_t> by_action,
                 uint32_t agents_with_invalid_input);
  // Counts a per-agent error; `set` is null when the set is not loaded.
  void AddError(const loader::LoadedSet* set, absl::StatusCode code,
                v1::Variant variant);
  // Adds everything counted since the last Flush to the metrics (`service`
  // resolves the errors' label sets).
  void Flush(ServiceMetrics& service);

 private:
  struct PerSet {
    const SetMetrics* m = nullptr;
    std::vector<uint64_t> decisions, vetoes;  // by action index
    uint64_t no_action = 0, switches = 0, invalid_factors = 0;
    uint64_t tree_ticks[4] = {};
    std::vector<uint64_t> leaves_started, leaves_halted;  // by node id
    std::vector<uint64_t> tree_resets;                    // by reason
    metrics::HistogramTally score, margin;
    // AddRows' scratch: per-action counts in kCopies interleaved copies
    // (the last slot of each: no action).
    std::vector<uint64_t> row_counts;
  };
  struct Errors {
    const loader::LoadedSet* set;
    absl::StatusCode code;
    v1::Variant variant;
    uint64_t count;
  };
  // What one decided agent counts, for Count and AddRows alike: an action
  // (its score observed) or none, a margin when it has a runner-up, a
  // switch unless it is the agent's first decision (none running).
  struct RowCount {
    bool acted, margin, switched;
  };
  static RowCount CountOf(int current_action, const engine::BatchDecision& d) {
    const bool acted = d.action >= 0;
    return {.acted = acted,
            .margin = acted && d.runner_up_action >= 0,
            .switched = d.switched && current_action >= 0};
  }
  static void Count(PerSet& s, int current_action,
                    const engine::BatchDecision& d) {
    const RowCount c = CountOf(current_action, d);
    if (c.acted) {
      ++s.decisions[d.action];
      s.score.Observe(d.score);
    } else {
      ++s.no_action;
    }
    if (c.margin) s.margin.Observe(d.score - d.runner_up_score);
    s.switches += c.switched;
  }
  PerSet& For(const SetMetrics& m) {
    if (last_ < used_ && sets_[last_].m == &m) return sets_[last_];
    return Find(m);
  }
  PerSet& Find(const SetMetrics& m);

  std::vector<PerSet> sets_;  // the first used_ are this batch's
  size_t used_ = 0, last_ = 0;
  std::vector<Errors> errors_;
};

class ServiceMetrics {
 public:
  // Registers every family in `registry`, which must outlive this.
  explicit ServiceMetrics(prometheus::Registry* registry);

  prometheus::Registry& registry() { return *registry_; }

  // Returns the handles of a loaded set (created on first use).
  const SetMetrics& ForSet(const loader::LoadedSet& set, v1::Variant variant);

  // Adds `count` per-agent errors; `set` is null when the set is not loaded
  // (its name is then not used as a label: callers choose it).
  void RecordAgentErrors(const loader::LoadedSet* set, absl::StatusCode code,
                         v1::Variant variant, uint64_t count);
  // Coordination counts of one batch for one resource (a name a loaded
  // set declares).
  void RecordResources(absl::string_view resource, int grants, int denials,
                       int preemptions);
  // Records one batch (unary call or stream message).
  void RecordBatch(absl::Duration duration, int agents);
  // Records a reload attempt and republishes the set info metrics.
  void RecordReload(const ReloadOutcome& outcome, const Generation* current);

  prometheus::Gauge& active_streams() { return *active_streams_cell_; }
  // Overload (docs/RELIABILITY.md): a batch refused (for its deadline, or
  // a full queue); one dropped because its deadline passed in
  // the queue; the agents queued; one batch's wait.
  void RecordShed(bool deadline) {
    (deadline ? shed_deadline_cell_ : shed_full_cell_)->Increment();
  }
  prometheus::Counter& expired() { return *expired_cell_; }
  prometheus::Gauge& queued_agents() { return *queued_agents_cell_; }
  prometheus::Histogram& queue_wait() { return *queue_wait_cell_; }
  prometheus::Counter& decision_log_dropped() { return *log_dropped_cell_; }
  prometheus::Counter& decision_log_written() { return *log_written_cell_; }

  // The gRPC interceptor factory that records grpc_server_* metrics.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  GrpcInterceptorFactory();

 private:
  template <typename T>
  using FamilyPtr = std::unique_ptr<metrics::Family<T>>;

  prometheus::Registry* registry_;
  // One family per entry of UTILITYD_SERVICE_METRICS, named <member>_.
#define UTILITYD_COUNTER_MEMBER(member, ...) \
  FamilyPtr<prometheus::Counter> member##_;
#define UTILITYD_GAUGE_MEMBER(member, ...) \
  FamilyPtr<prometheus::Gauge> member##_;
#define UTILITYD_HISTOGRAM_MEMBER(member, ...) \
  FamilyPtr<prometheus::Histogram> member##_;
  UTILITYD_SERVICE_METRICS(UTILITYD_COUNTER_MEMBER, UTILITYD_GAUGE_MEMBER,
                           UTILITYD_HISTOGRAM_MEMBER)
#undef UTILITYD_COUNTER_MEMBER
#undef UTILITYD_GAUGE_MEMBER
#undef UTILITYD_HISTOGRAM_MEMBER
  // The unlabelled children recorded per batch or per stream.
  prometheus::Histogram* batch_duration_cell_;
  prometheus::Histogram* batch_agents_cell_;
  prometheus::Gauge* active_streams_cell_;
  prometheus::Counter* expired_cell_;
  prometheus::Counter* shed_full_cell_;
  prometheus::Counter* shed_deadline_cell_;
  prometheus::Gauge* queued_agents_cell_;
  prometheus::Histogram* queue_wait_cell_;
  prometheus::Counter* log_dropped_cell_;
  prometheus::Counter* log_written_cell_;

  utilityd::Mutex mu_;
  // Keyed by "name@revision@variant"; entries are never removed (bounded by
  // the revisions ever loaded).
  absl::flat_hash_map<std::string, std::unique_ptr<SetMetrics>> sets_
      ABSL_GUARDED_BY(mu_);
  // The coordination counters of every resource a set decided so far
  // declares, by name (resources are shared across sets by name).
  struct ResourceCounters {
    prometheus::Counter* grants = nullptr;
    prometheus::Counter* denials = nullptr;
    prometheus::Counter* preemptions = nullptr;
  };
  absl::flat_hash_map<std::string, ResourceCounters> resources_
      ABSL_GUARDED_BY(mu_);
};

// Go-style names of gRPC status codes ("OK", "InvalidArgument", ...), as
// grpc-go's Prometheus middleware labels grpc_code.
const char* GrpcCodeName(int code);

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_SERVICE_METRICS_H_
