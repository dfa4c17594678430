#include "server/src/service_metrics.h"

#include <algorithm>
#include <array>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "utilityd/codec/trees.h"
#include "utilityd/codec/variants.h"
#include "utilityd/engine/curve.h"

namespace utilityd::server {
namespace {

using metrics::ExponentialBuckets;
using prometheus::Counter;
using prometheus::Histogram;

std::shared_ptr<const metrics::Buckets> MakeBuckets(std::vector<double> b) {
  return std::make_shared<const metrics::Buckets>(std::move(b));
}

// Scores live in 0..1 (weights can lift them above).
const auto kScoreBuckets = MakeBuckets(
    {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.5, 2.0});
// Winner minus runner-up: near-ties predict dithering.
const auto kMarginBuckets =
    MakeBuckets({0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0});
// 5 µs to about 1.3 s.
const auto kDurationBuckets = MakeBuckets(ExponentialBuckets(5e-6, 2, 19));
// 1 to 16,384 agents.
const auto kAgentBuckets = MakeBuckets(ExponentialBuckets(1, 2, 15));

}  // namespace

const char* GrpcCodeName(int code) {
  static constexpr std::array<const char*, 17> kNames = {"OK",
                                                         "Canceled",
                                                         "Unknown",
                                                         "InvalidArgument",
                                                         "DeadlineExceeded",
                                                         "NotFound",
                                                         "AlreadyExists",
                                                         "PermissionDenied",
                                                         "ResourceExhausted",
                                                         "FailedPrecondition",
                                                         "Aborted",
                                                         "OutOfRange",
                                                         "Unimplemented",
                                                         "Internal",
                                                         "Unavailable",
                                                         "DataLoss",
                                                         "Unauthenticated"};
  return code >= 0 && code < static_cast<int>(kNames.size()) ? kNames[code]
                                                             : "Unknown";
}

ServiceMetrics::ServiceMetrics(prometheus::Registry* r) : registry_(r) {
#define UTILITYD_ADD_COUNTER(member, name, help, ...)     \
  member##_ = std::make_unique<metrics::Family<Counter>>( \
      *r, name, help, std::vector<std::string>{__VA_ARGS__});
#define UTILITYD_ADD_GAUGE(member, name, help, ...)                 \
  member##_ = std::make_unique<metrics::Family<prometheus::Gauge>>( \
      *r, name, help, std::vector<std::string>{__VA_ARGS__});
#define UTILITYD_ADD_HISTOGRAM(member, name, help, buckets, ...) \
  member##_ = std::make_unique<metrics::Family<Histogram>>(      \
      *r, name, help, std::vector<std::string>{__VA_ARGS__}, buckets);
  UTILITYD_SERVICE_METRICS(UTILITYD_ADD_COUNTER, UTILITYD_ADD_GAUGE,
                           UTILITYD_ADD_HISTOGRAM)
#undef UTILITYD_ADD_COUNTER
#undef UTILITYD_ADD_GAUGE
#undef UTILITYD_ADD_HISTOGRAM
  batch_duration_cell_ = &batch_duration_->Add({});
  batch_agents_cell_ = &batch_agents_->Add({});
  active_streams_cell_ = &active_streams_->Add({});
  expired_cell_ = &expired_->Add({});
  queued_agents_cell_ = &queued_agents_->Add({});
  queue_wait_cell_ = &queue_wait_->Add({});
  shed_full_cell_ = &shed_->Add({"queue_full"});
  shed_deadline_cell_ = &shed_->Add({"deadline"});
  log_dropped_cell_ = &log_dropped_->Add({});
  log_written_cell_ = &log_written_->Add({});
  // Exposed from the start, at 0.
  behaviour_sets_->Add({});
  last_reload_success_->Add({});
  reloads_->Add({"success"});
  reloads_->Add({"failure"});
  build_info_->Add({UTILITYD_VERSION, engine::SimdTarget()}).Set(1);
}

const SetMetrics& ServiceMetrics::ForSet(const loader::LoadedSet& set,
                                         v1::Variant variant) {
  const std::string v = codec::VariantName(variant);
  const std::string key = absl::StrCat(set.name(), "@", set.revision(), "@", v);
  utilityd::MutexLock lock(&mu_);
  auto& slot = sets_[key];
  if (slot == nullptr) {
    auto m = std::make_unique<SetMetrics>();
    const std::string& name = set.name();
    for (const auto& a : set.compiled.actions()) {
      m->decisions.push_back(&decisions_->Add({name, a.name, v}));
      m->vetoes.push_back(&vetoes_->Add({name, a.name, v}));
    }
    m->switches = &switches_->Add({name, v});
    m->no_action = &no_action_->Add({name, v});
    m->invalid_factors = &invalid_factors_->Add({name, v});
    // The set's resources, exposed from the start at 0 (rates of every
    // coordination series exist before its first event).
    for (const engine::CompiledResource& r : set.compiled.resources()) {
      auto [it, added] = resources_.try_emplace(r.name);
      if (!added) continue;
      it->second = {&resource_grants_->Add({r.name}),
                    &resource_denials_->Add({r.name}),
                    &resource_preemptions_->Add({r.name})};
    }
    m->selected_score = &selected_score_->Add({name, v});
    m->margin = &margin_->Add({name, v});
    m->score_buckets = selected_score_->buckets();
    m->margin_buckets = margin_->buckets();
    if (const engine::CompiledTree* tree = set.compiled.tree()) {
      const char* statuses[] = {"running", "success", "failure", "skipped"};
      for (int k = 0; k < 4; ++k) {
        m->tree_ticks[k] = &tree_ticks_->Add({name, statuses[k], v});
      }
      // Labelled by leaf name, bounded by the set's leaves (two leaves of
      // one name share a counter).
      for (size_t id = 0; id < tree->nodes.size(); ++id) {
        const bool leaf = tree->nodes[id].kind == engine::NodeKind::kAction;
        const std::string& leaf_name =
            codec::LeafName(set.compiled, static_cast<int>(id));
        m->leaves_started.push_back(
            leaf ? &leaves_started_->Add({name, leaf_name, v}) : nullptr);
        m->leaves_halted.push_back(
            leaf ? &leaves_halted_->Add({name, leaf_name, v}) : nullptr);
      }
      for (int r = 0; r <= static_cast<int>(engine::TreeReset::kOutOfRange);
           ++r) {
        m->tree_resets.push_back(
            r == 0 ? nullptr
                   : &tree_resets_->Add({name,
                                         engine::TreeResetName(
                                             static_cast<engine::TreeReset>(r)),
                                         v}));
      }
    }
    slot = std::move(m);
  }
  return *slot;
}

DecisionTally::PerSet& DecisionTally::Find(const SetMetrics& m) {
  for (size_t i = 0; i < used_; ++i) {
    if (sets_[i].m == &m) return sets_[last_ = i];
  }
  if (used_ == sets_.size()) sets_.emplace_back();
  PerSet& s = sets_[last_ = used_++];
  s.m = &m;
  s.decisions.assign(m.decisions.size(), 0);
  s.vetoes.assign(m.vetoes.size(), 0);
  s.no_action = s.switches = s.invalid_factors = 0;
  std::fill(std::begin(s.tree_ticks), std::end(s.tree_ticks), 0);
  s.leaves_started.assign(m.leaves_started.size(), 0);
  s.leaves_halted.assign(m.leaves_halted.size(), 0);
  s.tree_resets.assign(m.tree_resets.size(), 0);
  s.score.Reset(m.selected_score, m.score_buckets);
  s.margin.Reset(m.margin, m.margin_buckets);
  return s;
}

void DecisionTally::AddRows(const SetMetrics& m, absl::Span<const int> rows,
                            absl::Span<const int32_t> current_action,
                            absl::Span<const engine::BatchDecision> decisions,
                            absl::Span<const absl::Status> errors) {
  PerSet& s = For(m);
  // A block's rows counted as columns: their scores and margins gathered
  // and counted in bulk, the per-action counts in interleaved copies so
  // that neighbouring rows choosing the same action do not wait on each
  // other's increment. Each row counts what CountOf says, as in Count.
  constexpr size_t kCopies = 4, kStep = 256;
  const size_t slots = s.decisions.size() + 1;
  s.row_counts.assign(kCopies * slots, 0);
  uint64_t switches = 0;
  float scores[kStep], margins[kStep];
  for (size_t g0 = 0; g0 < decisions.size(); g0 += kStep) {
    const size_t end = std::min(decisions.size(), g0 + kStep);
    size_t n_scores = 0, n_margins = 0;
    for (size_t g = g0; g < end; ++g) {
      if (g < errors.size() && !errors[g].ok()) continue;
      const engine::BatchDecision& d = decisions[g];
      const size_t r = static_cast<size_t>(rows[g]);
      const RowCount c =
          CountOf(r < current_action.size() ? current_action[r] : -1, d);
      const size_t slot = c.acted ? static_cast<size_t>(d.action) : slots - 1;
      ++s.row_counts[g % kCopies * slots + slot];
      scores[n_scores] = d.score;
      n_scores += c.acted;
      margins[n_margins] = d.score - d.runner_up_score;
      n_margins += c.margin;
      switches += c.switched;
    }
    s.score.ObserveMany(scores, n_scores);
    s.margin.ObserveMany(margins, n_margins);
  }
  for (size_t c = 0; c < kCopies; ++c) {
    const uint64_t* counts = s.row_counts.data() + c * slots;
    for (size_t a = 0; a + 1 < slots; ++a) s.decisions[a] += counts[a];
    s.no_action += counts[slots - 1];
  }
  s.switches += switches;
}

void DecisionTally::AddTick(const SetMetrics& m, const engine::TreeTick& tick) {
  PerSet& s = For(m);
  switch (tick.status) {
    case engine::NodeStatus::kSuccess:
      ++s.tree_ticks[1];
      break;
    case engine::NodeStatus::kFailure:
      ++s.tree_ticks[2];
      break;
    case engine::NodeStatus::kSkipped:
      ++s.tree_ticks[3];
      break;
    default:
      ++s.tree_ticks[0];
      break;
  }
  if (!tick.run.empty()) ++s.decisions[tick.run.front().action];
  for (const engine::TreeLeaf& l : tick.run) {
    if (l.started) ++s.leaves_started[l.node];
  }
  for (const engine::TreeLeaf& l : tick.halted) ++s.leaves_halted[l.node];
  if (tick.reset != engine::TreeReset::kNone) {
    ++s.tree_resets[static_cast<int>(tick.reset)];
  }
}

void DecisionTally::AddVetoes(const SetMetrics& m,
                              absl::Span<const uint32_t> by_action,
                              uint32_t agents_with_invalid_input) {
  PerSet& s = For(m);
  for (size_t a = 0; a < by_action.size() && a < s.vetoes.size(); ++a) {
    s.vetoes[a] += by_action[a];
  }
  s.invalid_factors += agents_with_invalid_input;
}

void DecisionTally::AddError(const loader::LoadedSet* set,
                             absl::StatusCode code, v1::Variant variant) {
  for (Errors& e : errors_) {
    if (e.set == set && e.code == code && e.variant == variant) {
      ++e.count;
      return;
    }
  }
  errors_.push_back({set, code, variant, 1});
}

namespace {

// Adds counts[i] to counters[i] where both are there and the count is not 0.
void IncrementEach(absl::Span<const uint64_t> counts,
                   absl::Span<Counter* const> counters) {
  for (size_t i = 0; i < counts.size() && i < counters.size(); ++i) {
    if (counts[i] > 0 && counters[i] != nullptr) {
      counters[i]->Increment(static_cast<double>(counts[i]));
    }
  }
}

void IncrementIf(uint64_t count, Counter* counter) {
  if (count > 0) counter->Increment(static_cast<double>(count));
}

}  // namespace

void DecisionTally::Flush(ServiceMetrics& service) {
  for (size_t i = 0; i < used_; ++i) {
    PerSet& s = sets_[i];
    const SetMetrics& m = *s.m;
    IncrementEach(s.decisions, m.decisions);
    IncrementEach(s.vetoes, m.vetoes);
    IncrementIf(s.no_action, m.no_action);
    IncrementIf(s.switches, m.switches);
    IncrementIf(s.invalid_factors, m.invalid_factors);
    // Null for a set without a tree (IncrementEach skips them).
    IncrementEach(s.tree_ticks, m.tree_ticks);
    IncrementEach(s.leaves_started, m.leaves_started);
    IncrementEach(s.leaves_halted, m.leaves_halted);
    IncrementEach(s.tree_resets, m.tree_resets);
    s.score.Flush();
    s.margin.Flush();
  }
  used_ = 0;
  for (const Errors& e : errors_) {
    service.RecordAgentErrors(e.set, e.code, e.variant, e.count);
  }
  errors_.clear();
}

void ServiceMetrics::RecordAgentErrors(const loader::LoadedSet* set,
                                       absl::StatusCode code,
                                       v1::Variant variant, uint64_t count) {
  // Unknown set names come from clients: never a label.
  agent_errors_
      ->Add({set != nullptr ? set->name() : "(unknown)",
             GrpcCodeName(static_cast<int>(code)), codec::VariantName(variant)})
      .Increment(static_cast<double>(count));
}

void ServiceMetrics::RecordResources(absl::string_view resource, int grants,
                                     int denials, int preemptions) {
  ResourceCounters c;
  {
    utilityd::MutexLock lock(&mu_);
    auto it = resources_.find(resource);
    if (it == resources_.end()) return;  // declared by no set decided yet
    c = it->second;
  }
  if (grants > 0) c.grants->Increment(grants);
  if (denials > 0) c.denials->Increment(denials);
  if (preemptions > 0) c.preemptions->Increment(preemptions);
}

void ServiceMetrics::RecordBatch(absl::Duration duration, int agents) {
  batch_duration_cell_->Observe(absl::ToDoubleSeconds(duration));
  batch_agents_cell_->Observe(agents);
}

void ServiceMetrics::RecordReload(const ReloadOutcome& outcome,
                                  const Generation* current) {
  reloads_->Add({outcome.ok ? "success" : "failure"}).Increment();
  if (outcome.ok)
    last_reload_success_->Add({}).Set(absl::ToUnixMillis(outcome.at) / 1e3);
  if (current == nullptr) return;
  behaviour_sets_->Add({}).Set(
      static_cast<double>(current->catalog.sets().size()));
  if (outcome.changed) {
    set_info_->Clear();  // only written here, never on the request path
    for (const auto& [name, set] : current->catalog.sets()) {
      set_info_->Add({name, set->revision()}).Set(1);
    }
  }
}

// --- gRPC --------------------------------------------------------------------

namespace {

struct MethodMetrics {
  std::string type, service, method;
  Counter* started;
  Counter* received;
  Counter* sent;
  Histogram* handling;
  std::array<std::atomic<Counter*>, 17> handled{};
};

class GrpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  GrpcMetricsInterceptor(MethodMetrics* m,
                         metrics::Family<Counter>* handled_family)
      : m_(m), handled_family_(handled_family), start_(absl::Now()) {
    m_->started->Increment();
  }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    // The hook also fires for the read that finds the end of a stream,
    // with no message: count only messages that arrived.
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      m_->received->Increment();
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      m_->sent->Increment();
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      Handled(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

  ~GrpcMetricsInterceptor() override {
    if (!done_) Handled(grpc::StatusCode::CANCELLED);
  }

 private:
  void Handled(int code) {
    if (done_) return;
    done_ = true;
    if (code < 0 || code >= 17) code = 2;
    Counter* c = m_->handled[code].load(std::memory_order_acquire);
    if (c == nullptr) {
      c = &handled_family_->Add(
          {m_->type, m_->service, m_->method, GrpcCodeName(code)});
      m_->handled[code].store(c, std::memory_order_release);
    }
    c->Increment();
    m_->handling->Observe(absl::ToDoubleSeconds(absl::Now() - start_));
  }

  MethodMetrics* m_;
  metrics::Family<Counter>* handled_family_;
  absl::Time start_;
  bool done_ = false;
};

class GrpcMetricsFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit GrpcMetricsFactory(prometheus::Registry* r)
      : started_(*r, "grpc_server_started_total", "RPCs started on the server.",
                 Labels()),
        handled_(*r, "grpc_server_handled_total",
                 "RPCs completed on the server, regardless of success or "
                 "failure.",
                 Labels("grpc_code")),
        received_(*r, "grpc_server_msg_received_total",
                  "RPC stream messages received on the server.", Labels()),
        sent_(*r, "grpc_server_msg_sent_total",
              "gRPC stream messages sent on the server.", Labels()),
        handling_(*r, "grpc_server_handling_seconds",
                  "Response latency (seconds) of gRPC that had been "
                  "application-level handled by the server.",
                  Labels(),
                  MakeBuckets({0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                               0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300})) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new GrpcMetricsInterceptor(ForMethod(info), &handled_);
  }

 private:
  MethodMetrics* ForMethod(grpc::experimental::ServerRpcInfo* info) {
    const std::string full = info->method() != nullptr ? info->method() : "";
    utilityd::MutexLock lock(&mu_);
    auto& slot = methods_[full];
    if (slot == nullptr) {
      slot = std::make_unique<MethodMetrics>();
      // "/package.Service/Method"
      std::vector<std::string> parts = absl::StrSplit(full, '/');
      slot->service = parts.size() > 1 ? parts[1] : "unknown";
      slot->method = parts.size() > 2 ? parts[2] : "unknown";
      using Type = grpc::experimental::ServerRpcInfo::Type;
      switch (info->type()) {
        case Type::UNARY:
          slot->type = "unary";
          break;
        case Type::CLIENT_STREAMING:
          slot->type = "client_stream";
          break;
        case Type::SERVER_STREAMING:
          slot->type = "server_stream";
          break;
        case Type::BIDI_STREAMING:
          slot->type = "bidi_stream";
          break;
      }
      const std::vector<std::string> v = {slot->type, slot->service,
                                          slot->method};
      slot->started = &started_.Add(v);
      slot->received = &received_.Add(v);
      slot->sent = &sent_.Add(v);
      slot->handling = &handling_.Add(v);
    }
    return slot.get();
  }

  // The grpc-ecosystem middleware's labels, then `extra` when given.
  static std::vector<std::string> Labels(const char* extra = nullptr) {
    std::vector<std::string> labels = {"grpc_type", "grpc_service",
                                       "grpc_method"};
    if (extra != nullptr) labels.push_back(extra);
    return labels;
  }

  metrics::Family<Counter> started_;
  metrics::Family<Counter> handled_;
  metrics::Family<Counter> received_;
  metrics::Family<Counter> sent_;
  metrics::Family<Histogram> handling_;
  utilityd::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<MethodMetrics>> methods_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
ServiceMetrics::GrpcInterceptorFactory() {
  return std::make_unique<GrpcMetricsFactory>(registry_);
}

}  // namespace utilityd::server
