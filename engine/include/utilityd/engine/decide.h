// Scores one agent against a compiled behaviour set and selects an action.
//
//   const CompiledBehaviourSet& set = ...;
//   std::vector<float> factors = {80, 0, 3, ...};   // the set's factor order
//   AgentInput input{.factors = factors, .current_action = 2, .seed = 42};
//   Decision decision;                               // reuse across agents
//   absl::Status s = Decide(set, input, ExplainLevel::kFull, &decision);
//   if (s.ok() && decision.action >= 0) run(set.actions()[decision.action]);
//
// Scoring of one candidate (an action, or an action and a target):
//   for each consideration: normalised = clamp((raw - lo) / (hi - lo))
//     curved = curve(normalised); output = out_min + (out_max-out_min)*curved
//     contribution = output * w + (1 - w)   [w: consideration weight]
//   combine by aggregation (product, weighted_sum, min), with compensation
//   score = combined * action weight * personality multiplier
//           * cooldown factor (elapsed / cooldown while cooling down)
//           * (1 + commitment_bonus) for the current action
// A non-finite raw value, or a contribution of exactly 0 in the product or
// min aggregation, vetoes the candidate (score 0).
//
// Selection: eligible candidates are those not vetoed with score > 0 and
// >= min_score. Only the highest rank holding an eligible candidate competes
// (dual utility). Ties go to the current action, then the lowest index (and
// lowest target index). Random strategies draw once from SplitMix64(seed).
#ifndef UTILITYD_ENGINE_DECIDE_H_
#define UTILITYD_ENGINE_DECIDE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/scoring_rules.h"

namespace utilityd::engine {

enum class ExplainLevel {
  kNone,  // action and score
  kTop,   // plus the runner-up and margin
  kFull,  // plus every candidate and consideration
};

struct TargetInput {
  // Values in the set's target_factors order.
  absl::Span<const float> factors;
};

// One agent's snapshot, by index. Spans must outlive the Decide call.
struct AgentInput {
  // Values in the set's factor order; exactly factor_count() of them.
  absl::Span<const float> factors;
  // Action running now, or -1.
  int current_action = -1;
  // Target (index into `targets`) of the current action; kAnyTarget when not
  // given (every target of the current action counts as current), or
  // kTargetGone when the current target is no longer among `targets`.
  int current_target = -1;
  // Seconds since each action last ended, one per action; empty when none ended
  // recently. Infinity means "not recently".
  absl::Span<const float> seconds_since_action;
  absl::Span<const TargetInput> targets;
  uint64_t seed = 0;
  // Personality index, or -1.
  int personality = -1;
};

// Why a candidate scored 0 before selection.
enum class VetoReason {
  kNone,
  kConsideration,  // a consideration contributed 0
  kInvalidInput,   // a consideration read NaN or an infinity
  kNoTargets,      // a per-target action and an agent without targets
};

struct ConsiderationTrace {
  float raw = 0;
  float normalised = 0;
  float curved = 0;
  float output = 0;
  float contribution = 0;
  bool invalid_input = false;
};

// One scored candidate.
struct CandidateTrace {
  int action = -1;
  int target = -1;  // -1 for actions that are not per-target
  float aggregate = 0;
  float compensated = 0;
  float weight = 1;
  float cooldown_factor = 1;
  float commitment_factor = 1;
  float score = 0;
  VetoReason veto = VetoReason::kNone;
  int vetoed_by = -1;  // consideration index within the action
  bool eligible = false;
  double probability = 0;
  // Index of this candidate's first entry in Decision::considerations
  // (ExplainLevel::kFull only).
  uint32_t first_trace = 0;
};

// What a decision comes to: the outcome and the runner-up. Every level of
// explanation fills this much.
struct BatchDecision {
  int32_t action = -1;  // -1: nothing eligible and no fallback
  int32_t target = -1;
  float score = 0;
  bool switched = false;
  bool fallback = false;
  int32_t rank = 0;  // rank that competed
  // Runner-up: the candidate that would have won without the winner (at
  // every level: the margin is cheap and feeds metrics).
  int32_t runner_up_action = -1;
  int32_t runner_up_target = -1;
  float runner_up_score = 0;
  // Uniform draw in [0, 1) of a random strategy, else -1.
  double draw = -1;
};

// A decision with its trace: every candidate, and at ExplainLevel::kFull
// every consideration. Written by the same scoring pass as the outcome.
struct Decision : BatchDecision {
  // Every candidate, in action then target order (probabilities only for
  // random strategies).
  std::vector<CandidateTrace> candidates;
  // Consideration traces (kFull only).
  std::vector<ConsiderationTrace> considerations;
};

// Scores `input` against `set` and selects: a batch of one through a
// per-thread BatchDecider, so it scores exactly as batches do. `out` is
// overwritten; reusing one Decision across calls avoids allocation. Returns
// INVALID_ARGUMENT when the input does not match the set's shape (factor
// counts, indices out of range). Thread-safe for distinct `out`.
[[nodiscard]] absl::Status Decide(const CompiledBehaviourSet& set,
                                  const AgentInput& input, ExplainLevel level,
                                  Decision* out);

// Returns INVALID_ARGUMENT when `input` does not fit `set` (what Decide
// checks first).
[[nodiscard]] absl::Status CheckAgentInput(const CompiledBehaviourSet& set,
                                           const AgentInput& input);
// The same for every field but the factors (AgentFieldsFit).
[[nodiscard]] absl::Status CheckAgentFields(const CompiledBehaviourSet& set,
                                            const AgentInput& input);
// The indices among those fields, for an agent with `targets` targets:
// what CheckAgentFields says of them (BatchDecider::DecideColumns' rows).
[[nodiscard]] absl::Status CheckAgentIndices(const CompiledBehaviourSet& set,
                                             int current_action,
                                             int personality,
                                             int current_target,
                                             size_t targets);

inline constexpr int kTargetGone = -2;
inline constexpr float kNeverRan = std::numeric_limits<float>::infinity();

// Whether `in`'s fields other than its factors fit `set` (for inputs
// whose factors the caller hands over as columns instead).
[[nodiscard]] inline bool AgentFieldsFit(const CompiledBehaviourSet& set,
                                         const AgentInput& in) {
  if (in.current_action < -1 || in.current_action >= set.action_count() ||
      (!in.seconds_since_action.empty() &&
       static_cast<int>(in.seconds_since_action.size()) !=
           set.action_count()) ||
      in.personality < -1 || in.personality >= set.personality_count() ||
      in.current_target < kTargetGone ||
      in.current_target >= static_cast<int>(in.targets.size())) {
    return false;
  }
  for (const TargetInput& t : in.targets) {
    if (static_cast<int>(t.factors.size()) != set.target_factor_count()) {
      return false;
    }
  }
  return true;
}

// Whether CheckAgentInput finds nothing wrong, without building a status:
// the batch path's check of every agent (CheckAgentInput then names what
// is wrong with the few that do not fit).
[[nodiscard]] inline bool AgentInputFits(const CompiledBehaviourSet& set,
                                         const AgentInput& in) {
  return static_cast<int>(in.factors.size()) == set.factor_count() &&
         AgentFieldsFit(set, in);
}

// Whether choosing (action, target) switches from what `in` is running: a
// different action, or another target of it when the current one is known.
[[nodiscard]] inline bool Switched(int current_action, int current_target,
                                   int action, int target) {
  return action != current_action ||
         (target >= 0 && current_target != kAnyTarget &&
          target != current_target);
}
[[nodiscard]] inline bool Switched(const AgentInput& in, int action,
                                   int target) {
  return Switched(in.current_action, in.current_target, action, target);
}

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_DECIDE_H_
