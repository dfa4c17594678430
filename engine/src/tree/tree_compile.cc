// Validation and compilation of a set's behaviour tree: the checks and
// steps every node shares; each kind's own are its block in node_kinds.h.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "set/flat_set.h"
#include "tree/node_kinds.h"
#include "tree/tree_scripts.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/identifier.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {
namespace internal {

std::string ChildPath(const std::string& at, const TreeNodeDefinition& n,
                      size_t i) {
  const char* kind = NodeKindName(n.kind);
  if (NodeKindArity(n.kind) == NodeArity::kChild)
    return absl::StrCat(at, ".", kind, ".child");
  return absl::StrCat(at, ".", kind, ".children[", i, "]");
}

std::string ChoiceName(const TreeNodeDefinition& child) {
  if (!child.name.empty()) return child.name;
  return child.kind == NodeKind::kAction ? child.action : "";
}

const ActionDefinition* FindActionDef(const SetDefinition& def,
                                      const std::string& name) {
  for (const ActionDefinition& a : def.actions) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

SetDefinition ChoiceSet(const SetDefinition& def,
                        const TreeNodeDefinition& node) {
  SetDefinition sub;
  sub.name = def.name;
  sub.revision = def.revision;
  sub.factors = def.factors;
  sub.target_factors = def.target_factors;
  sub.aggregation = def.aggregation;
  sub.compensation = def.compensation;
  sub.selection = def.selection;
  sub.selection.fallback_action.clear();
  for (const TreeNodeDefinition& child : node.children) {
    const ActionDefinition* a = child.kind == NodeKind::kAction
                                    ? FindActionDef(def, child.action)
                                    : nullptr;
    // An action child is scored as its action, unless the node carries
    // considerations of its own: then those, its weight and its rank (the
    // action's per_target and cooldown stay).
    ActionDefinition choice;
    if (a != nullptr) choice = *a;
    if (a == nullptr || !child.considerations.empty()) {
      choice.weight = child.weight;
      choice.rank = child.rank;
      choice.considerations = child.considerations;
    }
    choice.name = ChoiceName(child);
    sub.actions.push_back(std::move(choice));
  }
  // Whether `key` names one of the choices, or one of their considerations
  // ("consideration" or "action.consideration").
  auto names_action = [&sub](const std::string& key) {
    return std::any_of(
        sub.actions.begin(), sub.actions.end(),
        [&](const ActionDefinition& a) { return a.name == key; });
  };
  auto names_consideration = [&sub](const std::string& key) {
    return std::any_of(
        sub.actions.begin(), sub.actions.end(), [&](const ActionDefinition& a) {
          return std::any_of(a.considerations.begin(), a.considerations.end(),
                             [&](const ConsiderationDefinition& c) {
                               return key == c.name ||
                                      key == absl::StrCat(a.name, ".", c.name);
                             });
        });
  };
  for (const PersonalityDefinition& p : def.personalities) {
    PersonalityDefinition q{.name = p.name, .description = p.description};
    for (const auto& entry : p.action_weights) {
      if (names_action(entry.first)) q.action_weights.push_back(entry);
    }
    for (const auto& entry : p.consideration_weights) {
      if (names_consideration(entry.first)) {
        q.consideration_weights.push_back(entry);
      }
    }
    sub.personalities.push_back(std::move(q));
  }
  return sub;
}

namespace {

class TreeChecker {
 public:
  TreeChecker(const SetDefinition& def, std::vector<ValidationIssue>* issues)
      : def_(def), issues_(issues), scripts_(def) {
    if (scripts_.variables().size() > static_cast<size_t>(kMaxTreeVariables)) {
      Add("tree",
          absl::StrCat("its scripts assign ", scripts_.variables().size(),
                       " variables; a tree may have at most ",
                       kMaxTreeVariables));
    }
  }

  void Node(const TreeNodeDefinition& n, const std::string& at, int depth,
            NodeKind parent) {
    if (++count_ == kMaxTreeNodes + 1) {
      Add("tree", absl::StrCat("at most ", kMaxTreeNodes, " nodes"));
    }
    if (depth > kMaxTreeDepth) {
      Add(at, absl::StrCat("is deeper than ", kMaxTreeDepth, " levels"));
      return;
    }
    if (!n.name.empty() && !IsIdentifier(n.name)) {
      Add(at + ".name", absl::StrCat("\"", n.name,
                                     "\" is not a valid name: use a letter, "
                                     "then letters, digits, '_' or '-'"));
    }
    if (parent != NodeKind::kUtility && !n.considerations.empty()) {
      Add(at + ".considerations",
          "only a child of a utility node is scored by considerations");
    }
    for (const ScriptField& f : kScriptFields) {
      Script(absl::StrCat(at, ".", f.name), n.*f.text, f.use);
    }
    const std::string kind = absl::StrCat(at, ".", NodeKindName(n.kind));
    if (n.kind == NodeKind::kScript || n.kind == NodeKind::kScriptCondition) {
      if (n.code.empty()) {
        Add(kind, "is required: the script");
      } else {
        Script(kind, n.code, CodeUse(n.kind));
      }
    }
    const size_t children = n.children.size();
    switch (NodeKindArity(n.kind)) {
      case NodeArity::kChildren:
        if (children == 0) Add(kind + ".children", "needs at least one child");
        break;
      case NodeArity::kChild:
        if (children != 1) Add(kind + ".child", "is required");
        break;
      case NodeArity::kLeaf:
        break;
    }
    const NodeCheck check{.def = def_,
                          .at = at,
                          .kind = kind,
                          .parent = parent,
                          .issues = issues_};
    VisitNodeKind(n.kind, [&](auto k) { decltype(k)::Validate(n, check); });
    for (size_t i = 0; i < children; ++i) {
      Node(n.children[i], ChildPath(at, n, i), depth + 1, n.kind);
    }
  }

 private:
  void Add(std::string path, std::string message) {
    issues_->push_back({std::move(path), std::move(message)});
  }

  void Script(const std::string& at, const std::string& text, ScriptUse use) {
    if (text.empty()) return;
    CompiledScript compiled;
    const absl::Status s = scripts_.Compile(text, use, &compiled);
    if (!s.ok()) {
      Add(at, absl::StrCat("\"", text, "\" at ", s.message()));
    }
  }

  const SetDefinition& def_;
  std::vector<ValidationIssue>* issues_;
  TreeScripts scripts_;
  int count_ = 0;
};

class TreeCompiler {
 public:
  TreeCompiler(const SetDefinition& def, const CompiledBehaviourSet& set,
               CompiledTree* tree)
      : def_(def), set_(set), tree_(tree), scripts_(def) {
    tree->variables = scripts_.variables();
  }

  // Adds `n` and its subtree in pre-order; returns its id.
  absl::StatusOr<int> Add(const TreeNodeDefinition& n, int parent,
                          uint32_t depth, const std::string& at) {
    const int id = static_cast<int>(tree_->nodes.size());
    {
      CompiledNode c;
      c.kind = n.kind;
      c.name = n.name;
      c.parent = parent;
      c.depth = depth;
      c.child_count = static_cast<uint32_t>(n.children.size());
      for (const ScriptField& f : kScriptFields) {
        absl::Status s = Script(at, n.*f.text, f.use, &(c.*f.index));
        if (!s.ok()) return s;
      }
      if (n.kind == NodeKind::kScript || n.kind == NodeKind::kScriptCondition) {
        absl::Status s = Script(at, n.code, CodeUse(n.kind), &c.code);
        if (!s.ok()) return s;
      }
      const NodeCompile in{.def = def_, .set = set_, .tree = *tree_, .at = at};
      const absl::Status s = VisitNodeKind(
          n.kind, [&](auto k) { return decltype(k)::Compile(n, in, c); });
      if (!s.ok()) return s;
      tree_->nodes.push_back(std::move(c));
    }
    std::vector<uint32_t> kids;
    for (size_t i = 0; i < n.children.size(); ++i) {
      absl::StatusOr<int> child =
          Add(n.children[i], id, depth + 1, ChildPath(at, n, i));
      if (!child.ok()) return child.status();
      kids.push_back(static_cast<uint32_t>(*child));
    }
    CompiledNode& c = tree_->nodes[id];
    c.first_child = static_cast<uint32_t>(tree_->children.size());
    tree_->children.insert(tree_->children.end(), kids.begin(), kids.end());
    return id;
  }

 private:
  // Compiles `text` (none when empty) into the tree's scripts.
  absl::Status Script(const std::string& at, const std::string& text,
                      ScriptUse use, int32_t* index) {
    if (text.empty()) return absl::OkStatus();
    CompiledScript compiled;
    const absl::Status s = scripts_.Compile(text, use, &compiled);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(at, ": ", s.message()));
    }
    *index = static_cast<int32_t>(tree_->scripts.size());
    tree_->scripts.push_back(std::move(compiled));
    return absl::OkStatus();
  }

  const SetDefinition& def_;
  const CompiledBehaviourSet& set_;
  CompiledTree* tree_;
  TreeScripts scripts_;
};

// Every kind, in order (the rest is in kTraits).
template <typename... K>
constexpr std::array<NodeKind, sizeof...(K)> Enumerators(NodeKindList<K...>) {
  return {K::kKind...};
}
constexpr auto kEnumerators = Enumerators(NodeKinds{});

}  // namespace
}  // namespace internal

const char* NodeKindName(NodeKind kind) {
  const auto k = static_cast<size_t>(kind);
  return k < internal::kNodeKinds ? internal::kTraits[k].name : "?";
}

std::optional<NodeKind> FindNodeKind(absl::string_view name) {
  for (size_t k = 0; k < internal::kNodeKinds; ++k) {
    if (name == internal::kTraits[k].name) return internal::kTraits[k].kind;
  }
  return std::nullopt;
}

const NodeKindTraits& NodeKindInfo(NodeKind kind) {
  return internal::kTraits[static_cast<size_t>(kind)];
}

bool NodeMayAnswer(const CompiledNode& node, NodeStatus status) {
  return internal::VisitNodeKind(
      node.kind, [&](auto k) { return decltype(k)::MayAnswer(node, status); });
}

bool NodeTicksChildren(const CompiledNode& node) {
  return internal::VisitNodeKind(
      node.kind, [&](auto k) { return decltype(k)::TicksChildren(node); });
}

NodeArity NodeKindArity(NodeKind kind) { return NodeKindInfo(kind).arity; }

absl::Span<const NodeParam> NodeParams(NodeKind kind) {
  return NodeKindInfo(kind).params;
}

absl::Span<const NodeKind> AllNodeKinds() { return internal::kEnumerators; }

void ValidateTree(const SetDefinition& def,
                  std::vector<ValidationIssue>* issues) {
  if (!def.tree) return;
  internal::TreeChecker(def, issues)
      .Node(*def.tree, "tree", 1, NodeKind::kSequence);
}

// The tree's shape: each node's kind, parent and number of children, an
// action leaf's action (by name) and the variables' names — what a state's
// entries refer to. Parameters (curves, thresholds, durations, counts,
// rescoring, scripts that assign no new variable) and labels
// are not part of it: a reload that changes only them resumes running
// trees (docs/TREES.md, "State").
uint16_t ShapeTag(const CompiledTree& tree, const CompiledBehaviourSet& set) {
  std::string shape;
  for (const CompiledNode& n : tree.nodes) {
    absl::StrAppend(&shape, NodeKindName(n.kind), ",", n.parent, ",",
                    n.child_count, ",",
                    n.action >= 0 ? set.actions()[n.action].name : "", ";");
  }
  // The variables' names, which the state's variables refer to by index.
  for (const std::string& v : tree.variables) {
    absl::StrAppend(&shape, "var ", v, ";");
  }
  return TreeStateTag(shape);
}

absl::StatusOr<std::shared_ptr<const CompiledTree>> CompileTree(
    const SetDefinition& def, const CompiledBehaviourSet& set) {
  auto tree = std::make_shared<CompiledTree>();
  tree->name_tag = TreeStateTag(def.name);
  absl::StatusOr<int> root = internal::TreeCompiler(def, set, tree.get())
                                 .Add(*def.tree, -1, 0, "tree");
  if (!root.ok()) return root.status();
  tree->shape_tag = ShapeTag(*tree, set);
  return std::shared_ptr<const CompiledTree>(std::move(tree));
}

std::optional<FactorComparison> ParseFactorComparison(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&text, "@");
  size_t i = 0;
  while (i < text.size() &&
         (absl::ascii_isalnum(text[i]) || text[i] == '_' || text[i] == '-')) {
    ++i;
  }
  FactorComparison c;
  c.factor = std::string(text.substr(0, i));
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(text.substr(i));
  using Op = FactorComparison::Op;
  bool found = false;
  for (const auto& [word, op] :
       {std::pair{"<=", Op::kLessEqual}, std::pair{">=", Op::kGreaterEqual},
        std::pair{"<", Op::kLess}, std::pair{">", Op::kGreater}}) {
    if (absl::ConsumePrefix(&rest, word)) {
      c.op = op;
      found = true;
      break;
    }
  }
  if (c.factor.empty() || !absl::ascii_isalpha(c.factor[0]) || !found ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(rest), &c.value) ||
      !IsFiniteFloat(c.value)) {
    return std::nullopt;
  }
  return c;
}

std::string FactorComparisonText(const FactorComparison& c) {
  const char* op = "<";
  switch (c.op) {
    case FactorComparison::Op::kLess:
      op = "<";
      break;
    case FactorComparison::Op::kLessEqual:
      op = "<=";
      break;
    case FactorComparison::Op::kGreater:
      op = ">";
      break;
    case FactorComparison::Op::kGreaterEqual:
      op = ">=";
      break;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, c.value);
  return absl::StrCat(
      c.factor, " ", op, " ",
      ec == std::errc() ? std::string(buf, end) : absl::StrCat(c.value));
}

bool ComparisonHolds(FactorComparison::Op op, float v, float value) {
  switch (op) {
    case FactorComparison::Op::kLess:
      return v < value;
    case FactorComparison::Op::kLessEqual:
      return v <= value;
    case FactorComparison::Op::kGreater:
      return v > value;
    case FactorComparison::Op::kGreaterEqual:
      return v >= value;
  }
  return false;
}

}  // namespace utilityd::engine
