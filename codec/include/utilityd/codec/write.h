// Engine decisions, explanations, sensitivity and errors written back into
// utilityd.v1 messages.
//
//   v1::Decision out;
//   WriteDecision(set, snapshot, decision, v1::EXPLAIN_TOP, &out);
//   if (!status.ok()) WriteError(status, &out);   // code, reason, field
#ifndef UTILITYD_CODEC_WRITE_H_
#define UTILITYD_CODEC_WRITE_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/sensitivity.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

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

// Fills `out` with the status's canonical code and message.
void ToError(const absl::Status& status, v1::Error* out);

// Writes a per-agent error: canonical code and message, no action.
void WriteError(const absl::Status& status, v1::Decision* out);

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_WRITE_H_
