#include "server/src/decision_service.h"

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/src/batch_recorder.h"
#include "server/src/log.h"
#include "server/src/memory_returner.h"
#include "server/src/status_util.h"
#include "utilityd/base/decision_id.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/codec/write.h"
#include "utilityd/engine/error_reason.h"

namespace utilityd::server {
namespace {

absl::Status NotReady() {
  return engine::WithReason(
      absl::UnavailableError("no behaviour sets are loaded yet"),
      engine::ErrorReason::kNotReady);
}

grpc::ServerUnaryReactor* Respond(grpc::CallbackServerContext* context,
                                  const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

// One DecideStream call. States: a read is pending unless a response is
// held (both buffers busy) or reading has ended; at most one write is in
// flight. Callbacks may run concurrently on different threads, so the
// shared state is under mu_; processing a batch happens outside it.
class StreamReactor final
    : public grpc::ServerBidiReactor<v1::DecideRequest, v1::DecideResponse> {
 public:
  explicit StreamReactor(DecisionServiceImpl* service) : service_(service) {
    service_->Register(this);  // finishes the call at once when draining
    utilityd::MutexLock lock(&mu_);
    if (!finished_) StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      utilityd::MutexLock lock(&mu_);
      reads_done_ = true;
      MaybeFinishLocked();
      return;
    }
    int slot;
    {
      utilityd::MutexLock lock(&mu_);
      slot = writing_slot_ == 0 ? 1 : 0;  // the buffer not being written
    }
    // Scored here, in gRPC's callback, within the queue's bounds: a write
    // started on another thread waits for gRPC's poller (measured: 11 ms a
    // batch whose answer passes the client's flow-control window).
    v1::DecideResponse& response = responses_[slot];
    response.Clear();
    absl::Status overloaded;
    absl::Duration retry_after;
    const codec::RequestSize size = codec::MeasureRequest(request_);
    if (!service_->Admit(request_, size, &overloaded, &retry_after)) {
      response.set_request_id(request_.request_id());
      codec::ToError(overloaded, response.mutable_error());
      response.mutable_error()->set_retry_after_ms(
          absl::ToInt64Milliseconds(retry_after));
    } else {
      const absl::Time start = absl::Now();
      const absl::Status s =
          service_->DecideMeasured(request_, size, &response);
      service_->Admitted(request_, size, absl::Now() - start);
      if (!s.ok()) {
        response.Clear();
        response.set_request_id(request_.request_id());
        codec::ToError(s, response.mutable_error());
      }
    }
    utilityd::MutexLock lock(&mu_);
    if (writing_slot_ < 0) {
      BeginWriteLocked(slot);
    } else {
      held_slot_ = slot;  // the next read waits for the write to finish
    }
  }

  void OnWriteDone(bool ok) override {
    utilityd::MutexLock lock(&mu_);
    writing_slot_ = -1;
    if (!ok) {
      broken_ = true;  // the client went away; reads will fail too
      held_slot_ = -1;
    } else if (held_slot_ >= 0) {
      const int slot = held_slot_;
      held_slot_ = -1;
      BeginWriteLocked(slot);
    }
    MaybeFinishLocked();
  }

  void OnDone() override {
    service_->Unregister(this);
    delete this;
  }

  // Ends the stream once what has been read is answered.
  void Drain() {
    utilityd::MutexLock lock(&mu_);
    draining_ = true;
    MaybeFinishLocked();
  }

 private:
  void BeginWriteLocked(int slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    writing_slot_ = slot;
    StartWrite(&responses_[slot]);
    if (!draining_ && !reads_done_ && !broken_) StartRead(&request_);
  }

  void MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || writing_slot_ >= 0 || held_slot_ >= 0) return;
    if (!reads_done_ && !draining_ && !broken_) return;
    finished_ = true;
    if (draining_ && !reads_done_ && !broken_) {
      Finish(ToGrpcStatus(engine::WithReason(
          absl::UnavailableError(
              "server is draining; reconnect to another replica"),
          engine::ErrorReason::kDraining)));
    } else {
      Finish(grpc::Status::OK);
    }
  }

  DecisionServiceImpl* const service_;
  v1::DecideRequest request_;
  v1::DecideResponse responses_[2];
  utilityd::Mutex mu_;
  int writing_slot_ ABSL_GUARDED_BY(mu_) = -1;
  int held_slot_ ABSL_GUARDED_BY(mu_) = -1;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

DecisionServiceImpl::DecisionServiceImpl(
    ConfigStore* store, ServiceOptions options, ServiceMetrics* metrics,
    DecisionLog* log, RecentDecisions* recent, ShadowEvaluator* shadow,
    Canary* canary)
    : store_(store),
      options_(options),
      sinks_{.metrics = metrics,
             .log = log,
             .recent = recent,
             .shadow = shadow,
             .canary = canary},
      id_base_(absl::Uniform<uint64_t>(absl::BitGen())),
      queue_(std::make_unique<WorkQueue>(options_.queue)) {
  queue_->on_wait = [this](double seconds) {
    sinks_.metrics->queue_wait().Observe(seconds);
  };
  queue_->on_level = [this](int64_t agents) {
    sinks_.metrics->queued_agents().Set(static_cast<double>(agents));
  };
}

DecisionServiceImpl::~DecisionServiceImpl() = default;

void DecisionServiceImpl::Register(StreamReactor* reactor) {
  utilityd::MutexLock lock(&streams_mu_);
  streams_.insert(reactor);
  sinks_.metrics->active_streams().Increment();
  if (draining_.load()) reactor->Drain();
}

void DecisionServiceImpl::Unregister(StreamReactor* reactor) {
  utilityd::MutexLock lock(&streams_mu_);
  streams_.erase(reactor);
  sinks_.metrics->active_streams().Decrement();
}

int DecisionServiceImpl::active_streams() const {
  utilityd::MutexLock lock(&streams_mu_);
  return static_cast<int>(streams_.size());
}

void DecisionServiceImpl::StartDraining() {
  draining_.store(true);
  utilityd::MutexLock lock(&streams_mu_);
  for (StreamReactor* r : streams_) r->Drain();
}

absl::Status DecisionServiceImpl::CheckRequest(
    const v1::DecideRequest& request, const codec::RequestSize& size) const {
  struct Bound {
    int64_t value, limit;
    const char* field;
    const char* what;
    const char* flag;
  };
  for (const Bound& b :
       {Bound{size.rows, options_.max_agents_per_request, "agents",
              "agents in one request (snapshots and block rows)",
              "--max_agents_per_request"},
        Bound{size.targets, options_.max_targets_per_request, "targets",
              "targets in one request (over every agent and block row)",
              "--max_targets_per_request"},
        Bound{size.pools, options_.max_pools_per_request, "pools",
              "coordination pools in one request", "--max_pools_per_request"},
        Bound{size.holders, options_.max_holders_per_request, "pools",
              "holdings in one request (pools' holders and agents' held)",
              "--max_holders_per_request"}}) {
    if (b.value > b.limit) {
      return engine::FieldError(
          absl::StatusCode::kResourceExhausted,
          engine::ErrorReason::kBatchTooLarge, b.field,
          absl::StrCat(b.value, " ", b.what, "; the limit is ", b.limit, " (",
                       b.flag, ")"));
    }
  }
  return codec::CheckForm(request);
}

absl::Status DecisionServiceImpl::DecideUnrecorded(
    const v1::DecideRequest& request, v1::DecideResponse* response,
    const loader::Catalog* catalog) const {
  UTILITYD_RETURN_IF_ERROR(
      CheckRequest(request, codec::MeasureRequest(request)));
  std::shared_ptr<const Generation> generation;
  if (catalog == nullptr) {
    generation = store_->Current();
    if (generation == nullptr) {
      return NotReady();
    }
    catalog = &generation->catalog;
  }
  codec::DecideBatch(*catalog, request, response);
  return absl::OkStatus();
}

absl::Status DecisionServiceImpl::DecideBatch(const v1::DecideRequest& request,
                                              v1::DecideResponse* response) {
  return DecideMeasured(request, codec::MeasureRequest(request), response);
}

absl::Status DecisionServiceImpl::DecideMeasured(
    const v1::DecideRequest& request, const codec::RequestSize& size,
    v1::DecideResponse* response) {
  UTILITYD_RETURN_IF_ERROR(CheckRequest(request, size));
  const std::shared_ptr<const Generation> generation = store_->Current();
  if (generation == nullptr) {
    return NotReady();
  }
  const absl::Time start = absl::Now();
  if (options_.answer_without_scoring) {
    options_.answer_without_scoring(request, response);
    sinks_.metrics->RecordBatch(absl::Now() - start, size.rows);
    return absl::OkStatus();
  }
  Canary::Serving canary;
  if (sinks_.canary != nullptr) canary = sinks_.canary->Current();
  // The batch's decision ids, reserved in one atomic step.
  const uint64_t first_id =
      id_base_ + id_counter_.fetch_add(static_cast<uint64_t>(size.rows),
                                       std::memory_order_relaxed);
  {
    BatchRecorder recorder(sinks_, generation, canary, first_id);
    codec::DecideBatch(generation->catalog, request, response, &recorder,
                       {.canary = canary.catalog(), .share = canary.share});
  }
  codec::WriteDecisionIdBases(request, first_id, response);
  sinks_.metrics->RecordBatch(absl::Now() - start, size.rows);
  return absl::OkStatus();
}

absl::Status DecisionServiceImpl::Overloaded(
    const WorkQueue::Refusal& refusal) {
  const bool late = refusal.reason == WorkQueue::Reason::kTooLate;
  sinks_.metrics->RecordShed(late);
  const WorkQueue::Stats s = queue_->stats();
  return engine::WithReason(
      absl::ResourceExhaustedError(
          absl::StrCat("overloaded: ",
                       late ? "the batch could not start before its deadline"
                            : "the queue is full",
                       " (", s.queued_agents + s.running_agents,
                       " agents queued); retry in ",
                       absl::ToInt64Milliseconds(refusal.retry_after),
                       " ms, preferably on another replica")),
      engine::ErrorReason::kOverloaded);
}

bool DecisionServiceImpl::Admit(const v1::DecideRequest& request,
                                const codec::RequestSize& size,
                                absl::Status* overloaded,
                                absl::Duration* retry_after) {
  WorkQueue::Refusal refusal;
  // Sized once (packed sint32 columns cost a pass each); Admitted reads
  // the cached size.
  const size_t bytes = request.ByteSizeLong();
  MemoryReturner::Note(bytes);
  if (queue_->Reserve(size.rows, static_cast<int64_t>(bytes), &refusal)) {
    return true;
  }
  *retry_after = refusal.retry_after;
  *overloaded = Overloaded(refusal);
  return false;
}

void DecisionServiceImpl::Admitted(const v1::DecideRequest& request,
                                   const codec::RequestSize& size,
                                   absl::Duration took) {
  queue_->Release(size.rows, static_cast<int64_t>(request.GetCachedSize()),
                  took);
}

bool DecisionServiceImpl::Enqueue(const v1::DecideRequest& request,
                                  const codec::RequestSize& size,
                                  absl::Time deadline,
                                  std::function<void(bool expired)> run,
                                  absl::Status* overloaded,
                                  absl::Duration* retry_after) {
  WorkQueue::Job job{.agents = size.rows,
                     .bytes = static_cast<int64_t>(request.ByteSizeLong()),
                     .deadline = deadline};
  MemoryReturner::Note(static_cast<size_t>(job.bytes));
  job.run = [this, run = std::move(run)](bool expired) {
    if (expired) sinks_.metrics->expired().Increment();
    run(expired);
  };
  WorkQueue::Refusal refusal;
  if (queue_->Submit(std::move(job), &refusal)) return true;
  *retry_after = refusal.retry_after;
  *overloaded = Overloaded(refusal);
  return false;
}

grpc::ServerUnaryReactor* DecisionServiceImpl::Decide(
    grpc::CallbackServerContext* context, const v1::DecideRequest* request,
    v1::DecideResponse* response) {
  if (draining_.load()) {
    return Respond(
        context, engine::WithReason(
                     absl::UnavailableError("server is draining; retry another "
                                            "replica"),
                     engine::ErrorReason::kDraining));
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const auto chrono_deadline = context->deadline();
  const absl::Time deadline =
      chrono_deadline == std::chrono::system_clock::time_point::max()
          ? absl::InfiniteFuture()
          : absl::FromChrono(chrono_deadline);
  absl::Status overloaded;
  absl::Duration retry_after;
  const codec::RequestSize size = codec::MeasureRequest(*request);
  const bool queued = Enqueue(
      *request, size, deadline,
      [this, context, request, size, response, reactor](bool expired) {
        if (expired) {
          reactor->Finish(ToGrpcStatus(absl::DeadlineExceededError(
              "the deadline passed while the batch waited to be scored")));
          return;
        }
        if (context->IsCancelled()) {
          reactor->Finish(ToGrpcStatus(absl::CancelledError()));
          return;
        }
        const absl::Status s = DecideMeasured(*request, size, response);
        // A refusal no retry can help (a batch too large): tell gRPC's
        // retry not to try again.
        if (s.code() == absl::StatusCode::kResourceExhausted) {
          context->AddTrailingMetadata("grpc-retry-pushback-ms", "-1");
        }
        reactor->Finish(ToGrpcStatus(s));
      },
      &overloaded, &retry_after);
  if (!queued) {
    context->AddTrailingMetadata(
        "grpc-retry-pushback-ms",
        absl::StrCat(absl::ToInt64Milliseconds(retry_after)));
    reactor->Finish(ToGrpcStatus(overloaded));
  }
  return reactor;
}

grpc::ServerBidiReactor<v1::DecideRequest, v1::DecideResponse>*
DecisionServiceImpl::DecideStream(grpc::CallbackServerContext* /*context*/) {
  return new StreamReactor(this);
}

absl::Status DecisionServiceImpl::ListSets(
    v1::ListBehaviourSetsResponse* response) const {
  const std::shared_ptr<const Generation> g = store_->Current();
  if (g == nullptr) return NotReady();
  for (const auto& [name, set] : g->catalog.sets()) {
    *response->add_behaviour_sets() =
        codec::Summarise(*set, g->set_loaded_at.at(name));
  }
  return absl::OkStatus();
}

absl::Status DecisionServiceImpl::GetSet(
    const v1::GetBehaviourSetRequest& request,
    v1::GetBehaviourSetResponse* response) const {
  const std::shared_ptr<const Generation> g = store_->Current();
  if (g == nullptr) return NotReady();
  const auto set = g->catalog.Find(request.name());
  if (set == nullptr) {
    std::vector<std::string> names;
    for (const auto& [name, _] : g->catalog.sets()) names.push_back(name);
    return absl::NotFoundError(absl::StrCat(
        "name: ", engine::UnknownNameMessage("set", request.name(), names)));
  }
  *response->mutable_summary() =
      codec::Summarise(*set, g->set_loaded_at.at(set->name()));
  *response->mutable_behaviour_set() = set->definition;
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* DecisionServiceImpl::ListBehaviourSets(
    grpc::CallbackServerContext* context,
    const v1::ListBehaviourSetsRequest* /*request*/,
    v1::ListBehaviourSetsResponse* response) {
  return Respond(context, ListSets(response));
}

grpc::ServerUnaryReactor* DecisionServiceImpl::GetBehaviourSet(
    grpc::CallbackServerContext* context,
    const v1::GetBehaviourSetRequest* request,
    v1::GetBehaviourSetResponse* response) {
  return Respond(context, GetSet(*request, response));
}

}  // namespace utilityd::server
