// Human-readable forms of a Decision, for logs and the CLI.
//
//   Decision d;  // from Decide(set, input, ExplainLevel::kFull, &d)
//   std::string line = FormatSummary(set, d, target_ids);
//   // "*recharge 0.71 [charges_missing 1.00→1.00, crystals 0.60→0.80] |
//   //  attack 0.00 vetoed by charges_left [charges_left 0.00→0.00] | ..."
#ifndef UTILITYD_ENGINE_EXPLAIN_H_
#define UTILITYD_ENGINE_EXPLAIN_H_

#include <string>

#include "absl/types/span.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine {

// Returns one line: each candidate as `name[@target] score [consideration
// normalised→contribution, ...]`, the winner marked with `*`, vetoes named,
// candidates separated by " | ". Needs a decision made with
// ExplainLevel::kFull; `target_ids` names the agent's targets by index.
[[nodiscard]] std::string FormatSummary(
    const CompiledBehaviourSet& set, const Decision& decision,
    absl::Span<const std::string> target_ids);

// Returns the reason a candidate was vetoed, e.g. `vetoed by charges_left`,
// `invalid input in health`, `no targets`; empty when not vetoed.
[[nodiscard]] std::string VetoText(const CompiledBehaviourSet& set,
                                   const CandidateTrace& candidate);

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_EXPLAIN_H_
