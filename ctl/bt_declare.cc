// Declares what an imported tree reads and runs (bt_declare.h).
#include "ctl/bt_declare.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ctl/bt_names.h"
#include "utilityd/engine/script.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::ctl {
namespace {

using engine::FactorComparison;

class Declarer {
 public:
  Declarer(const Mapping& map,
           const absl::flat_hash_set<std::string>& literal_ports)
      : map_(map), literal_ports_(literal_ports) {}

  // A factor read, and a value it is compared with (its range covers it).
  void Use(const std::string& factor, double v) {
    auto [it, fresh] = factors_.try_emplace(factor, 0.0, 1.0);
    if (fresh) order_.push_back(factor);
    it->second.first = std::min(it->second.first, v);
    it->second.second = std::max(it->second.second, v);
  }

  // The names a script reads that no script of the tree assigns and no
  // enum names: factors (0..1 unless the mapping file says).
  void ScriptReads(const std::string& text, engine::ScriptUse use) {
    engine::ScriptNames names;
    if (text.empty() || !engine::ScanScript(text, use, &names).ok()) return;
    for (const std::string& name : names.read) {
      if (!assigned_.contains(name) && !map_.enums.count(name)) {
        Use(name, 0);
      }
    }
  }

  // A comparison over a variable, or over a subtree port some use gives a
  // literal, stays a script condition: a condition reads a factor.
  void ComparisonsOverVariables(v1::TreeNode* n) {
    if (n->has_condition()) {
      const std::optional<FactorComparison> c = AsComparison(n->condition());
      if (c && (assigned_.contains(c->factor) ||
                literal_ports_.contains(c->factor))) {
        n->set_script_condition(engine::FactorComparisonText(*c));
      }
    }
    for (v1::TreeNode* c : loader::ChildrenOf(n)) ComparisonsOverVariables(c);
  }

  // Every name the tree's scripts assign: its variables.
  void Assigned(const v1::TreeNode& n) {
    auto scan = [this](const std::string& text) {
      engine::ScriptNames names;
      if (text.empty() ||
          !engine::ScanScript(text, engine::ScriptUse::kStatements, &names)
               .ok()) {
        return;
      }
      assigned_.insert(names.assigned.begin(), names.assigned.end());
    };
    for (const ScriptAttr& a : ScriptAttrs()) scan((n.*a.field)());
    scan(n.script());
    if (n.has_loop() && !n.loop().variable().empty()) {
      assigned_.insert(n.loop().variable());
    }
    for (const v1::TreeNode* c : loader::ChildrenOf(n)) Assigned(*c);
  }

  // The factors the expanded tree reads (a subtree's names through each
  // use's remap), each range covering the constants it is compared with.
  void Reads(const v1::TreeNode& n) {
    if (n.has_condition()) {
      const v1::ConditionNode& c = n.condition();
      if (const std::optional<FactorComparison> cmp = AsComparison(c)) {
        Use(c.factor(), cmp->value * 2);
      } else {
        Use(c.factor(), c.range().has_min() ? c.range().min() : 0);
        Use(c.factor(), c.range().has_max() ? c.range().max() : 1);
      }
    }
    if (n.has_switch_()) {
      for (double v : n.switch_().cases()) Use(n.switch_().factor(), v);
    }
    for (const ScriptAttr& a : ScriptAttrs()) {
      const std::string& text = (n.*a.field)();
      const std::optional<FactorComparison> c =
          engine::ParseFactorComparison(text);
      if (c && !assigned_.contains(c->factor)) {
        Use(c->factor, c->value * 2);
      } else {
        ScriptReads(text, a.use);
      }
    }
    if (n.has_script()) {
      ScriptReads(n.script(), engine::ScriptUse::kStatements);
    }
    if (n.has_script_condition()) {
      ScriptReads(n.script_condition(), engine::ScriptUse::kCondition);
    }
    for (const v1::Consideration& c : n.considerations()) {
      if (c.per_target()) {
        if (std::find(targets_.begin(), targets_.end(), c.factor()) ==
            targets_.end()) {
          targets_.push_back(c.factor());
        }
        continue;
      }
      Use(c.factor(), c.range().has_min() ? c.range().min() : 0);
      Use(c.factor(), c.range().has_max() ? c.range().max() : 1);
    }
    for (const v1::TreeNode* c : loader::ChildrenOf(n)) Reads(*c);
  }

  // The set's factors (in the order first read; ranges from the mapping
  // file, else covering the constants they are compared with) and actions.
  void Declare(const std::vector<std::string>& actions, v1::BehaviourSet* set) {
    v1::BehaviourSet expanded = *set;
    std::vector<engine::ValidationIssue> issues;  // reported when it loads
    loader::SubtreeUses uses;
    loader::ExpandSubtrees(&expanded, &issues, &uses);
    if (expanded.has_tree()) Assigned(expanded.tree());
    // A comparison over a variable the scripts assign is a script
    // condition, not a condition on a factor.
    if (set->has_tree()) {
      Assigned(set->tree());
      ComparisonsOverVariables(set->mutable_tree());
    }
    for (v1::Subtree& t : *set->mutable_subtrees()) {
      Assigned(t.tree());
      ComparisonsOverVariables(t.mutable_tree());
    }
    expanded = *set;
    issues.clear();
    loader::SubtreeUses again;
    loader::ExpandSubtrees(&expanded, &issues, &again);
    if (expanded.has_tree()) Reads(expanded.tree());
    for (const auto& [name, value] : map_.enums) {
      (*set->mutable_enums())[name] = value;
    }
    std::set<std::string> declared;  // by the set given with --into
    for (const v1::Factor& f : set->factors()) declared.insert(f.name());
    for (const v1::Factor& f : set->target_factors()) {
      declared.insert(f.name());
    }
    for (const v1::Action& a : set->actions()) declared.insert(a.name());
    for (const std::string& f : targets_) {
      if (declared.insert(f).second) set->add_target_factors()->set_name(f);
    }
    for (const std::string& f : order_) {
      if (!declared.insert(f).second) continue;
      auto range = factors_.at(f);
      if (auto it = map_.factors.find(f); it != map_.factors.end()) {
        range = it->second;
      }
      v1::Factor* x = set->add_factors();
      x->set_name(f);
      if (range.first != 0) x->set_min(range.first);
      if (range.second != 1) x->set_max(range.second);
    }
    for (const std::string& a : actions) {
      if (declared.insert(a).second) set->add_actions()->set_name(a);
    }
  }

 private:
  const Mapping& map_;
  const absl::flat_hash_set<std::string>& literal_ports_;
  std::map<std::string, std::pair<double, double>> factors_;
  std::vector<std::string> order_;
  std::vector<std::string> targets_;
  absl::flat_hash_set<std::string> assigned_;  // the scripts' variables
};

}  // namespace

void DeclareImported(const Mapping& map,
                     const absl::flat_hash_set<std::string>& literal_ports,
                     const std::vector<std::string>& actions,
                     v1::BehaviourSet* set) {
  Declarer d(map, literal_ports);
  d.Declare(actions, set);
}

}  // namespace utilityd::ctl
