// Validation and compilation of a set's behaviour tree.
#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "set/flat_set.h"
#include "set/identifier.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {
namespace {

bool IsComposite(NodeKind k) {
  return k == NodeKind::kSequence || k == NodeKind::kFallback ||
         k == NodeKind::kReactiveSequence || k == NodeKind::kReactiveFallback;
}

bool IsDecorator(NodeKind k) {
  switch (k) {
    case NodeKind::kInverter:
    case NodeKind::kForceSuccess:
    case NodeKind::kForceFailure:
    case NodeKind::kRepeat:
    case NodeKind::kRetry:
    case NodeKind::kCooldown:
    case NodeKind::kTimeout:
      return true;
    default:
      return false;
  }
}

// The field path of child `i` of the node at `at`, as the format writes it:
// "tree.fallback.children[1]", "tree.inverter.child".
std::string ChildPath(const std::string& at, const TreeNodeDefinition& n,
                      size_t i) {
  if (IsDecorator(n.kind))
    return absl::StrCat(at, ".", NodeKindName(n.kind), ".child");
  return absl::StrCat(at, ".", NodeKindName(n.kind), ".children[", i, "]");
}

// The name a utility node's child goes by: its label, or its action's name.
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

// The set a utility node chooses in: its children as actions, with the
// set's factors, scoring, selection (without the fallback, which names a
// set-level action) and personalities (restricted to these actions).
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

class TreeChecker {
 public:
  TreeChecker(const SetDefinition& def, std::vector<ValidationIssue>* issues)
      : def_(def), issues_(issues) {}

  void Node(const TreeNodeDefinition& n, const std::string& at, int depth,
            NodeKind parent) {
    if (++count_ == kMaxTreeNodes + 1) {
      Add("tree", absl::StrCat("at most ", kMaxTreeNodes, " nodes"));
    }
    if (depth > kMaxTreeDepth) {
      Add(at, absl::StrCat("is deeper than ", kMaxTreeDepth, " levels"));
      return;
    }
    if (!n.name.empty() && !internal::IsIdentifier(n.name)) {
      Add(at + ".name", absl::StrCat("\"", n.name,
                                     "\" is not a valid name: use a letter, "
                                     "then letters, digits, '_' or '-'"));
    }
    if (parent != NodeKind::kUtility && !n.considerations.empty()) {
      Add(at + ".considerations",
          "only a child of a utility node is scored by considerations");
    }
    const std::string kind = absl::StrCat(at, ".", NodeKindName(n.kind));
    const size_t children = n.children.size();
    if (IsComposite(n.kind) || n.kind == NodeKind::kParallel ||
        n.kind == NodeKind::kUtility) {
      if (children == 0) Add(kind + ".children", "needs at least one child");
    } else if (IsDecorator(n.kind)) {
      if (children != 1) Add(kind + ".child", "is required");
    }
    switch (n.kind) {
      case NodeKind::kParallel:
        Parallel(n, kind);
        break;
      case NodeKind::kRepeat:
        Count(kind + ".times", n.times);
        break;
      case NodeKind::kRetry:
        Count(kind + ".attempts", n.attempts);
        break;
      case NodeKind::kCooldown:
      case NodeKind::kTimeout:
        if (!std::isfinite(n.seconds) || n.seconds <= 0 || n.seconds > 1e9) {
          Add(kind + ".seconds",
              absl::StrCat("must be a number of seconds above 0 (at most "
                           "1e9), got ",
                           n.seconds));
        }
        break;
      case NodeKind::kCondition:
        Condition(n.condition, kind);
        break;
      case NodeKind::kAction:
        Action(n, kind, parent);
        break;
      case NodeKind::kUtility:
        Utility(n, at);
        break;
      default:
        break;
    }
    for (size_t i = 0; i < children; ++i) {
      Node(n.children[i], ChildPath(at, n, i), depth + 1, n.kind);
    }
  }

 private:
  void Add(std::string path, std::string message) {
    issues_->push_back({std::move(path), std::move(message)});
  }

  // 0 is BehaviorTree.CPP's "do not tick the child" (repeat: SUCCESS,
  // retry: FAILURE); -1 (for ever) is refused, see docs/TREES.md.
  void Count(const std::string& at, int v) {
    if (v < 0 || v > kMaxRepeat) {
      Add(at, absl::StrCat("must be within 0..", kMaxRepeat, ", got ", v,
                           v < 0 ? " (no endless repeat: every run of the "
                                   "child costs the game a tick)"
                                 : ""));
    }
  }

  void Parallel(const TreeNodeDefinition& n, const std::string& at) {
    const int children = static_cast<int>(n.children.size());
    if (children > kMaxParallelChildren) {
      Add(at + ".children", absl::StrCat("at most ", kMaxParallelChildren,
                                         " children, got ", children));
    }
    Threshold(at + ".success_threshold", n.success_threshold, children);
    Threshold(at + ".failure_threshold", n.failure_threshold, children);
  }

  void Threshold(const std::string& at, int v, int children) {
    const int count = ParallelThreshold(v, children);
    if (count < 1 || count > children) {
      Add(at, absl::StrCat("must come to 1..", children,
                           " (the number of children): a count, or a "
                           "negative value counted from all (-1 = all, -2 = "
                           "all but one), got ",
                           v, v < 0 ? absl::StrCat(" (", count, ")") : ""));
    }
  }

  void Condition(const ConditionDefinition& c, const std::string& at) {
    const FactorDefinition* factor = nullptr;
    std::vector<std::string> names;
    for (const FactorDefinition& f : def_.factors) {
      names.push_back(f.name);
      if (f.name == c.factor) factor = &f;
    }
    if (c.factor.empty()) {
      Add(at + ".factor", "is required");
    } else if (factor == nullptr) {
      Add(at + ".factor", UnknownNameMessage("factor", c.factor, names));
    }
    const double lo = c.range_min.value_or(factor ? factor->min : 0.0);
    const double hi = c.range_max.value_or(factor ? factor->max : 1.0);
    if (!IsFiniteFloat(lo) || !IsFiniteFloat(hi)) {
      Add(at + ".range", "bounds must be finite numbers");
    } else if (lo == hi) {
      Add(at + ".range", absl::StrCat("is empty: min and max are both ", lo));
    }
    ValidateCurve(c.curve, at + ".curve", issues_);
    if (!std::isfinite(c.threshold) || c.threshold < 0 || c.threshold > 1) {
      Add(at + ".threshold",
          absl::StrCat("must be within 0..1, got ", c.threshold));
    }
  }

  void Action(const TreeNodeDefinition& n, const std::string& at,
              NodeKind parent) {
    std::vector<std::string> names;
    for (const ActionDefinition& a : def_.actions) names.push_back(a.name);
    const ActionDefinition* a = FindActionDef(def_, n.action);
    if (n.action.empty()) {
      Add(at, "names no action");
    } else if (a == nullptr) {
      Add(at, UnknownNameMessage("action", n.action, names));
    } else if (a->per_target && parent != NodeKind::kUtility) {
      Add(at, absl::StrCat("\"", n.action,
                           "\" is per_target: only a utility node can choose "
                           "its target (make it a child of one)"));
    }
  }

  void Utility(const TreeNodeDefinition& n, const std::string& at) {
    const std::string kind = at + ".utility";
    if (n.children.size() > static_cast<size_t>(kMaxUtilityChildren)) {
      Add(kind + ".children",
          absl::StrCat("at most ", kMaxUtilityChildren, " children, got ",
                       n.children.size()));
      return;
    }
    absl::flat_hash_set<std::string> seen;
    bool usable = true;
    for (size_t i = 0; i < n.children.size(); ++i) {
      const TreeNodeDefinition& child = n.children[i];
      const std::string cat = ChildPath(at, n, i);
      const std::string name = ChoiceName(child);
      if (name.empty()) {
        Add(cat + ".name",
            "is required: a utility node's child that is not an action goes "
            "by its name in scores and metrics");
        usable = false;
      } else if (!seen.insert(name).second) {
        Add(cat + ".name",
            absl::StrCat("two children of this utility node are called \"",
                         name, "\": label one with `name`"));
        usable = false;
      }
      if (child.kind != NodeKind::kAction && child.considerations.empty()) {
        Add(cat + ".considerations",
            "a utility node's child that is not an action needs "
            "considerations to be scored by");
        usable = false;
      }
      if (child.kind == NodeKind::kAction &&
          FindActionDef(def_, child.action) == nullptr) {
        usable = false;  // reported by Action
      }
    }
    if (!usable) return;
    // The children's own considerations, checked as a set's actions are;
    // issues come back under the child's path.
    const SetDefinition sub = ChoiceSet(def_, n);
    for (const ValidationIssue& issue : internal::ValidateFlat(sub)) {
      for (size_t i = 0; i < n.children.size(); ++i) {
        const std::string prefix = absl::StrCat("actions[", i, "]");
        const TreeNodeDefinition& child = n.children[i];
        const bool own =
            child.kind != NodeKind::kAction || !child.considerations.empty();
        if (!own || !absl::StartsWith(issue.path, prefix + ".")) {
          continue;
        }
        std::string rest = issue.path.substr(prefix.size());
        if (absl::StartsWith(rest, ".weight")) rest = ".weight";
        if (absl::StartsWith(rest, ".rank")) rest = ".rank";
        Add(ChildPath(at, n, i) + rest, issue.message);
      }
    }
  }

  const SetDefinition& def_;
  std::vector<ValidationIssue>* issues_;
  int count_ = 0;
};

class TreeCompiler {
 public:
  TreeCompiler(const SetDefinition& def, const CompiledBehaviourSet& set,
               CompiledTree* tree)
      : def_(def), set_(set), tree_(tree) {}

  // Adds `n` and its subtree in pre-order; returns its id.
  absl::StatusOr<int> Add(const TreeNodeDefinition& n, int parent,
                          uint32_t depth, const std::string& at) {
    const int id = static_cast<int>(tree_->nodes.size());
    tree_->nodes.emplace_back();
    {
      CompiledNode& c = tree_->nodes.back();
      c.kind = n.kind;
      c.name = n.name;
      c.parent = parent;
      c.depth = depth;
      c.child_count = static_cast<uint32_t>(n.children.size());
      const int children = static_cast<int>(n.children.size());
      c.success_threshold = ParallelThreshold(n.success_threshold, children);
      c.failure_threshold = ParallelThreshold(n.failure_threshold, children);
      c.count = n.kind == NodeKind::kRetry ? n.attempts : n.times;
      c.millis = static_cast<int64_t>(std::llround(n.seconds * 1000.0));
      c.rescore = n.rescore;
      c.on_failure = n.on_failure;
      if (n.kind == NodeKind::kAction) c.action = set_.FindAction(n.action);
      if (n.kind == NodeKind::kCondition) Condition(n.condition, &c);
    }
    if (n.kind == NodeKind::kUtility) {
      absl::StatusOr<CompiledBehaviourSet> choices =
          internal::CompileFlat(ChoiceSet(def_, n));
      if (!choices.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(at, ": ", choices.status().message()));
      }
      std::vector<int32_t> actions;
      for (const TreeNodeDefinition& child : n.children) {
        actions.push_back(child.kind == NodeKind::kAction
                              ? set_.FindAction(child.action)
                              : -1);
      }
      CompiledNode& c = tree_->nodes[id];
      c.choices =
          std::make_shared<const CompiledBehaviourSet>(*std::move(choices));
      c.choice_actions = std::move(actions);
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
  void Condition(const ConditionDefinition& d, CompiledNode* c) {
    const int f = set_.FindFactor(d.factor);
    const FactorDefinition& factor = def_.factors[f];
    const double lo = d.range_min.value_or(factor.min);
    const double hi = d.range_max.value_or(factor.max);
    c->condition.name = d.factor;
    c->condition.factor = f;
    c->condition.range_lo = static_cast<float>(lo);
    c->condition.range_span = static_cast<float>(hi - lo);
    c->condition.curve = CompileCurve(d.curve, &tree_->curve_points);
    c->threshold = static_cast<float>(d.threshold);
  }

  const SetDefinition& def_;
  const CompiledBehaviourSet& set_;
  CompiledTree* tree_;
};

}  // namespace

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kSequence:
      return "sequence";
    case NodeKind::kFallback:
      return "fallback";
    case NodeKind::kReactiveSequence:
      return "reactive_sequence";
    case NodeKind::kReactiveFallback:
      return "reactive_fallback";
    case NodeKind::kParallel:
      return "parallel";
    case NodeKind::kInverter:
      return "inverter";
    case NodeKind::kForceSuccess:
      return "force_success";
    case NodeKind::kForceFailure:
      return "force_failure";
    case NodeKind::kRepeat:
      return "repeat";
    case NodeKind::kRetry:
      return "retry";
    case NodeKind::kCooldown:
      return "cooldown";
    case NodeKind::kTimeout:
      return "timeout";
    case NodeKind::kCondition:
      return "condition";
    case NodeKind::kAction:
      return "action";
    case NodeKind::kUtility:
      return "utility";
  }
  return "?";
}

void ValidateTree(const SetDefinition& def,
                  std::vector<ValidationIssue>* issues) {
  if (!def.tree) return;
  TreeChecker(def, issues).Node(*def.tree, "tree", 1, NodeKind::kSequence);
}

absl::StatusOr<std::shared_ptr<const CompiledTree>> CompileTree(
    const SetDefinition& def, const CompiledBehaviourSet& set) {
  auto tree = std::make_shared<CompiledTree>();
  tree->name_tag = TreeStateTag(def.name);
  tree->revision_tag = TreeStateTag(def.revision);
  absl::StatusOr<int> root =
      TreeCompiler(def, set, tree.get()).Add(*def.tree, -1, 0, "tree");
  if (!root.ok()) return root.status();
  return std::shared_ptr<const CompiledTree>(std::move(tree));
}

}  // namespace utilityd::engine
