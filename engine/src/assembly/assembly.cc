// Validate and Compile: the set's own parts, then its tree. The one place
// that knows both rooms; the set room never calls the tree compiler.
#include "set/flat_set.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {

std::vector<ValidationIssue> Validate(const SetDefinition& def) {
  std::vector<ValidationIssue> issues = internal::ValidateFlat(def);
  ValidateTree(def, &issues);
  return issues;
}

absl::StatusOr<CompiledBehaviourSet> Compile(const SetDefinition& def) {
  if (absl::Status s = internal::IssuesStatus(Validate(def)); !s.ok()) {
    return s;
  }
  absl::StatusOr<CompiledBehaviourSet> set = internal::CompileFlat(def);
  if (!set.ok() || !def.tree) return set;
  absl::StatusOr<std::shared_ptr<const CompiledTree>> tree =
      CompileTree(def, *set);
  if (!tree.ok()) return tree.status();
  internal::AttachTree(*set, *std::move(tree));
  return set;
}

}  // namespace utilityd::engine
