// The contract every node-kind block is written against (node_kinds.h
// lists its members): what a kind's Validate and Compile see, the helpers
// the blocks share, and NodeBase, the defaults every block starts from.
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_NODE_KIND_CONTRACT_H_
#define UTILITYD_ENGINE_SRC_TREE_NODE_KIND_CONTRACT_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "set/flat_set.h"
#include "tree/state_codec.h"
#include "tree/ticker.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/node_traits.h"
#include "utilityd/engine/random.h"
#include "utilityd/engine/scoring_rules.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine::internal {

using S = NodeStatus;

// What a kind's Validate sees: the node's place and a way to report.
struct NodeCheck {
  const SetDefinition& def;
  const std::string& at;    // the node, e.g. "tree.sequence.children[1]"
  const std::string& kind;  // at + "." + its kind's name
  NodeKind parent;          // the root's parent counts as a sequence
  std::vector<ValidationIssue>* issues;

  void Add(std::string path, std::string message) const {
    issues->push_back({std::move(path), std::move(message)});
  }
};

// What a kind's Compile sees: the definition, the compiled flat set (for
// action and factor indices) and the tree being built (for curve points).
struct NodeCompile {
  const SetDefinition& def;
  const CompiledBehaviourSet& set;
  CompiledTree& tree;
  const std::string& at;
};

// Helpers the blocks share (tree_compile.cc).
// The field path of child `i` of the node at `at`, as the format writes it:
// "tree.fallback.children[1]", "tree.inverter.child".
std::string ChildPath(const std::string& at, const TreeNodeDefinition& n,
                      size_t i);
// The name a utility node's child goes by: its label, or its action's name.
std::string ChoiceName(const TreeNodeDefinition& child);
const ActionDefinition* FindActionDef(const SetDefinition& def,
                                      const std::string& name);
// The set a utility node chooses in: its children as actions, with the
// set's factors, scoring, selection (without the fallback) and
// personalities (restricted to these actions).
SetDefinition ChoiceSet(const SetDefinition& def,
                        const TreeNodeDefinition& node);
// The bits of node `n`'s children.
inline uint64_t AllChildren(const CompiledNode& n) {
  return n.child_count >= 64 ? ~0ull : (1ull << n.child_count) - 1;
}

// The defaults every block starts from: no parameters, nothing kept, no
// state fields, nothing to check or compile, nothing extra on halt.
struct NodeBase {
  static constexpr std::array<NodeParam, 0> kParams = {};
  static constexpr bool kKeepsRunningChild = false;
  static constexpr bool kKeepsTimeIdle = false;
  static constexpr bool kKeepsPlaceIdle = false;
  static constexpr bool kAnswersRunning = false;
  static constexpr NodeOrder kOrder = NodeOrder::kNone;
  static constexpr S kGoOn = S::kIdle;
  static constexpr bool kChildEnteredWithIt = false;
  static constexpr size_t kStateBytes = 0;
  static bool MayAnswer(const CompiledNode&, S) { return true; }
  static bool TicksChildren(const CompiledNode&) { return true; }
  static void Validate(const TreeNodeDefinition&, const NodeCheck&) {}
  static absl::Status Compile(const TreeNodeDefinition&, const NodeCompile&,
                              CompiledNode&) {
    return absl::OkStatus();
  }
  static void OnHalt(Ticker&, int) {}
  static Fit Read(const CompiledNode&, Reader&, NodeState*) { return Fit::kOk; }
  static char* Write(const CompiledNode&, const NodeState&, char* at) {
    return at;
  }
};

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_NODE_KIND_CONTRACT_H_
