// A set without its tree: what the set room validates and compiles on its
// own. The assembly step (assembly/assembly.cc) adds the tree, which the
// tree room compiles against the flat set; a utility node's choices are a
// flat set of their own. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_SET_FLAT_SET_H_
#define UTILITYD_ENGINE_SRC_SET_FLAT_SET_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/definition.h"

namespace utilityd::engine::internal {

// Every issue of `def` but its tree's.
[[nodiscard]] std::vector<ValidationIssue> ValidateFlat(
    const SetDefinition& def);

// `def` (its tree left out) validated by ValidateFlat and compiled.
[[nodiscard]] absl::StatusOr<CompiledBehaviourSet> CompileFlat(
    const SetDefinition& def);

// OK for no issues; else INVALID_ARGUMENT with one "path: problem" line per
// issue.
[[nodiscard]] absl::Status IssuesStatus(
    const std::vector<ValidationIssue>& issues);

// Gives a compiled set its tree.
void AttachTree(CompiledBehaviourSet& set,
                std::shared_ptr<const CompiledTree> tree);

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_SET_FLAT_SET_H_
