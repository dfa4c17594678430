// A behaviour set's tree nodes as messages: the children of any kind, and
// the expansion of `subtree` nodes (docs/TREES.md, "Subtrees").
//
//   std::vector<engine::ValidationIssue> issues;
//   SubtreeUses uses;
//   ExpandSubtrees(&set, &issues, &uses);  // set.tree() has no subtree nodes
//   // later issues of the expanded tree, back to where they were written:
//   std::string at = uses.SourcePath("tree.sequence.children[1].condition");
//   // -> "subtrees[0].tree.condition (in subtree \"patrol\" used at ...)"
#ifndef UTILITYD_LOADER_SUBTREES_H_
#define UTILITYD_LOADER_SUBTREES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "utilityd/engine/definition.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::loader {

// The children of a node, whichever its kind: `children` or `child`.
[[nodiscard]] std::vector<const v1::TreeNode*> ChildrenOf(
    const v1::TreeNode& node);
// The same, to write into (the nodes belong to the mutable `node`).
[[nodiscard]] std::vector<v1::TreeNode*> ChildrenOf(v1::TreeNode* node);

// The path of child `i` of the node at `at`, as the format writes it:
// "tree.fallback.children[1]", "tree.inverter.child".
[[nodiscard]] std::string ChildFieldPath(const std::string& at,
                                         const v1::TreeNode& node, size_t i);

// Where each subtree was expanded: the expanded node's path and the path of
// the subtree's tree in the set.
class SubtreeUses {
 public:
  struct Use {
    std::string at;      // e.g. "tree.sequence.children[2]"
    std::string source;  // e.g. "subtrees[1].tree"
    std::string name;
  };
  void Add(Use use) { uses_.push_back(std::move(use)); }
  // `path` of the expanded tree as the set writes it: inside a subtree's
  // expansion, the path in that subtree; else `path` unchanged.
  [[nodiscard]] std::string SourcePath(absl::string_view path) const;
  // What to add to a message about `path`: " (in subtree "X" used at P)",
  // or "" outside any expansion.
  [[nodiscard]] std::string Note(absl::string_view path) const;

 private:
  const Use* Innermost(absl::string_view path) const;
  std::vector<Use> uses_;
};

// Replaces every `subtree` node of `set`'s tree by a copy of the named
// subtree's tree, its factor names read through the use's remap, and clears
// `set->subtrees()`. Each use's label, considerations, weight and rank (a
// utility node's child) stay on the expanded node. Unknown or unnamed
// subtrees, a subtree that uses itself, remaps to nothing and an expansion
// past engine::kMaxTreeNodes are issues (paths as written in the set).
void ExpandSubtrees(v1::BehaviourSet* set,
                    std::vector<engine::ValidationIssue>* issues,
                    SubtreeUses* uses);

}  // namespace utilityd::loader

#endif  // UTILITYD_LOADER_SUBTREES_H_
