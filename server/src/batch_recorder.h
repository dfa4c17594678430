// The service's observer of one decided batch (codec::BatchObserver): decision
// ids, metrics, and what the live feed, shadow evaluation and the decision
// log take of each decision. Internal to the server.
#ifndef UTILITYD_SERVER_SRC_BATCH_RECORDER_H_
#define UTILITYD_SERVER_SRC_BATCH_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/time/clock.h"
#include "server/src/canary.h"
#include "server/src/config_store.h"
#include "server/src/decision_log.h"
#include "server/src/recent_decisions.h"
#include "server/src/service_metrics.h"
#include "server/src/shadow.h"
#include "utilityd/base/decision_id.h"
#include "utilityd/codec/batch.h"

namespace utilityd::server {

// Where a batch's records go: the service's metrics (required) and, each
// null when off, its decision log, live feed, shadow evaluation and canary.
struct RecordSinks {
  ServiceMetrics* metrics = nullptr;
  DecisionLog* log = nullptr;
  RecentDecisions* recent = nullptr;
  ShadowEvaluator* shadow = nullptr;
  Canary* canary = nullptr;
};

// Sees every agent of one batch: assigns decision ids (agent i's is
// DecisionId(first_id, i), the batch's ids reserved by the caller) and counts
// its metrics in the thread's DecisionTally (a block's rows in one call),
// handed to prometheus-cpp once when the batch is done.
class BatchRecorder final : public codec::BatchObserver {
 public:
  // `sinks` must outlive the recorder; `generation` decides the live
  // agents, `canary` the canary's.
  BatchRecorder(const RecordSinks& sinks,
                std::shared_ptr<const Generation> generation,
                Canary::Serving canary, uint64_t first_id)
      : sinks_(sinks),
        generation_(std::move(generation)),
        canary_(std::move(canary)),
        first_id_(first_id),
        now_(absl::Now()),
        wanted_(Wanted(sinks_, canary_, now_)) {}
  ~BatchRecorder() override { tally_.Flush(*sinks_.metrics); }

  // Agent i's id is DecisionId(first, i): the compact form's
  // decision_id_base is `first`.
  uint64_t first_id() const { return first_id_; }

  bool WantsMessage(int agent_index) override {
    return wanted_(DecisionId(first_id_, agent_index));
  }

  void WantedMessages(int first_index, absl::Span<uint8_t> wanted) override {
    for (size_t i = 0; i < wanted.size(); ++i) {
      wanted[i] =
          wanted_(DecisionId(first_id_, first_index + static_cast<int>(i)));
    }
  }

  void OnDecided(int agent_index, const loader::LoadedSet& set,
                 const v1::AgentSnapshot& agent,
                 const engine::AgentInput& input,
                 const engine::BatchDecision& decision,
                 v1::Decision* out) override {
    tally_.Add(Metrics(set), input, decision);
    if (out == nullptr) return;  // compact, and neither feed nor log wants it
    OnRowMessage(agent_index, set, agent, input, decision, out);
  }

  void OnDecidedRows(int /*first_index*/, absl::Span<const int> rows,
                     const loader::LoadedSet& set,
                     absl::Span<const int32_t> current_action,
                     absl::Span<const engine::BatchDecision> decisions,
                     absl::Span<const absl::Status> errors) override {
    tally_.AddRows(Metrics(set), rows, current_action, decisions, errors);
  }

  void OnRowMessage(int agent_index, const loader::LoadedSet& set,
                    const v1::AgentSnapshot& agent,
                    const engine::AgentInput& input,
                    const engine::BatchDecision& decision,
                    v1::Decision* out) override {
    const uint64_t id = DecisionId(first_id_, agent_index);
    out->set_decision_id(DecisionIdHex(id).data(), 16);
    Record(set, agent, input, decision, *out, id);
  }

  void OnVetoes(const loader::LoadedSet& set,
                absl::Span<const uint32_t> vetoes_by_action,
                uint32_t agents_with_invalid_input) override {
    tally_.AddVetoes(Metrics(set), vetoes_by_action, agents_with_invalid_input);
  }

  void OnTicked(int agent_index, const loader::LoadedSet& set,
                const v1::AgentSnapshot& agent, const engine::AgentInput& input,
                const engine::TreeTick& tick, v1::Decision* out) override {
    tally_.AddTick(Metrics(set), tick);
    if (out == nullptr) return;  // a block row neither feed nor log wants
    const uint64_t id = DecisionId(first_id_, agent_index);
    out->set_decision_id(DecisionIdHex(id).data(), 16);
    // The feed and the log take the tick as written (its first leaf as the
    // action); reading the feed re-ticks the snapshot, state included.
    Record(set, agent, input,
           engine::BatchDecision{.action = out->action_index()}, *out, id);
  }

  void OnResources(absl::string_view resource, int grants, int denials,
                   int preemptions) override {
    sinks_.metrics->RecordResources(resource, grants, denials, preemptions);
  }

  void OnFailed(int /*agent_index*/, const loader::LoadedSet* set,
                const v1::AgentSnapshot&, const absl::Status& status) override {
    tally_.AddError(set, status.code(),
                    set != nullptr && IsCanary(*set) ? v1::VARIANT_CANARY
                                                     : v1::VARIANT_LIVE);
  }

 private:
  // The decisions some consumer wants a message for: the decision log wants
  // every one; the live feed, shadow evaluation and the canary's comparison
  // their samples.
  static IdSampler Wanted(const RecordSinks& sinks,
                          const Canary::Serving& canary, absl::Time now) {
    IdSampler wanted(sinks.log != nullptr ? 1 : 0);
    if (sinks.recent != nullptr) {
      wanted = wanted.Or(sinks.recent->sampler(now));
    }
    if (sinks.shadow != nullptr) {
      wanted = wanted.Or(sinks.shadow->sampler());
    }
    if (canary.generation != nullptr) {
      wanted = wanted.Or(sinks.canary->compare().sampler());
    }
    return wanted;
  }

  const SetMetrics& Metrics(const loader::LoadedSet& set) {
    if (&set != last_set_) {
      last_set_ = &set;
      last_canary_ = canary_.generation != nullptr &&
                     canary_.generation->catalog.Find(set.name()).get() == &set;
      last_ = &sinks_.metrics->ForSet(
          set, last_canary_ ? v1::VARIANT_CANARY : v1::VARIANT_LIVE);
    }
    return *last_;
  }
  // Whether `set` is the canary's.
  bool IsCanary(const loader::LoadedSet& set) {
    Metrics(set);
    return last_canary_;
  }

  // Hands a sampled decision to the live feed (a copy of the snapshot; the
  // feed builds its breakdown when read) and to shadow evaluation, and
  // builds the decision log's entry when the log is on (its queue formats
  // and writes on its own thread).
  void Record(const loader::LoadedSet& set, const v1::AgentSnapshot& agent,
              const engine::AgentInput& input,
              const engine::BatchDecision& decision, const v1::Decision& out,
              uint64_t id);

  const RecordSinks sinks_;
  const std::shared_ptr<const Generation> generation_;
  const Canary::Serving canary_;
  const uint64_t first_id_;
  const absl::Time now_;
  const IdSampler wanted_;
  const loader::LoadedSet* last_set_ = nullptr;
  const SetMetrics* last_ = nullptr;
  bool last_canary_ = false;
  // Per thread: a batch is decided on one thread, start to end.
  static thread_local DecisionTally tally_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_SRC_BATCH_RECORDER_H_
