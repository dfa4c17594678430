// Converts decide requests (utilityd.v1 messages) into engine input and
// engine decisions back into messages. The CLI and the service both decide
// batches through DecideBatch, so they answer identically.
//
//   v1::DecideRequest request = ...;      // e.g. read from JSON
//   v1::DecideResponse response;
//   DecideBatch(catalog, request, &response);
//   for (const v1::Decision& d : response.decisions()) {
//     if (d.has_error()) log(d.error().message());  // only this agent failed
//   }
#ifndef UTILITYD_CODEC_DECIDE_CODEC_H_
#define UTILITYD_CODEC_DECIDE_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/sensitivity.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

// Buffers that one agent's engine input points into. Reuse across agents.
struct AgentScratch {
  std::vector<float> factors;
  std::vector<float> seconds_since_action;
  std::vector<float> target_values;
  std::vector<engine::TargetInput> targets;
  engine::Decision decision;
  std::vector<engine::LeafOutcome> outcomes;  // trees
  engine::TreeTick tick;                      // trees
};

// Resolves `snapshot` against `set` into `input`, whose spans point into
// `snapshot` and `scratch`. Errors name the field: INVALID_ARGUMENT for wrong
// or missing factor values, NOT_FOUND for an unknown action, personality or
// factor name, FAILED_PRECONDITION for an expected_revision mismatch
// (with `revision_of`'s revision when given: the live set, when a canary's
// set decides).
[[nodiscard]] absl::Status ResolveAgent(
    const loader::LoadedSet& set, const v1::AgentSnapshot& snapshot,
    AgentScratch* scratch, engine::AgentInput* input,
    const loader::LoadedSet* revision_of = nullptr);

// Maps a request's explain level to the engine's.
[[nodiscard]] engine::ExplainLevel ToExplainLevel(v1::Explain explain);

// Fills `out` from an engine decision for `snapshot`.
void WriteDecision(const loader::LoadedSet& set,
                   const v1::AgentSnapshot& snapshot,
                   const engine::Decision& decision, v1::Explain explain,
                   v1::Decision* out);
// The same from a batch decision, for explain none and top.
void WriteDecision(const loader::LoadedSet& set,
                   const v1::AgentSnapshot& snapshot,
                   const engine::BatchDecision& decision, v1::Explain explain,
                   v1::Decision* out);

// Writes the explanation of `d`, a decision of `set` (a behaviour set or a
// tree's utility node), at the level `explain` asks for.
void WriteExplanation(const engine::CompiledBehaviourSet& set,
                      const v1::AgentSnapshot& snapshot,
                      const engine::Decision& d, v1::Explain explain,
                      v1::Explanation* out);

// Writes `sensitivity` (engine::SensitivityAnalyser's, for `snapshot`
// decided with `set`) into `out->sensitivity()`.
void WriteSensitivity(const engine::CompiledBehaviourSet& set,
                      const v1::AgentSnapshot& snapshot,
                      absl::Span<const engine::FactorSensitivity> sensitivity,
                      v1::Decision* out);

// Trees (docs/TREES.md). Reads the snapshot's tree fields into `in`, whose
// outcomes point into `scratch`. INVALID_ARGUMENT naming the field for an
// outcome without a status or naming a node that is not an action leaf.
[[nodiscard]] absl::Status ResolveTree(const loader::LoadedSet& set,
                                       const v1::AgentSnapshot& snapshot,
                                       AgentScratch* scratch,
                                       engine::TreeInput* in);

// Fills `out` from a tick of `set`'s tree: the first leaf to run as the
// decision's action, the leaves, the state, and at explain top and full the
// path with the utility nodes' scoring.
void WriteTick(const loader::LoadedSet& set, const v1::AgentSnapshot& snapshot,
               const engine::TreeTick& tick, v1::Explain explain,
               v1::Decision* out);

// Applies a scenario's tick to `snapshot`: its factor changes, game time and
// leaf outcomes (by leaf name), with `state` as the tree state.
// INVALID_ARGUMENT for an outcome naming no leaf, or several.
[[nodiscard]] absl::Status ApplyTreeStep(const loader::LoadedSet& set,
                                         const v1::TreeStep& step,
                                         absl::string_view state,
                                         v1::AgentSnapshot* snapshot);

// Steps every scenario of a set with a tree through its ticks and returns
// one message per expectation that does not hold.
[[nodiscard]] std::vector<std::string> CheckTreeScenarios(
    const loader::LoadedSet& set);

// Returns a tree leaf's name: the node's `name`, or its action's.
[[nodiscard]] const std::string& LeafName(
    const engine::CompiledBehaviourSet& set, int node);

// Fills `out` with the status's canonical code and message.
void ToError(const absl::Status& status, v1::Error* out);

// Writes a per-agent error: canonical code and message, no action.
void WriteError(const absl::Status& status, v1::Decision* out);

// Sees each agent as DecideBatch handles it, on the request path: keep it
// cheap. Used by the service for metrics, decision ids and decision logs.
class BatchObserver {
 public:
  virtual ~BatchObserver() = default;
  // `agent_index` is the agent's position in the request.
  //
  // The compact form writes no message per decided agent: asks whether the
  // observer wants one for this agent (e.g. a sampled decision).
  virtual bool WantsMessage(int /*agent_index*/) { return false; }
  // The block form asks once per block: sets wanted[i] when agent
  // first_index + i wants a message (what WantsMessage would say of each,
  // which the default asks).
  virtual void WantedMessages(int first_index, absl::Span<uint8_t> wanted) {
    for (size_t i = 0; i < wanted.size(); ++i) {
      wanted[i] = WantsMessage(first_index + static_cast<int>(i)) ? 1 : 0;
    }
  }
  // An agent was decided (a snapshot, or a block row held for
  // coordination); `out` is its message, already written — in the compact
  // form a scratch message valid for the call, and null unless
  // WantsMessage said yes.
  virtual void OnDecided(int agent_index, const loader::LoadedSet& set,
                         const v1::AgentSnapshot& agent,
                         const engine::AgentInput& input,
                         const engine::BatchDecision& decision,
                         v1::Decision* out) = 0;
  // A block's rows of `set` decided in one engine pass, at once: row
  // rows[g] (agent first_index + rows[g]) decided as decisions[g] from
  // inputs[g], except where errors[g] is not OK (those were shown to
  // OnFailed). A factor-major row's input has no factors. Then each row
  // WantedMessages chose is shown to OnRowMessage.
  virtual void OnDecidedRows(int first_index, absl::Span<const int> rows,
                             const loader::LoadedSet& set,
                             absl::Span<const engine::AgentInput> inputs,
                             absl::Span<const engine::BatchDecision> decisions,
                             absl::Span<const absl::Status> errors) = 0;
  // A row OnDecidedRows showed, which wanted a message: its snapshot (built
  // from the block's columns), its input with its factors, and `out`, its
  // message, a scratch message valid for the call.
  virtual void OnRowMessage(int agent_index, const loader::LoadedSet& set,
                            const v1::AgentSnapshot& agent,
                            const engine::AgentInput& input,
                            const engine::BatchDecision& decision,
                            v1::Decision* out) = 0;
  // After the agents of `set` in a batch were decided: how many candidates
  // were vetoed per action, and how many agents had a candidate vetoed for
  // a NaN or infinite input.
  virtual void OnVetoes(const loader::LoadedSet& set,
                        absl::Span<const uint32_t> vetoes_by_action,
                        uint32_t agents_with_invalid_input) = 0;
  // Coordination, once per resource a batch touched: units newly granted,
  // candidates denied for lack of it, and holdings preempted.
  virtual void OnResources(absl::string_view /*resource*/, int /*grants*/,
                           int /*denials*/, int /*preemptions*/) {}
  // An agent failed; `set` is null when its set is not loaded.
  virtual void OnFailed(int agent_index, const loader::LoadedSet* set,
                        const v1::AgentSnapshot& agent,
                        const absl::Status& status) = 0;
  // An agent of a set with a tree was ticked; `out` is already written —
  // for a block row, only when WantedMessages chose it, else null.
  virtual void OnTicked(int agent_index, const loader::LoadedSet& set,
                        const v1::AgentSnapshot& agent,
                        const engine::AgentInput& input,
                        const engine::TreeTick& tick, v1::Decision* out) = 0;
};

// Canary rollouts (docs/CANARY.md): a second catalog whose sets decide a
// sticky share of agents. Agent `id` is in the share when its hash (FNV-1a
// 64 of the id's bytes, then SplitMix64's finaliser), read as a fraction of
// 2^64, is below `share`: the same on every replica, for every set and at
// every reload, and an agent in the share stays in it as the share grows.
// A block row's id counts as its decimal text (the id the decision log
// shows).
[[nodiscard]] bool InCanaryShare(absl::string_view agent_id, double share);
[[nodiscard]] bool InCanaryShare(uint64_t agent_id, double share);

// Whether the canary's `canary` may decide agents packed for `live`: the
// same factors, target factors, actions, personalities, resources and tree
// shape, in the same order, so every positional factor, action index and
// block column means the same to both (the client packs by the live set's
// schema and revision).
[[nodiscard]] bool SameColumns(const loader::LoadedSet& live,
                               const loader::LoadedSet& canary);

// "live" or "canary": the metric label and the log's word for a variant.
[[nodiscard]] const char* VariantName(v1::Variant variant);

struct Variants {
  // Null: every agent is decided by the live catalog.
  const loader::Catalog* canary = nullptr;
  double share = 0;  // 0..1

  // The canary's set of `live`'s name, or null when it has none, when its
  // columns differ (SameColumns: its agents stay live) or when no canary
  // is served.
  const loader::LoadedSet* CanaryOf(const loader::LoadedSet& live) const {
    if (canary == nullptr || share <= 0) return nullptr;
    const loader::LoadedSet* set = canary->Find(live.name()).get();
    return set != nullptr && SameColumns(live, *set) ? set : nullptr;
  }
};

// Decides every agent of `request` with the sets of `catalog`. One agent's
// problem becomes that agent's error and never affects the others. Errors
// are prefixed with the agent's path, e.g. "agents[3].factors: ...".
// `observer`, when given, sees every agent. The agents of each set are
// decided together by engine::BatchDecider (identical to one at a time);
// the working memory is kept per thread, so a warm thread allocates only
// for the response.
//
// When the request asks for DECISION_FORM_COMPACT the answer is
// `response->compact()` (decided at explain none; check the request with
// CheckForm first), else `response->decisions()`. Its blocks are answered
// in `response->blocks()`, one per block; the observer sees block b's row
// r as agent agents_size() + (rows of the blocks before b) + r, and a
// row's errors are prefixed "blocks[b].rows[r].".
//
// With `variants`, agents in the canary share whose set the canary holds
// (with SameColumns) are decided by the canary's set instead
// (Decision.variant, the COMPACT_FLAG_CANARY flag); an expected_revision
// is still the live set's.
void DecideBatch(const loader::Catalog& catalog,
                 const v1::DecideRequest& request, v1::DecideResponse* response,
                 BatchObserver* observer = nullptr,
                 const Variants& variants = {});

// The agents of a request: its snapshots and its blocks' rows.
[[nodiscard]] int RequestRows(const v1::DecideRequest& request);

// An agent (a snapshot or a block row) with more targets than this is
// refused with INVALID_ARGUMENT, reason OUT_OF_RANGE, field `targets`: its
// own error, beside the other agents' decisions.
inline constexpr int kMaxTargetsPerAgent = 4096;

// What a request asks the service to hold and allocate, for its limits
// (docs/BAD_INPUT.md): targets of every snapshot and block row, coordination
// pools, and holdings (pools' holders, snapshots' and block rows' held).
struct RequestSize {
  int64_t rows = 0;
  int64_t targets = 0;
  int64_t pools = 0;
  int64_t holders = 0;
};
[[nodiscard]] RequestSize MeasureRequest(const v1::DecideRequest& request);

// INVALID_ARGUMENT for a compact request that asks for an explanation
// (field `form`) or for sensitivity (field `sensitivity`), and for a
// request with blocks that asks for sensitivity (field `blocks`).
[[nodiscard]] absl::Status CheckForm(const v1::DecideRequest& request);

// Returns the snapshot a scenario of set `set_name` describes (agent id =
// scenario name).
[[nodiscard]] v1::AgentSnapshot ScenarioSnapshot(absl::string_view set_name,
                                                 const v1::Scenario& scenario);

// Returns the summary of a loaded set as ListBehaviourSets reports it.
[[nodiscard]] v1::BehaviourSetSummary Summarise(const loader::LoadedSet& set,
                                                absl::Time loaded_at);

// Decides every scenario that names an expected action, and steps every
// tree scenario through its ticks, and returns one message per scenario
// that does not hold; empty when all hold.
[[nodiscard]] std::vector<std::string> CheckScenarios(
    const loader::LoadedSet& set);

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_DECIDE_CODEC_H_
