#include "utilityd/loader/subtrees.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/script.h"

namespace utilityd::loader {
namespace {

using google::protobuf::FieldDescriptor;

const FieldDescriptor* KindOf(const v1::TreeNode& node) {
  return node.GetReflection()->GetOneofFieldDescriptor(
      node, v1::TreeNode::descriptor()->FindOneofByName("kind"));
}

// The remaps of the uses a node is inside, innermost last: a factor name
// is read through each, from the innermost out.
using RemapChain =
    std::vector<const google::protobuf::Map<std::string, std::string>*>;

std::string Resolve(const RemapChain& chain, const std::string& name) {
  std::string out = name;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    auto hit = (*it)->find(out);
    if (hit != (*it)->end()) out = hit->second;
  }
  return out;
}

void RemapConsiderations(const RemapChain& chain, v1::TreeNode* node) {
  for (v1::Consideration& c : *node->mutable_considerations()) {
    c.set_factor(Resolve(chain, c.factor()));
  }
}

// A script's names read through the remaps: factors and the tree's
// variables alike (BT.CPP's ports remap blackboard entries, whichever
// writes them).
void RemapScript(const RemapChain& chain, std::string* text) {
  if (text->empty() || chain.empty()) return;
  *text = engine::RenameScript(*text, [&chain](absl::string_view name) {
    return Resolve(chain, std::string(name));
  });
}

// A node's scripts: preconditions, postconditions and a script leaf's code.
std::vector<std::string*> Scripts(v1::TreeNode* node) {
  std::vector<std::string*> out = {
      node->mutable_failure_if(), node->mutable_success_if(),
      node->mutable_skip_if(),    node->mutable_while_(),
      node->mutable_on_success(), node->mutable_on_failure(),
      node->mutable_post(),       node->mutable_on_halted()};
  if (node->has_script()) out.push_back(node->mutable_script());
  if (node->has_script_condition()) {
    out.push_back(node->mutable_script_condition());
  }
  return out;
}

class Expander {
 public:
  Expander(const v1::BehaviourSet& set,
           std::vector<engine::ValidationIssue>* issues, SubtreeUses* uses)
      : set_(set), issues_(issues), uses_(uses) {
    for (int i = 0; i < set.subtrees_size(); ++i) {
      const std::string& name = set.subtrees(i).name();
      const std::string at = absl::StrCat("subtrees[", i, "]");
      if (name.empty()) {
        Add(at + ".name", "is required");
      } else if (!index_.emplace(name, i).second) {
        Add(at + ".name", absl::StrCat("repeats subtree \"", name, "\""));
      }
      names_.push_back(name);
      if (!set.subtrees(i).has_tree()) Add(at + ".tree", "is required");
    }
  }

  void Walk(v1::TreeNode* node, const std::string& at, RemapChain& chain) {
    if (++nodes_ > engine::kMaxTreeNodes) {
      if (nodes_ == engine::kMaxTreeNodes + 1) {
        Add(at, absl::StrCat("the tree, its subtrees expanded, has more than ",
                             engine::kMaxTreeNodes, " nodes"));
      }
      return;
    }
    if (node->kind_case() == v1::TreeNode::kSubtree) {
      Use(node, at, chain);
      return;
    }
    RemapConsiderations(chain, node);
    for (std::string* script : Scripts(node)) RemapScript(chain, script);
    if (node->has_condition()) {
      v1::ConditionNode* c = node->mutable_condition();
      c->set_factor(Resolve(chain, c->factor()));
    }
    if (node->has_switch_()) {
      v1::SwitchNode* s = node->mutable_switch_();
      s->set_factor(Resolve(chain, s->factor()));
    }
    if (node->has_loop() && !node->loop().variable().empty()) {
      v1::LoopNode* l = node->mutable_loop();
      l->set_variable(Resolve(chain, l->variable()));
    }
    std::vector<v1::TreeNode*> children = ChildrenOf(node);
    for (size_t i = 0; i < children.size(); ++i) {
      Walk(children[i], ChildFieldPath(at, *node, i), chain);
    }
  }

 private:
  void Add(std::string path, std::string message) {
    issues_->push_back({std::move(path), std::move(message)});
  }

  // Joins a use's scripts (`use`, in Scripts' order) into its subtree
  // root's (`root`), none lost: a precondition of one kind answers as
  // either would (`while`: holds while both do), checked as one, and the
  // postconditions run the root's, then the use's. (Preconditions of
  // different kinds keep utilityd's order, failure_if first: docs/TREES.md.)
  static void MergeScripts(const std::vector<std::string*>& use,
                           const std::vector<std::string*>& root) {
    for (size_t g = 0; g < 8; ++g) {
      if (use[g]->empty()) continue;
      if (root[g]->empty()) {
        *root[g] = *use[g];
      } else if (g < 4) {
        *root[g] = absl::StrCat("(", *use[g], ")", g == 3 ? " && " : " || ",
                                "(", *root[g], ")");
      } else {
        *root[g] = absl::StrCat(*root[g], "; ", *use[g]);
      }
    }
  }

  // Expands the subtree node at `at` in place.
  void Use(v1::TreeNode* node, const std::string& at, RemapChain& chain) {
    const v1::SubtreeNode& use = node->subtree();
    auto it = index_.find(use.name());
    if (use.name().empty()) {
      Add(at + ".subtree.name", "is required");
      return;
    }
    if (it == index_.end()) {
      Add(at + ".subtree.name",
          engine::UnknownNameMessage("subtree", use.name(), names_));
      return;
    }
    if (std::find(stack_.begin(), stack_.end(), use.name()) != stack_.end()) {
      std::vector<std::string> loop = stack_;
      loop.push_back(use.name());
      Add(at + ".subtree.name",
          absl::StrCat("subtree \"", use.name(), "\" uses itself (",
                       absl::StrJoin(loop, " -> "), ")"));
      return;
    }
    for (const auto& [port, factor] : use.remap()) {
      if (port.empty() || factor.empty()) {
        Add(absl::StrCat(at, ".subtree.remap[\"", port, "\"]"),
            "maps a factor name to another: neither may be empty");
      }
    }
    const v1::Subtree& subtree = set_.subtrees(it->second);
    if (!subtree.has_tree()) return;  // reported
    // The use's own fields are in the outer names; the body in the inner.
    v1::TreeNode outer = *node;
    RemapConsiderations(chain, &outer);
    v1::TreeNode body = subtree.tree();
    chain.push_back(&outer.subtree().remap());
    stack_.push_back(use.name());
    --nodes_;  // the use is not a node: its subtree's root takes its place
    Walk(&body, at, chain);
    stack_.pop_back();
    chain.pop_back();
    if (!outer.name().empty()) body.set_name(outer.name());
    if (outer.considerations_size() > 0) {
      *body.mutable_considerations() = outer.considerations();
    }
    if (outer.has_weight()) body.set_weight(outer.weight());
    if (outer.rank() != 0) body.set_rank(outer.rank());
    // The use's pre- and postconditions join the root's on the node that
    // takes its place (the first eight of Scripts: the use is no script
    // leaf), in BT.CPP's order: a SubTree node's checked before its root's,
    // its postconditions run after.
    std::vector<std::string*> from = Scripts(&outer);
    for (size_t g = 0; g < 8; ++g) RemapScript(chain, from[g]);
    MergeScripts(from, Scripts(&body));
    *node = std::move(body);
    uses_->Add({.at = at,
                .source = absl::StrCat("subtrees[", it->second, "].tree"),
                .name = use.name()});
  }

  const v1::BehaviourSet& set_;
  std::vector<engine::ValidationIssue>* issues_;
  SubtreeUses* uses_;
  absl::flat_hash_map<std::string, int> index_;
  std::vector<std::string> names_;
  std::vector<std::string> stack_;
  int nodes_ = 0;
};

}  // namespace

std::vector<const v1::TreeNode*> ChildrenOf(const v1::TreeNode& node) {
  std::vector<const v1::TreeNode*> out;
  const FieldDescriptor* f = KindOf(node);
  if (f == nullptr || f->type() != FieldDescriptor::TYPE_MESSAGE) return out;
  const google::protobuf::Message& kind =
      node.GetReflection()->GetMessage(node, f);
  const google::protobuf::Reflection* r = kind.GetReflection();
  const google::protobuf::Descriptor* d = kind.GetDescriptor();
  if (const auto* many = d->FindFieldByName("children")) {
    for (int i = 0; i < r->FieldSize(kind, many); ++i) {
      out.push_back(static_cast<const v1::TreeNode*>(
          &r->GetRepeatedMessage(kind, many, i)));
    }
  } else if (const auto* one = d->FindFieldByName("child")) {
    if (r->HasField(kind, one)) {
      out.push_back(
          static_cast<const v1::TreeNode*>(&r->GetMessage(kind, one)));
    }
  }
  return out;
}

std::vector<v1::TreeNode*> ChildrenOf(v1::TreeNode* node) {
  std::vector<v1::TreeNode*> out;
  for (const v1::TreeNode* child : ChildrenOf(*node)) {
    out.push_back(const_cast<v1::TreeNode*>(child));
  }
  return out;
}

std::string ChildFieldPath(const std::string& at, const v1::TreeNode& node,
                           size_t i) {
  const FieldDescriptor* f = KindOf(node);
  const std::string kind = f == nullptr ? "" : std::string(f->name());
  const bool one = f != nullptr && f->type() == FieldDescriptor::TYPE_MESSAGE &&
                   f->message_type()->FindFieldByName("child") != nullptr;
  return one ? absl::StrCat(at, ".", kind, ".child")
             : absl::StrCat(at, ".", kind, ".children[", i, "]");
}

const SubtreeUses::Use* SubtreeUses::Innermost(absl::string_view path) const {
  const Use* best = nullptr;
  for (const Use& u : uses_) {
    // (A use's own scoring is written at the use, not in the subtree.)
    const absl::string_view rest =
        absl::StartsWith(path, u.at) ? path.substr(u.at.size()) : "-";
    const bool inside = (rest.empty() || rest[0] == '.') &&
                        !absl::StartsWith(rest, ".considerations") &&
                        !absl::StartsWith(rest, ".weight") &&
                        !absl::StartsWith(rest, ".rank");
    if (inside && (best == nullptr || u.at.size() > best->at.size())) {
      best = &u;
    }
  }
  return best;
}

std::string SubtreeUses::SourcePath(absl::string_view path) const {
  const Use* u = Innermost(path);
  if (u == nullptr) return std::string(path);
  return absl::StrCat(u->source, path.substr(u->at.size()));
}

std::string SubtreeUses::Note(absl::string_view path) const {
  const Use* u = Innermost(path);
  if (u == nullptr) return "";
  return absl::StrCat(" (in subtree \"", u->name, "\" used at ", u->at, ")");
}

void ExpandSubtrees(v1::BehaviourSet* set,
                    std::vector<engine::ValidationIssue>* issues,
                    SubtreeUses* uses) {
  Expander x(*set, issues, uses);
  if (set->has_tree()) {
    RemapChain chain;
    x.Walk(set->mutable_tree(), "tree", chain);
  }
  set->clear_subtrees();
}

}  // namespace utilityd::loader
