// A deliberately plain scorer that the engine is checked against
// (batch_test): one obvious loop per rule, one agent and one candidate at a
// time, written from docs/SCORING.md and the seed documents rather than from
// the engine's column code. It shares only the curve formulas
// (EvaluateCurve, whose every kind is checked against its closed form in
// curve_test) and the SplitMix64 generator, whose output is specified.
//
//   engine::Decision d;
//   absl::Status s = reference::Decide(set, input, &d);  // traces always full
#ifndef UTILITYD_TESTS_ENGINE_REFERENCE_DECIDE_H_
#define UTILITYD_TESTS_ENGINE_REFERENCE_DECIDE_H_

#include "absl/status/status.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::reference {

// Scores and selects as the engine documents, writing every candidate and
// consideration trace into `out`. Returns INVALID_ARGUMENT, with the
// engine's message, when the input does not fit the set.
[[nodiscard]] absl::Status Decide(const engine::CompiledBehaviourSet& set,
                                  const engine::AgentInput& input,
                                  engine::Decision* out);

}  // namespace utilityd::reference

#endif  // UTILITYD_TESTS_ENGINE_REFERENCE_DECIDE_H_
