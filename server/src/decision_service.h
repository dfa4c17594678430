// The DecisionService implementation: a thin adapter from gRPC calls to the
// codec's DecideBatch over the current generation of behaviour sets, with
// the service's limits, overload shedding and recording around it. Uses
// gRPC's callback API. A unary call's batch is scored on a WorkQueue's
// workers, so gRPC's threads stay free for health checks and refusals; a
// stream's batch is scored in gRPC's read callback, admitted against the
// same queue's bounds in agents and bytes (docs/RELIABILITY.md,
// "Overload"). A stream keeps at most one read and one write in flight,
// with at most one finished response waiting, so memory per stream is
// bounded and a client that stops reading gets backpressure.
//
//   ConfigStore store(dir);
//   prometheus::Registry registry;
//   ServiceMetrics metrics(&registry);
//   DecisionServiceImpl service(&store, {.max_agents_per_request = 10000},
//                               &metrics);
//   builder.RegisterService(&service);
//   ...
//   service.StartDraining();   // new calls UNAVAILABLE; streams end cleanly
#ifndef UTILITYD_SERVER_DECISION_SERVICE_H_
#define UTILITYD_SERVER_DECISION_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "server/src/batch_recorder.h"
#include "server/src/canary.h"
#include "server/src/config_store.h"
#include "server/src/decision_log.h"
#include "server/src/recent_decisions.h"
#include "server/src/service_metrics.h"
#include "server/src/shadow.h"
#include "server/src/work_queue.h"
#include "utilityd/base/sync.h"
#include "utilityd/codec/batch.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd::server {

struct ServiceOptions {
  // Batches with more agents are refused with RESOURCE_EXHAUSTED.
  int max_agents_per_request = 10000;
  // More targets (over every agent and block row), coordination pools, or
  // holdings (pools' holders and agents' held) in one request are refused
  // with RESOURCE_EXHAUSTED (--max_targets_per_request, and so on).
  int64_t max_targets_per_request = 262144;
  int64_t max_pools_per_request = 16384;
  int64_t max_holders_per_request = 65536;
  // The scoring workers and the bounds of what waits for them (--workers,
  // --max_queued_agents, --max_queued_bytes).
  WorkQueue::Options queue{.max_agents = 16384, .max_bytes = 32 << 20};
  // Benchmarks only (bench/echo_server.cc): answers every batch with this
  // instead of scoring, so the rest of the stack can be measured alone.
  std::function<void(const v1::DecideRequest&, v1::DecideResponse*)>
      answer_without_scoring;
};

class StreamReactor;

class DecisionServiceImpl final : public v1::DecisionService::CallbackService {
 public:
  // `metrics`, `log` (null: no decision log), `recent` (null: no live
  // feed), `shadow` (null: no shadow evaluation) and `canary` (null: no
  // canary served) must outlive the service.
  DecisionServiceImpl(ConfigStore* store, ServiceOptions options,
                      ServiceMetrics* metrics, DecisionLog* log = nullptr,
                      RecentDecisions* recent = nullptr,
                      ShadowEvaluator* shadow = nullptr,
                      Canary* canary = nullptr);
  ~DecisionServiceImpl() override;

  grpc::ServerUnaryReactor* Decide(grpc::CallbackServerContext* context,
                                   const v1::DecideRequest* request,
                                   v1::DecideResponse* response) override;
  grpc::ServerBidiReactor<v1::DecideRequest, v1::DecideResponse>* DecideStream(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListBehaviourSets(
      grpc::CallbackServerContext* context,
      const v1::ListBehaviourSetsRequest* request,
      v1::ListBehaviourSetsResponse* response) override;
  grpc::ServerUnaryReactor* GetBehaviourSet(
      grpc::CallbackServerContext* context,
      const v1::GetBehaviourSetRequest* request,
      v1::GetBehaviourSetResponse* response) override;

  // Refuses new calls with UNAVAILABLE and ends every open stream once the
  // batches it has read are answered. Idempotent.
  void StartDraining();
  bool draining() const { return draining_.load(); }
  // Returns how many streams are open.
  int active_streams() const;
  // The live sets.
  const ConfigStore& store() const { return *store_; }

  // Decides one batch into `response` on the current generation. Returns a
  // request-level error (UNAVAILABLE, RESOURCE_EXHAUSTED) without deciding.
  absl::Status DecideBatch(const v1::DecideRequest& request,
                           v1::DecideResponse* response);
  // Decides on `catalog` (the current generation when null) exactly as
  // DecideBatch does, but unrecorded: no decision ids, metrics, log or feed.
  // For the inspector's calls, which are not game traffic.
  absl::Status DecideUnrecorded(const v1::DecideRequest& request,
                                v1::DecideResponse* response,
                                const loader::Catalog* catalog = nullptr) const;
  // What ListBehaviourSets and GetBehaviourSet answer (also served as JSON
  // by the admin endpoint).
  absl::Status ListSets(v1::ListBehaviourSetsResponse* response) const;
  absl::Status GetSet(const v1::GetBehaviourSetRequest& request,
                      v1::GetBehaviourSetResponse* response) const;

 private:
  // RESOURCE_EXHAUSTED when the request (of `size`) has more agents,
  // targets, pools or holdings than allowed; INVALID_ARGUMENT for a form
  // CheckForm refuses.
  absl::Status CheckRequest(const v1::DecideRequest& request,
                            const codec::RequestSize& size) const;
  // DecideBatch for a request already measured.
  absl::Status DecideMeasured(const v1::DecideRequest& request,
                              const codec::RequestSize& size,
                              v1::DecideResponse* response);

  // Queues `run` for a batch of `request` (of `size`) to be scored by a
  // worker; false (counted, with the error to answer in `overloaded`, its
  // retry hint in `retry_after`) when the queue refuses it.
  bool Enqueue(const v1::DecideRequest& request, const codec::RequestSize& size,
               absl::Time deadline, std::function<void(bool expired)> run,
               absl::Status* overloaded, absl::Duration* retry_after);

  // A stream's batch, scored on the calling thread: admitted against the
  // queue's bounds (false: as Enqueue), then Admitted when done.
  bool Admit(const v1::DecideRequest& request, const codec::RequestSize& size,
             absl::Status* overloaded, absl::Duration* retry_after);
  void Admitted(const v1::DecideRequest& request,
                const codec::RequestSize& size, absl::Duration took);
  // The error for a refusal (counted).
  absl::Status Overloaded(const WorkQueue::Refusal& refusal);

  friend class StreamReactor;
  void Register(StreamReactor* reactor);
  void Unregister(StreamReactor* reactor);

  ConfigStore* const store_;
  const ServiceOptions options_;
  // Where decided batches are recorded (the BatchRecorder's).
  const RecordSinks sinks_;
  std::atomic<bool> draining_{false};
  // Decision ids: a per-process random base and a counter.
  const uint64_t id_base_;
  std::atomic<uint64_t> id_counter_{0};
  mutable utilityd::Mutex streams_mu_;
  absl::flat_hash_set<StreamReactor*> streams_ ABSL_GUARDED_BY(streams_mu_);
  // Last: its destructor waits for the workers, which use the above.
  std::unique_ptr<WorkQueue> queue_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_DECISION_SERVICE_H_
