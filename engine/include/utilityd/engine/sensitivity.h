// What would change a decision: for each factor of an agent, the nearest
// value below and above the current one at which the winner changes, with
// every other input held fixed, and what wins there.
//
//   SensitivityAnalyser analyser;               // reuse: keeps its buffers
//   std::vector<FactorSensitivity> result;
//   absl::Status s = analyser.Analyse(set, input, &result);
//   // result[k].below.found: below.value is the highest value under the
//   // current one at which (below.action, below.target) wins instead.
//
// How: the agent is decided again through the engine's one scoring path
// (BatchDecider), so commitment, cooldowns, ranks, the fallback and a
// random strategy's draw (the same seed) all count exactly as in a real
// decision. Along each direction, from the current value to the edge of
// the scanned range, a batch decides kScanSteps evenly spaced values plus
// each consideration's breakpoints (its bookends, a step's threshold, a
// piecewise curve's points, a normal's mean, a logistic's midpoint, a
// sine's peaks and zeros, where a linear curve meets 0 and 1) and the float
// just past each. The first value whose winner differs brackets the
// change, and bisection over the floats between (by their bit order)
// narrows it to two adjacent floats: `value` is the first float at which
// the winner differs, exact to the factor's float resolution.
//
// The scanned range is the union of the factor's declared min..max and the
// bookends of every consideration that reads it: beyond those every
// consideration is clamped, so nothing can change. A change that happens
// and undoes itself between two scan points (a window narrower than
// 1/kScanSteps of the range, away from every breakpoint) is not seen; the
// tests compare with a dense sweep of 4,096 points per direction.
#ifndef UTILITYD_ENGINE_SENSITIVITY_H_
#define UTILITYD_ENGINE_SENSITIVITY_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine {

// The nearest change in one direction.
struct Crossing {
  bool found = false;  // false: no change within the scanned range
  float value = 0;     // the first value at which the winner differs
  // What wins at `value`: action -1 when nothing is eligible and the set
  // has no fallback; target -1 unless the action is per-target.
  int32_t action = -1;
  int32_t target = -1;
};

struct FactorSensitivity {
  int32_t factor = -1;  // index into the set's factors or target_factors
  // A target factor of the winning target (index `target`), else an agent
  // factor (target -1).
  bool target_factor = false;
  int32_t target = -1;
  float current = 0;    // the value the agent sent
  float range_min = 0;  // the scanned range
  float range_max = 0;
  Crossing below, above;
};

class SensitivityAnalyser {
 public:
  // Evenly spaced values decided per direction before bisection.
  static constexpr int kScanSteps = 256;

  // Decides `input` and fills `out` with one entry per agent factor of
  // `set`, in the set's order, then, when the winner is a per-target
  // candidate, one per target factor of its target. A factor that no
  // consideration reads, or whose current value is NaN or infinite, gets
  // no crossing. INVALID_ARGUMENT when `input` does not fit `set`;
  // FAILED_PRECONDITION for a set with a behaviour tree (a tick is a path
  // through nodes, not one winner among candidates).
  [[nodiscard]] absl::Status Analyse(const CompiledBehaviourSet& set,
                                     const AgentInput& input,
                                     std::vector<FactorSensitivity>* out);

 private:
  struct Winner {
    int32_t action = -1;
    int32_t target = -1;
    bool operator==(const Winner&) const = default;
  };
  // What is being varied: an agent factor, or a target factor of `target`.
  struct Varied {
    bool target_factor = false;
    int32_t factor = -1;
    int32_t target = -1;
  };

  // Decides `input` with the varied factor at each of `values`.
  void Winners(const CompiledBehaviourSet& set, const AgentInput& input,
               const Varied& varied, absl::Span<const float> values,
               std::vector<Winner>* winners);
  // The nearest change from `from` towards `edge`, which lies in
  // `direction` (-1 below, +1 above); not found when it does not.
  Crossing Search(const CompiledBehaviourSet& set, const AgentInput& input,
                  const Varied& varied, float from, float edge, int direction,
                  Winner now, absl::Span<const float> breakpoints);

  BatchDecider decider_;
  std::vector<float> agent_values_, target_values_, samples_, breakpoints_;
  std::vector<double> curve_breakpoints_;  // one curve's, normalised
  std::vector<TargetInput> targets_;
  std::vector<AgentInput> inputs_;
  std::vector<BatchDecision> out_;
  std::vector<Winner> winners_;
};

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_SENSITIVITY_H_
