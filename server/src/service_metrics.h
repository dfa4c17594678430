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
#include "utilityd/loader/set_loader.h"
#include "utilityd/metrics/metrics.h"

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
};

class ServiceMetrics {
 public:
  explicit ServiceMetrics(metrics::Registry* registry);

  metrics::Registry& registry() { return *registry_; }

  // Returns the handles of a loaded set (created on first use).
  const SetMetrics& ForSet(const loader::LoadedSet& set);

  // Records one decided agent.
  static void RecordDecision(const SetMetrics& m, const engine::AgentInput& in,
                             const engine::BatchDecision& d);
  // Vetoed candidates per action and agents with an invalid input, counted
  // by the engine for a batch.
  static void RecordVetoes(const SetMetrics& m,
                           absl::Span<const uint32_t> vetoes_by_action,
                           uint32_t agents_with_invalid_input);
  // Records a per-agent error; `set` is null when the set is not loaded
  // (its name is then not used as a label: callers choose it).
  void RecordAgentError(const loader::LoadedSet* set, absl::StatusCode code);
  // Records one batch (unary call or stream message).
  void RecordBatch(absl::Duration duration, int agents);
  // Records a reload attempt and republishes the set info metrics.
  void RecordReload(const ReloadOutcome& outcome, const Generation* current);

  metrics::Gauge& active_streams() { return *active_streams_; }
  metrics::Counter& decision_log_dropped() { return *log_dropped_; }
  metrics::Counter& decision_log_written() { return *log_written_; }

  // The gRPC interceptor factory that records grpc_server_* metrics.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  GrpcInterceptorFactory();

 private:
  metrics::Registry* registry_;
  metrics::Family<metrics::Counter>* decisions_;
  metrics::Family<metrics::Counter>* switches_;
  metrics::Family<metrics::Counter>* no_action_;
  metrics::Family<metrics::Counter>* vetoes_;
  metrics::Family<metrics::Counter>* agent_errors_;
  metrics::Family<metrics::Counter>* invalid_factors_;
  metrics::Family<metrics::Histogram>* selected_score_;
  metrics::Family<metrics::Histogram>* margin_;
  metrics::Histogram* batch_duration_;
  metrics::Histogram* batch_agents_;
  metrics::Gauge* active_streams_;
  metrics::Gauge* behaviour_sets_;
  metrics::Family<metrics::Counter>* reloads_;
  metrics::Gauge* last_reload_success_;
  metrics::Family<metrics::Gauge>* set_info_;
  metrics::Counter* log_dropped_;
  metrics::Counter* log_written_;

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
