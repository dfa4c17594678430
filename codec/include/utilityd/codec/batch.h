// A decide request's agents (snapshots and block rows) decided with the
// sets of a catalog. The CLI and the service both decide batches through
// DecideBatch, so they answer identically.
//
//   v1::DecideRequest request = ...;      // e.g. read from JSON
//   v1::DecideResponse response;
//   DecideBatch(catalog, request, &response);
//   for (const v1::Decision& d : response.decisions()) {
//     if (d.has_error()) log(d.error().message());  // only this agent failed
//   }
#ifndef UTILITYD_CODEC_BATCH_H_
#define UTILITYD_CODEC_BATCH_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/codec/variants.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

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
  // rows[g] (agent first_index + rows[g]) decided as decisions[g], except
  // where errors[g] is not OK (those were shown to OnFailed); row r's
  // running action is current_action[r] (the block's column as sent:
  // empty, none runs). No input is built per row. Then each row
  // WantedMessages chose is shown to OnRowMessage.
  virtual void OnDecidedRows(int first_index, absl::Span<const int> rows,
                             const loader::LoadedSet& set,
                             absl::Span<const int32_t> current_action,
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

// Numbers the decisions of `response`, DecideBatch's answer to `request`,
// from `first`: agent i in the observer's numbering (snapshots, then block
// b's rows after the blocks before it) is number first + i. Writes the
// compact form's decision_id_base (its agent 0's) and each block's (its row
// 0's).
void WriteDecisionIdBases(const v1::DecideRequest& request, uint64_t first,
                          v1::DecideResponse* response);

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

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_BATCH_H_
