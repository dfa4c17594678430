// A behaviour set compiled into a flat, immutable form: names resolved to
// indices, bookends and curve constants precomputed, personalities expanded
// into dense tables. Scoring reads only this.
//
//   std::vector<ValidationIssue> issues = Validate(def);   // all problems
//   absl::StatusOr<CompiledBehaviourSet> set = Compile(def);
//   if (!set.ok()) { /* set.status().message() lists every problem */ }
//   int attack = set->FindAction("attack");               // -1 if absent
//
// A CompiledBehaviourSet is immutable after Compile and safe to share between
// threads.
#ifndef UTILITYD_ENGINE_COMPILED_SET_H_
#define UTILITYD_ENGINE_COMPILED_SET_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/engine/curve.h"
#include "utilityd/engine/definition.h"

namespace utilityd::engine {

struct CompiledTree;  // tree.h

// Returns every problem in `def`; empty when it compiles.
[[nodiscard]] std::vector<ValidationIssue> Validate(const SetDefinition& def);

// Returns the closest of `candidates` to `name` by edit distance when it is
// close enough to be a likely typo, else the empty string.
[[nodiscard]] std::string SuggestName(absl::string_view name,
                                      absl::Span<const std::string> candidates);

// Returns `unknown <what> "<name>"` followed by a hint: the likely intended
// name (`(did you mean "health"?)`), or when there is none and `known` is
// short, the list of known names.
[[nodiscard]] std::string UnknownNameMessage(
    absl::string_view what, absl::string_view name,
    absl::Span<const std::string> known);

struct CompiledConsideration {
  std::string name;
  int32_t factor = 0;  // index into agent factors, or target factors
  bool per_target = false;
  float range_lo = 0;    // normalised = clamp((raw - lo) / span)
  float range_span = 1;  // hi - lo; negative for an inverted range
  CompiledCurve curve;
  float output_min = 0;  // output = min + span * curved
  float output_span = 1;
  float weight = 1;   // contribution = output * w + (1 - w)
  bool gate = false;  // 0 or 1; not counted in the compensation's n
};

struct CompiledResource {
  std::string name;
  bool per_target = false;
  int32_t capacity = 1;
  float preemption_margin = std::numeric_limits<float>::infinity();  // off
};

struct CompiledUse {
  int32_t resource = 0;  // index into resources()
  int32_t amount = 1;
};

struct CompiledAction {
  std::string name;
  uint32_t first_consideration = 0;
  uint32_t consideration_count = 0;
  // The compensation's n: the considerations that are not gates.
  uint32_t compensated_count = 0;
  // Its resource uses: uses()[first_use .. first_use + use_count).
  uint32_t first_use = 0;
  uint32_t use_count = 0;
  float weight = 1;
  int32_t rank = 0;
  float cooldown_seconds = 0;
  bool per_target = false;
};

class CompiledBehaviourSet {
 public:
  const std::string& name() const { return name_; }
  const std::string& revision() const { return revision_; }
  Aggregation aggregation() const { return aggregation_; }
  // Resolved compensation (never kDefault).
  Compensation compensation() const { return compensation_; }
  const SelectionDefinition& selection() const { return selection_; }
  int fallback_action() const { return fallback_action_; }

  int factor_count() const { return static_cast<int>(factors_.size()); }
  int target_factor_count() const {
    return static_cast<int>(target_factors_.size());
  }
  const std::vector<FactorDefinition>& factors() const { return factors_; }
  const std::vector<FactorDefinition>& target_factors() const {
    return target_factors_;
  }
  int action_count() const { return static_cast<int>(actions_.size()); }
  const std::vector<CompiledAction>& actions() const { return actions_; }
  const std::vector<CompiledConsideration>& considerations() const {
    return considerations_;
  }
  absl::Span<const CurvePoint> curve_points() const { return curve_points_; }
  bool has_per_target_actions() const { return has_per_target_actions_; }

  int personality_count() const {
    return static_cast<int>(personality_names_.size());
  }
  const std::string& personality_name(int p) const {
    return personality_names_[p];
  }
  // Multiplier on action `a`'s weight under personality `p`.
  float personality_action_weight(int p, int a) const {
    return personality_action_weights_[static_cast<size_t>(p) *
                                           actions_.size() +
                                       a];
  }
  // Weight of consideration `c` (global index) under personality `p`.
  float personality_consideration_weight(int p, int c) const {
    return personality_consideration_weights_[static_cast<size_t>(p) *
                                                  considerations_.size() +
                                              c];
  }

  // Coordination: the resources, and every action's uses.
  const std::vector<CompiledResource>& resources() const { return resources_; }
  absl::Span<const CompiledUse> uses(int action) const {
    const CompiledAction& a = actions_[action];
    return absl::MakeConstSpan(uses_).subspan(a.first_use, a.use_count);
  }
  bool has_resources() const { return !resources_.empty(); }

  // The set's behaviour tree, or nullptr for a flat set.
  const CompiledTree* tree() const { return tree_.get(); }

  // Each returns the index of the named item, or -1 when there is none.
  int FindFactor(absl::string_view name) const;
  int FindTargetFactor(absl::string_view name) const;
  int FindAction(absl::string_view name) const;
  int FindPersonality(absl::string_view name) const;

 private:
  // Compile's steps (set/compiled_set.cc).
  friend struct SetCompiler;

  std::string name_;
  std::string revision_;
  Aggregation aggregation_ = Aggregation::kProduct;
  Compensation compensation_ = Compensation::kPerConsideration;
  SelectionDefinition selection_;
  int fallback_action_ = -1;
  std::vector<FactorDefinition> factors_;
  std::vector<FactorDefinition> target_factors_;
  std::vector<CompiledAction> actions_;
  std::vector<CompiledConsideration> considerations_;
  std::vector<CurvePoint> curve_points_;
  std::vector<CompiledResource> resources_;
  std::vector<CompiledUse> uses_;
  bool has_per_target_actions_ = false;
  std::vector<std::string> personality_names_;
  std::vector<float> personality_action_weights_;
  std::vector<float> personality_consideration_weights_;
  std::shared_ptr<const CompiledTree> tree_;
  absl::flat_hash_map<std::string, int> factor_index_;
  absl::flat_hash_map<std::string, int> target_factor_index_;
  absl::flat_hash_map<std::string, int> action_index_;
  absl::flat_hash_map<std::string, int> personality_index_;
};

// Validates and compiles `def`. On failure returns INVALID_ARGUMENT whose
// message has one "path: problem" line per issue.
[[nodiscard]] absl::StatusOr<CompiledBehaviourSet> Compile(
    const SetDefinition& def);

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_COMPILED_SET_H_
