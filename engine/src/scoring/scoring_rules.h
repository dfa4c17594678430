// The scoring rules of docs/SCORING.md, each written once. The column loops
// of BatchDecider and its trace call these, so a traced value is the value
// that was scored. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_SCORING_SCORING_RULES_H_
#define UTILITYD_ENGINE_SRC_SCORING_SCORING_RULES_H_

#include <algorithm>
#include <cmath>

#include "curves/curve_kernels.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine::internal {

// Bookends: where the raw value sits between the range's ends, in 0..1.
inline float Normalise(float raw, float lo, float span) {
  return Clamp01((raw - lo) / span);
}

// The output range rescales the curve: min + (max - min) * curved.
inline float Output(float curved, float out_min, float out_span) {
  return out_min + out_span * curved;
}

// A weighted consideration in the product or the minimum (seed 003):
// output * w + (1 - w), so weight 0 makes it neutral.
inline float Contribution(float output, float weight) {
  return output * weight + (1.0f - weight);
}

// A consideration's share of the weighted sum, before dividing by the
// weights' total.
inline float WeightedContribution(float output, float weight) {
  return output * weight;
}

// The weighted sum's average; an action whose weights are all 0 scores 1.
inline float WeightedAverage(float sum, float weight_sum) {
  return weight_sum > 0 ? sum / weight_sum : 1.0f;
}

// Seed 003's geometric mean: pow(p, 1 / max(1, n / 2)).
inline float GeometricMeanExponent(int n) {
  return 1.0f / std::max(1.0f, static_cast<float>(n) * 0.5f);
}

// While an action cools down its score scales with the time since it ran.
inline float CooldownFactor(float since, float cooldown) {
  return since < cooldown ? std::max(0.0f, since) / cooldown : 1.0f;
}

// The running action, or (per target) the running action on its target;
// kAnyTarget makes every target of the running action current.
inline bool IsCurrent(int current_action, int current_target, int action,
                      int target) {
  return action == current_action &&
         (target < 0 || current_target == kAnyTarget ||
          target == current_target);
}

// A candidate may be chosen when it scored above 0 and reached min_score.
inline bool Eligible(float score, float min_score) {
  return score > 0.0f && score >= min_score;
}

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_SCORING_SCORING_RULES_H_
