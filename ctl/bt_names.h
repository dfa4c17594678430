// The vocabulary the BehaviorTree.CPP import and export share (docs/
// TREES.md, "BehaviorTree.CPP XML"): utilityd's own node types in the
// XML, BT.CPP's built-ins with their utilityd kinds or why there is none,
// blackboard keys, and factor comparisons as condition nodes.
#ifndef UTILITYD_CTL_BT_NAMES_H_
#define UTILITYD_CTL_BT_NAMES_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tinyxml2.h"
#include "utilityd/engine/definition.h"
#include "utilityd/engine/script.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::ctl {

// utilityd's own node types in the XML: the export writes them, the import
// reads them back.
inline constexpr char kUtility[] = "Utility";
inline constexpr char kUtilityChoice[] = "UtilityChoice";
inline constexpr char kCooldown[] = "Cooldown";
inline constexpr char kFactorCondition[] = "FactorCondition";

// utilityd's defaults of node parameters (definition.h), which the format
// leaves out when unset: never restated here.
inline const engine::TreeNodeDefinition& NodeDefaults() {
  static const auto* d = new engine::TreeNodeDefinition();
  return *d;
}

// BehaviorTree.CPP's own defaults of its ports (Parallel's counts).
inline constexpr int kBtSuccessCount = -1;
inline constexpr int kBtFailureCount = 1;

// BT.CPP's built-ins without a counterpart, each with why.
const std::map<std::string, std::string>& Unsupported();

// BT.CPP's controls with children, its decorators with one child and its
// leaves that take no parameters, by BT.CPP name -> utilityd kind.
const std::map<std::string, std::string>& ChildrenKinds();
const std::map<std::string, std::string>& ChildKinds();
const std::map<std::string, std::string>& LeafKinds();

// BT.CPP 4's pre- and postcondition attributes (any node's), in its
// order: the TreeNode field each is, and what its script may hold.
struct ScriptAttr {
  const char* attr;
  std::string* (v1::TreeNode::*mutable_field)();
  const std::string& (v1::TreeNode::*field)() const;
  engine::ScriptUse use;
};
const std::array<ScriptAttr, 8>& ScriptAttrs();

// "{key}" -> "key" ("{@key}", BT.CPP's root blackboard, too); nullopt for
// a literal.
std::optional<std::string> BlackboardKey(absl::string_view v);

// The condition node for a comparison: bookends 1 either side of the
// constant (reversed for <= and >), a step at the middle, inverted for the
// strict ones; exact wherever `factor - constant` is (docs/TREES.md).
void SetComparison(const engine::FactorComparison& c, v1::ConditionNode* n);

// The comparison a condition node stands for, when it is one that
// SetComparison writes.
std::optional<engine::FactorComparison> AsComparison(
    const v1::ConditionNode& n);

// A subtree port's literal as a script reads it: a number (negative ones
// in parentheses), true, false or an identifier (an enum's name); nullopt
// for anything else (strings, lists).
std::optional<std::string> Literal(absl::string_view raw);

// BT.CPP's name `raw` as a utilityd identifier: each run of characters
// other than letters, digits, '_' and '-' becomes one '_', and a name not
// starting with a letter gets an 'n' in front ("Main Tree" -> Main_Tree).
std::string AsIdentifier(absl::string_view raw);

// The IDs (of `ids`, one for each <BehaviorTree> of `trees`, as
// AsIdentifier makes them) that no other tree names in a <SubTree ID>, in
// their order: the trees at the top.
std::vector<std::string> TopTrees(
    const std::vector<const tinyxml2::XMLElement*>& trees,
    const std::vector<std::string>& ids);

// A status BT.CPP lets a node answer in place of ticking ("SUCCESS",
// "FAILURE", "SKIPPED": a Precondition's else, a loop's if_empty);
// nullopt for any other (RUNNING, IDLE, a typo).
std::optional<v1::NodeStatus> AnsweredStatus(absl::string_view name);
// The name of such a status, as BT.CPP writes it.
const char* AnsweredStatusName(v1::NodeStatus status);

// The numbers of a LoopInt, LoopDouble or LoopBool (`id`) queue written in
// the XML ("1;2;3", "true;false": 1 and 0), appended to `values`; else what
// is wrong with the first value that is not one.
std::optional<std::string> LoopValues(absl::string_view id,
                                      absl::string_view queue,
                                      std::vector<double>* values);

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_BT_NAMES_H_
