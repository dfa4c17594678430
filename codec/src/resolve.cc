// Resolving a snapshot into engine input: factors packed or named, the
// current action and target, cooldown clocks, the personality.
#include "utilityd/codec/resolve.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "target_id.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/batch.h"
#include "utilityd/engine/error_reason.h"

namespace utilityd::codec {
namespace {

constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();

std::vector<std::string> FactorNames(
    const std::vector<engine::FactorDefinition>& fs) {
  std::vector<std::string> names;
  for (const auto& f : fs) names.push_back(f.name);
  return names;
}

// Returns `unknown <what> "<name>" in <set>` and a hint.
std::string UnknownName(absl::string_view what, const std::string& name,
                        const std::vector<std::string>& known,
                        absl::string_view set_name) {
  std::string message = engine::UnknownNameMessage(what, name, known);
  const size_t name_end = message.find('"', message.find('"') + 1);
  message.insert(name_end + 1, absl::StrCat(" in ", set_name));
  return message;
}

std::vector<std::string> ActionNames(const engine::CompiledBehaviourSet& set) {
  std::vector<std::string> names;
  for (const auto& a : set.actions()) names.push_back(a.name);
  return names;
}

// Appends one agent's factor values (`target` < 0) or one target's
// (`target` = its index) to `out`, in declared order, from packed values or
// names. Names are looked up in the set's index; error text is built only
// when something is wrong.
absl::Status ResolveFactors(
    const google::protobuf::RepeatedField<float>& packed,
    const google::protobuf::Map<std::string, float>& named,
    const engine::CompiledBehaviourSet& set, int target,
    std::vector<float>* out) {
  const std::vector<engine::FactorDefinition>& declared =
      target >= 0 ? set.target_factors() : set.factors();
  auto path = [target](absl::string_view field) {
    return target >= 0 ? absl::StrCat("targets[", target, "].", field)
                       : std::string(field);
  };
  auto invalid = [&](engine::ErrorReason reason, absl::string_view field,
                     absl::string_view detail) {
    return engine::FieldError(absl::StatusCode::kInvalidArgument, reason,
                              path(field), detail);
  };
  const size_t base = out->size();
  if (!named.empty()) {
    if (!packed.empty()) {
      return invalid(engine::ErrorReason::kFactorForms, "factors",
                     "give either factors or named_factors, not both");
    }
    out->resize(base + declared.size(), kMissing);
    for (const auto& [name, value] : named) {
      const int i =
          target >= 0 ? set.FindTargetFactor(name) : set.FindFactor(name);
      if (i < 0) {
        return invalid(
            engine::ErrorReason::kUnknownFactor, "named_factors",
            UnknownName("factor", name, FactorNames(declared), set.name()));
      }
      (*out)[base + i] = value;
    }
    // Map keys are distinct and all known, so fewer means some are missing.
    if (named.size() < declared.size()) {
      std::vector<std::string> missing;
      for (const auto& f : declared) {
        if (!named.contains(f.name)) missing.push_back(f.name);
      }
      return invalid(engine::ErrorReason::kMissingFactor, "named_factors",
                     absl::StrCat("missing ", absl::StrJoin(missing, ", "),
                                  " (", set.name(), ")"));
    }
    return absl::OkStatus();
  }
  if (static_cast<size_t>(packed.size()) != declared.size()) {
    return invalid(engine::ErrorReason::kFactorCount, "factors",
                   absl::StrCat("expected ", declared.size(), " values (",
                                set.name(), "), got ", packed.size()));
  }
  out->insert(out->end(), packed.begin(), packed.end());
  return absl::OkStatus();
}

// The agent's own factors: its packed values in place when they fit, else
// resolved into the scratch.
absl::Status ResolveAgentFactors(const engine::CompiledBehaviourSet& set,
                                 const v1::AgentSnapshot& snapshot,
                                 AgentScratch* scratch,
                                 engine::AgentInput* input) {
  if (snapshot.named_factors().empty() &&
      static_cast<size_t>(snapshot.factors_size()) == set.factors().size()) {
    input->factors =
        absl::MakeConstSpan(snapshot.factors().data(), snapshot.factors_size());
    return absl::OkStatus();
  }
  scratch->factors.clear();
  UTILITYD_RETURN_IF_ERROR(ResolveFactors(snapshot.factors(),
                                          snapshot.named_factors(), set,
                                          /*target=*/-1, &scratch->factors));
  input->factors = scratch->factors;
  return absl::OkStatus();
}

// The current action and the seconds since each action ran.
absl::Status ResolveActions(const engine::CompiledBehaviourSet& set,
                            const v1::AgentSnapshot& snapshot,
                            AgentScratch* scratch, engine::AgentInput* input) {
  if (!snapshot.current_action().empty()) {
    input->current_action = set.FindAction(snapshot.current_action());
    if (input->current_action < 0) {
      return engine::FieldError(absl::StatusCode::kNotFound,
                                engine::ErrorReason::kUnknownAction,
                                "current_action",
                                UnknownName("action", snapshot.current_action(),
                                            ActionNames(set), set.name()));
    }
  }
  if (snapshot.seconds_since_action().empty()) return absl::OkStatus();
  scratch->seconds_since_action.assign(set.action_count(), engine::kNeverRan);
  for (const auto& [name, seconds] : snapshot.seconds_since_action()) {
    const int a = set.FindAction(name);
    if (a < 0) {
      return engine::FieldError(
          absl::StatusCode::kNotFound, engine::ErrorReason::kUnknownAction,
          "seconds_since_action",
          UnknownName("action", name, ActionNames(set), set.name()));
    }
    scratch->seconds_since_action[a] =
        std::isnan(seconds) ? engine::kNeverRan : seconds;
  }
  input->seconds_since_action = scratch->seconds_since_action;
  return absl::OkStatus();
}

// The targets and which of them is the current one.
absl::Status ResolveTargets(const engine::CompiledBehaviourSet& set,
                            const v1::AgentSnapshot& snapshot,
                            AgentScratch* scratch, engine::AgentInput* input) {
  scratch->target_values.clear();
  scratch->targets.clear();
  if (snapshot.targets_size() > kMaxTargetsPerAgent) {
    return engine::FieldError(
        absl::StatusCode::kInvalidArgument, engine::ErrorReason::kOutOfRange,
        "targets",
        absl::StrCat(snapshot.targets_size(),
                     " targets; an agent may have at most ",
                     kMaxTargetsPerAgent));
  }
  input->current_target = engine::kAnyTarget;
  if (!snapshot.current_target().empty())
    input->current_target = engine::kTargetGone;
  const size_t width = set.target_factors().size();
  // A target's packed values of the right count are used in place, as the
  // agent's are; the others are resolved into target_values. Spans into
  // that vector are taken after all values are in place (it may move):
  // until then a resolved target's span holds its offset.
  bool resolved = false;
  for (int t = 0; t < snapshot.targets_size(); ++t) {
    const v1::TargetSnapshot& target = snapshot.targets(t);
    if (target.named_factors().empty() &&
        static_cast<size_t>(target.factors_size()) == width) {
      scratch->targets.push_back({absl::MakeConstSpan(
          target.factors().data(), static_cast<size_t>(width))});
    } else {
      const size_t offset = scratch->target_values.size();
      UTILITYD_RETURN_IF_ERROR(ResolveFactors(target.factors(),
                                              target.named_factors(), set, t,
                                              &scratch->target_values));
      scratch->targets.push_back({absl::Span<const float>(nullptr, offset)});
      resolved = true;
    }
    if (!snapshot.current_target().empty() &&
        target.target_id() == snapshot.current_target()) {
      input->current_target = t;
    }
  }
  if (resolved) {
    for (engine::TargetInput& target : scratch->targets) {
      if (target.factors.data() != nullptr) continue;
      target.factors = absl::MakeConstSpan(
          scratch->target_values.data() + target.factors.size(), width);
    }
  }
  input->targets = scratch->targets;
  return absl::OkStatus();
}

absl::Status ResolvePersonality(const engine::CompiledBehaviourSet& set,
                                const v1::AgentSnapshot& snapshot,
                                engine::AgentInput* input) {
  if (snapshot.personality().empty()) return absl::OkStatus();
  input->personality = set.FindPersonality(snapshot.personality());
  if (input->personality >= 0) return absl::OkStatus();
  std::vector<std::string> names;
  for (int p = 0; p < set.personality_count(); ++p) {
    names.push_back(set.personality_name(p));
  }
  return engine::FieldError(
      absl::StatusCode::kNotFound, engine::ErrorReason::kUnknownPersonality,
      "personality",
      UnknownName("personality", snapshot.personality(), names, set.name()));
}

}  // namespace

absl::Status ResolveAgent(const loader::LoadedSet& loaded,
                          const v1::AgentSnapshot& snapshot,
                          AgentScratch* scratch, engine::AgentInput* input,
                          const loader::LoadedSet* revision_of) {
  const engine::CompiledBehaviourSet& set = loaded.compiled;
  const std::string& revision =
      (revision_of != nullptr ? *revision_of : loaded).revision();
  if (!snapshot.expected_revision().empty() &&
      snapshot.expected_revision() != revision) {
    return engine::FieldError(
        absl::StatusCode::kFailedPrecondition,
        engine::ErrorReason::kStaleRevision, "expected_revision",
        absl::StrCat(set.name(), " is at revision ", revision,
                     ", the agent expects ", snapshot.expected_revision(),
                     " (refresh the factor order with GetBehaviourSet)"));
  }
  *input = engine::AgentInput{};
  UTILITYD_RETURN_IF_ERROR(ResolveAgentFactors(set, snapshot, scratch, input));
  UTILITYD_RETURN_IF_ERROR(ResolveActions(set, snapshot, scratch, input));
  UTILITYD_RETURN_IF_ERROR(ResolveTargets(set, snapshot, scratch, input));
  input->seed = snapshot.seed();
  return ResolvePersonality(set, snapshot, input);
}

engine::ExplainLevel ToExplainLevel(v1::Explain explain) {
  switch (explain) {
    case v1::EXPLAIN_TOP:
      return engine::ExplainLevel::kTop;
    case v1::EXPLAIN_FULL:
      return engine::ExplainLevel::kFull;
    default:
      return engine::ExplainLevel::kNone;
  }
}

const std::string& TargetId(const v1::AgentSnapshot& snapshot, int t) {
  static const std::string* const kNone = new std::string();
  return t >= 0 && t < snapshot.targets_size() ? snapshot.targets(t).target_id()
                                               : *kNone;
}

}  // namespace utilityd::codec
