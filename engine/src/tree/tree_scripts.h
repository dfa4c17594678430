// The scripts of a set's tree (utilityd/engine/script.h): which of a
// node's fields hold one, the tree-local variables they assign, and what
// each name they read stands for. Validation and compilation share it.
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_TREE_SCRIPTS_H_
#define UTILITYD_ENGINE_SRC_TREE_TREE_SCRIPTS_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "utilityd/engine/definition.h"
#include "utilityd/engine/script.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine::internal {

// One script field of a node: its name in the format, the definition's
// member, the compiled node's index member, and what it may hold.
struct ScriptField {
  const char* name;
  std::string TreeNodeDefinition::*text;
  int32_t CompiledNode::*index;
  ScriptUse use;
};

// Every node's script fields, in the format's order (the kind's code is
// handled with the kind).
inline constexpr std::array<ScriptField, 8> kScriptFields = {{
    {"failure_if", &TreeNodeDefinition::failure_if, &CompiledNode::failure_if,
     ScriptUse::kCondition},
    {"success_if", &TreeNodeDefinition::success_if, &CompiledNode::success_if,
     ScriptUse::kCondition},
    {"skip_if", &TreeNodeDefinition::skip_if, &CompiledNode::skip_if,
     ScriptUse::kCondition},
    {"while", &TreeNodeDefinition::while_holds, &CompiledNode::while_holds,
     ScriptUse::kCondition},
    {"on_success", &TreeNodeDefinition::post_success,
     &CompiledNode::post_success, ScriptUse::kStatements},
    {"on_failure", &TreeNodeDefinition::post_failure,
     &CompiledNode::post_failure, ScriptUse::kStatements},
    {"post", &TreeNodeDefinition::post_always, &CompiledNode::post_always,
     ScriptUse::kStatements},
    {"on_halted", &TreeNodeDefinition::post_halted, &CompiledNode::post_halted,
     ScriptUse::kStatements},
}};

// What the `code` of a script or script_condition leaf may hold.
inline ScriptUse CodeUse(NodeKind kind) {
  return kind == NodeKind::kScript ? ScriptUse::kStatements
                                   : ScriptUse::kCondition;
}

class TreeScripts {
 public:
  // Collects the variables of `def`'s tree (scripts that do not scan are
  // left for Compile to report).
  explicit TreeScripts(const SetDefinition& def);

  const std::vector<std::string>& variables() const { return variables_; }

  // What `name` stands for: a variable, else a factor, else an enum;
  // nullopt for none.
  std::optional<ScriptRef> Resolve(absl::string_view name) const;

  // Compiles `text`; the error's message starts with the script's
  // line:column.
  absl::Status Compile(absl::string_view text, ScriptUse use,
                       CompiledScript* out) const;

 private:
  void Collect(const TreeNodeDefinition& n);

  const SetDefinition& def_;
  std::vector<std::string> variables_;
};

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_TREE_SCRIPTS_H_
