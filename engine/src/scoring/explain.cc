#include "utilityd/engine/explain.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace utilityd::engine {

std::string VetoText(const CompiledBehaviourSet& set,
                     const CandidateTrace& candidate) {
  const CompiledAction& action = set.actions()[candidate.action];
  auto consideration = [&]() -> const std::string& {
    return set
        .considerations()[action.first_consideration + candidate.vetoed_by]
        .name;
  };
  switch (candidate.veto) {
    case VetoReason::kNone:
      return "";
    case VetoReason::kConsideration:
      return absl::StrCat("vetoed by ", consideration());
    case VetoReason::kInvalidInput:
      return absl::StrCat("invalid input in ", consideration());
    case VetoReason::kNoTargets:
      return "no targets";
  }
  return "";
}

std::string FormatSummary(const CompiledBehaviourSet& set,
                          const Decision& decision,
                          absl::Span<const std::string> target_ids) {
  std::string line;
  for (const CandidateTrace& c : decision.candidates) {
    if (!line.empty()) line += " | ";
    const CompiledAction& action = set.actions()[c.action];
    const bool winner =
        c.action == decision.action && c.target == decision.target;
    absl::StrAppend(&line, winner ? "*" : "", action.name);
    if (c.target >= 0 && static_cast<size_t>(c.target) < target_ids.size()) {
      absl::StrAppend(&line, "@", target_ids[c.target]);
    }
    absl::StrAppend(&line, absl::StrFormat(" %.2f", c.score));
    if (c.veto != VetoReason::kNone)
      absl::StrAppend(&line, " ", VetoText(set, c));
    if (c.veto == VetoReason::kNoTargets || action.consideration_count == 0) {
      continue;
    }
    line += " [";
    for (uint32_t k = 0; k < action.consideration_count; ++k) {
      const size_t t = c.first_trace + k;
      if (t >= decision.considerations.size()) break;
      const ConsiderationTrace& tr = decision.considerations[t];
      if (k > 0) line += ", ";
      const std::string& name =
          set.considerations()[action.first_consideration + k].name;
      if (tr.invalid_input) {
        absl::StrAppend(&line, name, " invalid");
      } else {
        absl::StrAppend(&line, absl::StrFormat("%s %.2f→%.2f", name,
                                               tr.normalised, tr.contribution));
      }
    }
    line += "]";
  }
  return line;
}

}  // namespace utilityd::engine
