#include "utilityd/engine/decide.h"

#include "absl/strings/str_cat.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/error_reason.h"

namespace utilityd::engine {

absl::Status CheckAgentInput(const CompiledBehaviourSet& set,
                             const AgentInput& in) {
  if (static_cast<int>(in.factors.size()) != set.factor_count()) {
    return FieldError(absl::StatusCode::kInvalidArgument,
                      ErrorReason::kFactorCount, "factors",
                      absl::StrCat("expected ", set.factor_count(), " values (",
                                   set.name(), "), got ", in.factors.size()));
  }
  return CheckAgentFields(set, in);
}

namespace {

absl::Status OutOfRange(absl::string_view field, int index) {
  return FieldError(absl::StatusCode::kInvalidArgument,
                    ErrorReason::kOutOfRange, field,
                    absl::StrCat("index ", index, " is out of range"));
}

}  // namespace

absl::Status CheckAgentIndices(const CompiledBehaviourSet& set,
                               int current_action, int personality,
                               int current_target, size_t targets) {
  if (current_action < -1 || current_action >= set.action_count()) {
    return OutOfRange("current_action", current_action);
  }
  if (personality < -1 || personality >= set.personality_count()) {
    return OutOfRange("personality", personality);
  }
  if (current_target < kTargetGone ||
      current_target >= static_cast<int>(targets)) {
    return OutOfRange("current_target", current_target);
  }
  return absl::OkStatus();
}

absl::Status CheckAgentFields(const CompiledBehaviourSet& set,
                              const AgentInput& in) {
  if (AgentFieldsFit(set, in)) return absl::OkStatus();
  if (in.current_action < -1 || in.current_action >= set.action_count()) {
    return OutOfRange("current_action", in.current_action);
  }
  if (!in.seconds_since_action.empty() &&
      static_cast<int>(in.seconds_since_action.size()) != set.action_count()) {
    return FieldError(
        absl::StatusCode::kInvalidArgument, ErrorReason::kOutOfRange,
        "seconds_since_action",
        absl::StrCat("expected ", set.action_count(), " values, got ",
                     in.seconds_since_action.size()));
  }
  if (absl::Status s = CheckAgentIndices(set, in.current_action, in.personality,
                                         in.current_target, in.targets.size());
      !s.ok()) {
    return s;
  }
  for (size_t t = 0; t < in.targets.size(); ++t) {
    if (static_cast<int>(in.targets[t].factors.size()) !=
        set.target_factor_count()) {
      return FieldError(
          absl::StatusCode::kInvalidArgument, ErrorReason::kFactorCount,
          absl::StrCat("targets[", t, "].factors"),
          absl::StrCat("expected ", set.target_factor_count(), " values, got ",
                       in.targets[t].factors.size()));
    }
  }
  return absl::OkStatus();
}

absl::Status Decide(const CompiledBehaviourSet& set, const AgentInput& input,
                    ExplainLevel level, Decision* out) {
  // A batch of one: the decider's working memory is kept per thread, and
  // `out`'s vectors are reused for the trace.
  thread_local BatchDecider decider;
  thread_local std::vector<absl::Status> errors;
  BatchDecision summary;
  decider.Decide(set, absl::MakeConstSpan(&input, 1), level,
                 absl::MakeSpan(&summary, 1), &errors, absl::MakeSpan(out, 1));
  return errors[0];
}

}  // namespace utilityd::engine
