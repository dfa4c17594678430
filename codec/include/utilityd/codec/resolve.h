// A snapshot resolved against its set into engine input: factors, the
// current action and target, cooldown clocks, the personality.
//
//   AgentScratch scratch;               // reuse across agents
//   engine::AgentInput input;
//   absl::Status s = ResolveAgent(set, snapshot, &scratch, &input);
//   if (s.ok()) s = engine::Decide(set.compiled, input, level, &decision);
#ifndef UTILITYD_CODEC_RESOLVE_H_
#define UTILITYD_CODEC_RESOLVE_H_

#include <vector>

#include "absl/status/status.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/decide.h"
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

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_RESOLVE_H_
