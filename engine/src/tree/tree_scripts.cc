#include "tree/tree_scripts.h"

#include <algorithm>

namespace utilityd::engine::internal {

TreeScripts::TreeScripts(const SetDefinition& def) : def_(def) {
  if (def.tree) Collect(*def.tree);
}

void TreeScripts::Collect(const TreeNodeDefinition& n) {
  auto scan = [this](const std::string& text, ScriptUse use) {
    ScriptNames names;
    if (text.empty() || !ScanScript(text, use, &names).ok()) return;
    for (std::string& v : names.assigned) {
      // A factor or an enum stays one: assigning it is an error there.
      const std::optional<ScriptRef> r = Resolve(v);
      if (!r) variables_.push_back(std::move(v));
    }
  };
  if (n.kind == NodeKind::kScript) scan(n.code, ScriptUse::kStatements);
  if (n.kind == NodeKind::kLoop && !n.variable.empty() &&
      !Resolve(n.variable)) {
    variables_.push_back(n.variable);  // a factor's name is reported
  }
  for (const ScriptField& f : kScriptFields) {
    if (f.use == ScriptUse::kStatements) scan(n.*f.text, f.use);
  }
  for (const TreeNodeDefinition& child : n.children) Collect(child);
}

std::optional<ScriptRef> TreeScripts::Resolve(absl::string_view name) const {
  for (size_t i = 0; i < variables_.size(); ++i) {
    if (variables_[i] == name) {
      return ScriptRef{.kind = ScriptRef::Kind::kVariable,
                       .index = static_cast<int32_t>(i)};
    }
  }
  for (size_t i = 0; i < def_.factors.size(); ++i) {
    if (def_.factors[i].name == name) {
      return ScriptRef{.kind = ScriptRef::Kind::kFactor,
                       .index = static_cast<int32_t>(i)};
    }
  }
  for (const auto& [enum_name, value] : def_.enums) {
    if (enum_name == name) {
      return ScriptRef{.kind = ScriptRef::Kind::kConstant,
                       .value = static_cast<double>(value)};
    }
  }
  return std::nullopt;
}

absl::Status TreeScripts::Compile(absl::string_view text, ScriptUse use,
                                  CompiledScript* out) const {
  // Syntax first: a script that does not scan assigns no variable, so its
  // names would otherwise be reported unknown instead of what is wrong.
  if (absl::Status s = ScanScript(text, use, nullptr); !s.ok()) return s;
  return CompileScript(
      text, use, [this](absl::string_view name) { return Resolve(name); }, out);
}

}  // namespace utilityd::engine::internal
