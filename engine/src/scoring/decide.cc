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

absl::Status CheckAgentFields(const CompiledBehaviourSet& set,
                              const AgentInput& in) {
  if (AgentFieldsFit(set, in)) return absl::OkStatus();
  auto out_of_range = [](absl::string_view field, auto&&... detail) {
    return FieldError(absl::StatusCode::kInvalidArgument,
                      ErrorReason::kOutOfRange, field, absl::StrCat(detail...));
  };
  if (in.current_action < -1 || in.current_action >= set.action_count()) {
    return out_of_range("current_action", "index ", in.current_action,
                        " is out of range");
  }
  if (!in.seconds_since_action.empty() &&
      static_cast<int>(in.seconds_since_action.size()) != set.action_count()) {
    return out_of_range("seconds_since_action", "expected ", set.action_count(),
                        " values, got ", in.seconds_since_action.size());
  }
  if (in.personality < -1 || in.personality >= set.personality_count()) {
    return out_of_range("personality", "index ", in.personality,
                        " is out of range");
  }
  if (in.current_target < kTargetGone ||
      in.current_target >= static_cast<int>(in.targets.size())) {
    return out_of_range("current_target", "index ", in.current_target,
                        " is out of range");
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
