// The scoring rules of docs/SCORING.md, each written once, as the engine
// computes them (float arithmetic, in this order). The engine's column
// loops and traces call these; so do the layers that reason about scores
// without deciding (analysis/, the inspector's numbers through the API), so
// that nothing above the engine restates a rule.
//
//   const CompiledConsideration& c = set.considerations()[k];
//   float out = ConsiderationOutput(c, raw, set.curve_points());
//   float s = Contribution(out, c.weight);            // product or min
//   if (per_consideration) s = CompensateFactor(s, n);
#ifndef UTILITYD_ENGINE_SCORING_RULES_H_
#define UTILITYD_ENGINE_SCORING_RULES_H_

#include <algorithm>

#include "absl/types/span.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/curve.h"

namespace utilityd::engine {

// The target of a running action when every target counts as current.
inline constexpr int kAnyTarget = -1;

// Clamps to 0..1; NaN maps to 0.
[[nodiscard]] inline float Clamp01(float x) {
  return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
}

// Bookends: where the raw value sits between the range's ends, in 0..1.
[[nodiscard]] inline float Normalise(float raw, float lo, float span) {
  return Clamp01((raw - lo) / span);
}

// The output range rescales the curve: min + (max - min) * curved.
[[nodiscard]] inline float Output(float curved, float out_min, float out_span) {
  return out_min + out_span * curved;
}

// A consideration's output for a raw factor value: bookends, curve, output
// range. (A non-finite raw value is the caller's: the engine vetoes it.)
[[nodiscard]] inline float ConsiderationOutput(
    const CompiledConsideration& c, float raw,
    absl::Span<const CurvePoint> points) {
  return Output(
      EvaluateCurve(c.curve, Normalise(raw, c.range_lo, c.range_span), points),
      c.output_min, c.output_span);
}

// A weighted consideration in the product or the minimum (seed 003):
// output * w + (1 - w), so weight 0 makes it neutral.
[[nodiscard]] inline float Contribution(float output, float weight) {
  return output * weight + (1.0f - weight);
}

// A consideration's share of the weighted sum, before dividing by the
// weights' total.
[[nodiscard]] inline float WeightedContribution(float output, float weight) {
  return output * weight;
}

// The weighted sum's average; an action whose weights are all 0 scores 1.
[[nodiscard]] inline float WeightedAverage(float sum, float weight_sum) {
  return weight_sum > 0 ? sum / weight_sum : 1.0f;
}

// Dave Mark's compensation (seed 004) of one value for n considerations:
// s + (1 - s)(1 - 1/n)s, increasing in s on 0..1, 0 and 1 fixed. The
// modifier (1 - 1/n) is computed once per action.
[[nodiscard]] inline float CompensationModifier(int n) {
  return 1.0f - 1.0f / static_cast<float>(n);
}
[[nodiscard]] inline float Compensate(float s, float modifier) {
  return s + (1.0f - s) * modifier * s;
}
[[nodiscard]] inline float CompensateFactor(float s, int n) {
  return Compensate(s, CompensationModifier(n));
}

// Seed 003's geometric mean of an action's product p over n
// considerations: pow(p, 1 / max(1, n / 2)), increasing in p.
[[nodiscard]] inline float GeometricMeanExponent(int n) {
  return 1.0f / std::max(1.0f, static_cast<float>(n) * 0.5f);
}
// pow(p, GeometricMeanExponent(n)) in the engine's own maths: the same
// bits on every machine and SIMD target.
[[nodiscard]] float GeometricMean(float p, int n);

// What the compensation does to an action's aggregate over n
// considerations after they are combined (on_product, geometric_mean);
// the aggregate itself for the others (per_consideration is inside the
// product). `compensation` is the compiled set's (never kDefault).
[[nodiscard]] inline float CompensateAggregate(Compensation compensation,
                                               float aggregate, int n) {
  switch (compensation) {
    case Compensation::kOnProduct:
      return n > 0 ? CompensateFactor(aggregate, n) : aggregate;
    case Compensation::kGeometricMean:
      return GeometricMean(aggregate, n);
    default:
      return aggregate;
  }
}

// The running action's multiplier: 1 + commitment_bonus.
[[nodiscard]] inline float CommitmentFactor(double bonus) {
  return 1.0f + static_cast<float>(bonus);
}

// While an action cools down its score scales with the time since it ran.
[[nodiscard]] inline float CooldownFactor(float since, float cooldown) {
  return since < cooldown ? std::max(0.0f, since) / cooldown : 1.0f;
}

// The running action, or (per target) the running action on its target;
// kAnyTarget makes every target of the running action current.
[[nodiscard]] inline bool IsCurrent(int current_action, int current_target,
                                    int action, int target) {
  return action == current_action &&
         (target < 0 || current_target == kAnyTarget ||
          target == current_target);
}

// A candidate may be chosen when it scored above 0 and reached min_score.
[[nodiscard]] inline bool Eligible(float score, float min_score) {
  return score > 0.0f && score >= min_score;
}

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_SCORING_RULES_H_
