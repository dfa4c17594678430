#include "utilityd/engine/compiled_set.h"

#include <algorithm>
#include <cmath>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "set/flat_set.h"
#include "utilityd/engine/coordination.h"
#include "utilityd/engine/identifier.h"
#include "utilityd/engine/script.h"

namespace utilityd::engine {
namespace {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same =
          absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Collects issues under a growing field path.
class Checker {
 public:
  explicit Checker(std::vector<ValidationIssue>* issues) : issues_(issues) {}

  void Add(std::string path, std::string message) {
    issues_->push_back({std::move(path), std::move(message)});
  }

  // Reports `name` unless it is a valid identifier.
  void Identifier(const std::string& path, const std::string& name) {
    if (name.empty()) {
      Add(path, "is required");
    } else if (!IsIdentifier(name)) {
      Add(path, absl::StrCat("\"", name,
                             "\" is not a valid name: use a letter, then "
                             "letters, digits, '_' or '-' (at most 128)"));
    }
  }

  // Reports a non-finite `v`; returns whether it is finite.
  bool Finite(const std::string& path, double v) {
    if (IsFiniteFloat(v)) return true;
    Add(path, absl::StrCat("must be a finite number within ±3.4e38, got ", v));
    return false;
  }

  void InRange(const std::string& path, double v, double lo, double hi) {
    if (Finite(path, v) && (v < lo || v > hi)) {
      Add(path, absl::StrCat("must be within ", lo, "..", hi, ", got ", v));
    }
  }

  // For integers: `v` at most `hi`.
  void AtMost(const std::string& path, int64_t v, int64_t hi) {
    if (v > hi) Add(path, absl::StrCat("must be at most ", hi, ", got ", v));
  }

  void AtLeast(const std::string& path, double v, double lo) {
    if (Finite(path, v) && v < lo) {
      Add(path, absl::StrCat("must be >= ", lo, ", got ", v));
    }
  }

  void Curve(const std::string& path, const CurveDefinition& curve) {
    ValidateCurve(curve, path, issues_);
  }

  // Reports an unknown reference with a did-you-mean hint.
  void Unknown(const std::string& path, absl::string_view what,
               const std::string& name, const std::vector<std::string>& known) {
    Add(path, UnknownNameMessage(what, name, known));
  }

 private:
  std::vector<ValidationIssue>* issues_;
};

std::vector<std::string> Names(const std::vector<FactorDefinition>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back(f.name);
  return out;
}

void CheckFactors(Checker& check, const std::string& list,
                  const std::vector<FactorDefinition>& factors) {
  if (factors.size() > static_cast<size_t>(kMaxFactors)) {
    check.Add(list, absl::StrCat("at most ", kMaxFactors, " factors, got ",
                                 factors.size()));
  }
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < factors.size(); ++i) {
    const FactorDefinition& f = factors[i];
    const std::string at = absl::StrCat(list, "[", i, "]");
    check.Identifier(at + ".name", f.name);
    if (!f.name.empty() && !seen.insert(f.name).second) {
      check.Add(at + ".name",
                absl::StrCat("duplicate factor \"", f.name, "\""));
    }
    if (check.Finite(at + ".min", f.min) && check.Finite(at + ".max", f.max) &&
        !(f.min < f.max)) {
      check.Add(at, absl::StrCat("min must be below max, got min ", f.min,
                                 " and max ", f.max));
    }
  }
}

// A gate's output is 0 or 1: a step curve at full weight over the whole
// output range, in an aggregation where 0 vetoes.
void CheckGate(Checker& check, const std::string& at, const SetDefinition& def,
               const ConsiderationDefinition& c) {
  if (c.curve.kind != CurveKind::kStep) {
    check.Add(at + ".curve",
              "a gate's curve must be a step (its output is 0 or 1)");
  }
  if (c.weight != 1) {
    check.Add(at + ".weight",
              absl::StrCat("a gate has weight 1 (it vetoes or does nothing), "
                           "got ",
                           c.weight));
  }
  if (c.output_min != 0 || c.output_max != 1) {
    check.Add(at + ".output",
              absl::StrCat("a gate's output range is 0..1, got ", c.output_min,
                           "..", c.output_max));
  }
  if (def.aggregation == Aggregation::kWeightedSum) {
    check.Add(at + ".gate",
              "the set aggregates by weighted_sum, where a 0 does not veto; "
              "a gate needs product or min");
  }
}

void CheckConsideration(Checker& check, const std::string& at,
                        const SetDefinition& def,
                        const ActionDefinition& action,
                        const ConsiderationDefinition& c) {
  check.Identifier(at + ".name", c.name);
  const std::vector<FactorDefinition>& pool =
      c.per_target ? def.target_factors : def.factors;
  const FactorDefinition* factor = nullptr;
  for (const auto& f : pool) {
    if (f.name == c.factor) factor = &f;
  }
  if (c.factor.empty()) {
    check.Add(at + ".factor", "is required");
  } else if (factor == nullptr) {
    const std::vector<FactorDefinition>& other =
        c.per_target ? def.factors : def.target_factors;
    const bool in_other = std::any_of(
        other.begin(), other.end(),
        [&](const FactorDefinition& f) { return f.name == c.factor; });
    if (in_other && c.per_target) {
      check.Add(at + ".factor",
                absl::StrCat("\"", c.factor,
                             "\" is an agent factor, not a target factor "
                             "(remove per_target)"));
    } else if (in_other) {
      check.Add(at + ".factor",
                absl::StrCat("\"", c.factor,
                             "\" is a target factor: set per_target: true"));
    } else {
      check.Unknown(at + ".factor", c.per_target ? "target factor" : "factor",
                    c.factor, Names(pool));
    }
  }
  if (c.per_target && !action.per_target) {
    check.Add(at + ".per_target",
              "reads a target factor but the action is not per_target "
              "(set per_target: true on the action)");
  }
  const double lo = c.range_min.value_or(factor ? factor->min : 0.0);
  const double hi = c.range_max.value_or(factor ? factor->max : 1.0);
  if (check.Finite(at + ".range.min", lo) &&
      check.Finite(at + ".range.max", hi) && lo == hi) {
    check.Add(at + ".range",
              absl::StrCat("is empty: min and max are both ", lo));
  }
  check.Curve(at + ".curve", c.curve);
  check.InRange(at + ".weight", c.weight, 0, 1);
  check.InRange(at + ".output.min", c.output_min, 0, 1);
  check.InRange(at + ".output.max", c.output_max, 0, 1);
  if (c.output_min > c.output_max) {
    check.Add(at + ".output",
              absl::StrCat("min ", c.output_min, " is above max ", c.output_max,
                           " (use curve.invert to flip a curve)"));
  }
  if (c.gate) CheckGate(check, at, def, c);
}

void CheckPersonalities(Checker& check, const SetDefinition& def) {
  std::vector<std::string> action_names;
  for (const auto& a : def.actions) action_names.push_back(a.name);
  absl::flat_hash_set<std::string> seen;
  if (def.personalities.size() > static_cast<size_t>(kMaxPersonalities)) {
    check.Add("personalities", absl::StrCat("at most ", kMaxPersonalities));
  }
  for (size_t i = 0; i < def.personalities.size(); ++i) {
    const PersonalityDefinition& p = def.personalities[i];
    const std::string at = absl::StrCat("personalities[", i, "]");
    check.Identifier(at + ".name", p.name);
    if (!p.name.empty() && !seen.insert(p.name).second) {
      check.Add(at + ".name",
                absl::StrCat("duplicate personality \"", p.name, "\""));
    }
    for (const auto& [key, value] : p.action_weights) {
      const std::string path =
          absl::StrCat(at, ".action_weights[\"", key, "\"]");
      if (std::find(action_names.begin(), action_names.end(), key) ==
          action_names.end()) {
        check.Unknown(path, "action", key, action_names);
      }
      check.AtLeast(path, value, 0);
    }
    for (const auto& [key, value] : p.consideration_weights) {
      const std::string path =
          absl::StrCat(at, ".consideration_weights[\"", key, "\"]");
      bool found = false;
      std::vector<std::string> known;
      for (const auto& a : def.actions) {
        for (const auto& c : a.considerations) {
          const std::string full = absl::StrCat(a.name, ".", c.name);
          if (key == full || key == c.name) found = true;
          known.push_back(full);
        }
      }
      if (!found) check.Unknown(path, "consideration", key, known);
      check.InRange(path, value, 0, 1);
    }
  }
}

}  // namespace

std::string SuggestName(absl::string_view name,
                        absl::Span<const std::string> candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string UnknownNameMessage(absl::string_view what, absl::string_view name,
                               absl::Span<const std::string> known) {
  std::string message = absl::StrCat("unknown ", what, " \"", name, "\"");
  const std::string hint = SuggestName(name, known);
  if (!hint.empty()) {
    absl::StrAppend(&message, " (did you mean \"", hint, "\"?)");
  } else if (!known.empty() && known.size() <= 12) {
    absl::StrAppend(&message, " (known: ", absl::StrJoin(known, ", "), ")");
  }
  return message;
}

namespace {

// Resources, and what each action uses.
void CheckResources(Checker& check, const SetDefinition& def) {
  std::vector<std::string> names;
  for (size_t i = 0; i < def.resources.size(); ++i) {
    const ResourceDefinition& r = def.resources[i];
    const std::string at = absl::StrCat("resources[", i, "]");
    check.Identifier(at + ".name", r.name);
    if (absl::c_linear_search(names, r.name)) {
      check.Add(at + ".name",
                absl::StrCat("duplicate resource \"", r.name, "\""));
    }
    names.push_back(r.name);
    check.AtLeast(at + ".capacity", r.capacity, 0);
    check.AtMost(at + ".capacity", r.capacity, kMaxUnits);
    if (r.preemption_margin.has_value()) {
      check.AtLeast(at + ".preemption_margin", *r.preemption_margin, 0);
    }
  }
  if (!def.resources.empty() && def.tree.has_value()) {
    check.Add("resources",
              "a set with a behaviour tree cannot use resources (trees are "
              "ticked one agent at a time)");
  }
  for (size_t i = 0; i < def.actions.size(); ++i) {
    const ActionDefinition& a = def.actions[i];
    std::vector<std::string> used;
    for (size_t j = 0; j < a.uses.size(); ++j) {
      const ResourceUseDefinition& u = a.uses[j];
      const std::string at = absl::StrCat("actions[", i, "].uses[", j, "]");
      check.AtLeast(at + ".amount", u.amount, 1);
      check.AtMost(at + ".amount", u.amount, kMaxUnits);
      const auto r = absl::c_find_if(
          def.resources, [&](const auto& x) { return x.name == u.resource; });
      if (u.resource.empty()) {
        check.Add(at + ".resource", "is required");
        continue;
      }
      if (r == def.resources.end()) {
        check.Unknown(at + ".resource", "resource", u.resource, names);
        continue;
      }
      if (absl::c_linear_search(used, u.resource)) {
        check.Add(at + ".resource",
                  absl::StrCat("\"", u.resource, "\" is used twice by \"",
                               a.name, "\": give one amount"));
      }
      used.push_back(u.resource);
      if (r->per_target && !a.per_target) {
        check.Add(at + ".resource",
                  absl::StrCat("\"", u.resource,
                               "\" is per_target, so it is taken from a "
                               "target's pool: the action must be per_target"));
      }
    }
    if (!a.uses.empty() && a.name == def.selection.fallback_action) {
      check.Add(absl::StrCat("actions[", i, "].uses"),
                "the fallback action must not use resources: it is what an "
                "agent does when nothing else can be had");
    }
  }
}

// The agent's factors. A tree of actions and controls reads none (and a
// tree of conditions and constants runs no action); a set scored flat has
// nothing to score by without one.
void CheckSetFactors(Checker& check, const SetDefinition& def) {
  if (def.factors.empty() && !def.tree) {
    check.Add("factors",
              "at least one factor is required (only a set with a tree may "
              "have none)");
  }
  CheckFactors(check, "factors", def.factors);
}

// The enums the tree's scripts read: names, none a factor's.
void CheckEnums(Checker& check, const SetDefinition& def) {
  if (def.enums.size() > static_cast<size_t>(kMaxSetEnums)) {
    check.Add("enums", absl::StrCat("at most ", kMaxSetEnums, " enums, got ",
                                    def.enums.size()));
  }
  for (const auto& [name, value] : def.enums) {
    const std::string at = absl::StrCat("enums[\"", name, "\"]");
    check.Identifier(at, name);
    if (name == "true" || name == "false") {
      check.Add(at, "true and false are the script's own");
    } else if (absl::StrContains(name, "-")) {
      check.Add(at, "a script reads a-b as a minus b: no '-' in an enum");
    }
    for (const FactorDefinition& f : def.factors) {
      if (f.name == name) {
        check.Add(at, absl::StrCat("\"", name,
                                   "\" is a factor too: a "
                                   "script would not know which it reads"));
      }
    }
  }
}

}  // namespace

namespace internal {

std::vector<ValidationIssue> ValidateFlat(const SetDefinition& def) {
  std::vector<ValidationIssue> issues;
  Checker check(&issues);
  check.Identifier("name", def.name);
  CheckSetFactors(check, def);
  CheckEnums(check, def);
  CheckFactors(check, "target_factors", def.target_factors);
  if (def.actions.empty() && !def.tree) {
    check.Add("actions",
              "at least one action is required (only a set with a tree may "
              "have none)");
  }
  if (def.actions.size() > static_cast<size_t>(kMaxActions)) {
    check.Add("actions", absl::StrCat("at most ", kMaxActions, " actions, got ",
                                      def.actions.size()));
  }
  absl::flat_hash_set<std::string> action_names;
  bool any_per_target = false;
  for (size_t i = 0; i < def.actions.size(); ++i) {
    const ActionDefinition& a = def.actions[i];
    const std::string at = absl::StrCat("actions[", i, "]");
    check.Identifier(at + ".name", a.name);
    if (!a.name.empty() && !action_names.insert(a.name).second) {
      check.Add(at + ".name",
                absl::StrCat("duplicate action \"", a.name, "\""));
    }
    check.AtLeast(at + ".weight", a.weight, 0);
    check.AtLeast(at + ".cooldown_seconds", a.cooldown_seconds, 0);
    if (a.considerations.size() >
        static_cast<size_t>(kMaxConsiderationsPerAction)) {
      check.Add(at + ".considerations",
                absl::StrCat("at most ", kMaxConsiderationsPerAction,
                             " considerations, got ", a.considerations.size()));
    }
    absl::flat_hash_set<std::string> names;
    bool reads_target = false;
    for (size_t j = 0; j < a.considerations.size(); ++j) {
      const ConsiderationDefinition& c = a.considerations[j];
      const std::string cat = absl::StrCat(at, ".considerations[", j, "]");
      CheckConsideration(check, cat, def, a, c);
      if (!c.name.empty() && !names.insert(c.name).second) {
        check.Add(cat + ".name",
                  absl::StrCat("duplicate consideration \"", c.name,
                               "\" in action \"", a.name, "\""));
      }
      reads_target |= c.per_target;
    }
    if (a.per_target) {
      any_per_target = true;
      if (!reads_target) {
        check.Add(at + ".per_target",
                  "no consideration is per_target, so every target would "
                  "score the same");
      }
    }
  }
  if (any_per_target && def.target_factors.empty()) {
    check.Add("target_factors",
              "per-target actions need at least one target factor");
  }
  const bool product = def.aggregation == Aggregation::kProduct;
  if (!product && def.compensation != Compensation::kDefault &&
      def.compensation != Compensation::kNone) {
    check.Add("scoring.compensation",
              "applies only to the product aggregation (use none)");
  }
  const SelectionDefinition& sel = def.selection;
  if (sel.strategy == Strategy::kTopK && sel.top_k < 1) {
    check.Add("selection.top_k.k",
              absl::StrCat("must be >= 1, got ", sel.top_k));
  }
  if (sel.strategy == Strategy::kSoftmax &&
      check.Finite("selection.softmax.temperature", sel.temperature) &&
      sel.temperature <= 0) {
    check.Add("selection.softmax.temperature",
              absl::StrCat("must be > 0, got ", sel.temperature));
  }
  check.AtLeast("selection.commitment_bonus", sel.commitment_bonus, 0);
  check.AtLeast("selection.min_score", sel.min_score, 0);
  if (!sel.fallback_action.empty()) {
    std::vector<std::string> names;
    const ActionDefinition* fallback = nullptr;
    for (const auto& a : def.actions) {
      names.push_back(a.name);
      if (a.name == sel.fallback_action) fallback = &a;
    }
    if (fallback == nullptr) {
      check.Unknown("selection.fallback_action", "action", sel.fallback_action,
                    names);
    } else if (fallback->per_target) {
      check.Add("selection.fallback_action",
                absl::StrCat("\"", sel.fallback_action,
                             "\" is per_target; a fallback must not need a "
                             "target"));
    }
  }
  CheckPersonalities(check, def);
  CheckResources(check, def);
  return issues;
}

}  // namespace internal

// Compile's steps, each filling its part of the set from a validated
// definition.
struct SetCompiler {
  // Everything but the tree, from a definition ValidateFlat accepts.
  static CompiledBehaviourSet Flat(const SetDefinition& def) {
    CompiledBehaviourSet set;
    set.name_ = def.name;
    set.revision_ = def.revision;
    set.aggregation_ = def.aggregation;
    set.compensation_ = def.compensation;
    if (set.compensation_ == Compensation::kDefault) {
      set.compensation_ = def.aggregation == Aggregation::kProduct
                              ? Compensation::kPerConsideration
                              : Compensation::kNone;
    }
    set.selection_ = def.selection;
    set.factors_ = def.factors;
    set.target_factors_ = def.target_factors;
    for (size_t i = 0; i < def.factors.size(); ++i) {
      set.factor_index_[def.factors[i].name] = static_cast<int>(i);
    }
    for (size_t i = 0; i < def.target_factors.size(); ++i) {
      set.target_factor_index_[def.target_factors[i].name] =
          static_cast<int>(i);
    }
    SetCompiler::Actions(def, set);
    if (!def.selection.fallback_action.empty()) {
      set.fallback_action_ =
          set.action_index_.at(def.selection.fallback_action);
    }
    SetCompiler::Resources(def, set);
    SetCompiler::Personalities(def, set);
    return set;
  }

  static void AttachTree(CompiledBehaviourSet& set,
                         std::shared_ptr<const CompiledTree> tree) {
    set.tree_ = std::move(tree);
  }
  static void Actions(const SetDefinition& def, CompiledBehaviourSet& set) {
    for (size_t i = 0; i < def.actions.size(); ++i) {
      const ActionDefinition& a = def.actions[i];
      set.action_index_[a.name] = static_cast<int>(i);
      CompiledAction ca;
      ca.name = a.name;
      ca.first_consideration =
          static_cast<uint32_t>(set.considerations_.size());
      ca.consideration_count = static_cast<uint32_t>(a.considerations.size());
      ca.weight = static_cast<float>(a.weight);
      ca.rank = a.rank;
      ca.cooldown_seconds = static_cast<float>(a.cooldown_seconds);
      ca.per_target = a.per_target;
      set.has_per_target_actions_ |= a.per_target;
      ca.first_use = static_cast<uint32_t>(set.uses_.size());
      for (const ResourceUseDefinition& u : a.uses) {
        const auto r = absl::c_find_if(
            def.resources, [&](const auto& x) { return x.name == u.resource; });
        set.uses_.push_back({static_cast<int32_t>(r - def.resources.begin()),
                             static_cast<int32_t>(u.amount)});
      }
      ca.use_count = static_cast<uint32_t>(a.uses.size());
      for (const ConsiderationDefinition& c : a.considerations) {
        set.considerations_.push_back(Consideration(def, c, set));
        ca.compensated_count += c.gate ? 0 : 1;
      }
      set.actions_.push_back(std::move(ca));
    }
  }

  static CompiledConsideration Consideration(const SetDefinition& def,
                                             const ConsiderationDefinition& c,
                                             CompiledBehaviourSet& set) {
    CompiledConsideration cc;
    cc.name = c.name;
    cc.per_target = c.per_target;
    const auto& pool = c.per_target ? def.target_factors : def.factors;
    const auto& index =
        c.per_target ? set.target_factor_index_ : set.factor_index_;
    cc.factor = index.at(c.factor);
    const double lo = c.range_min.value_or(pool[cc.factor].min);
    const double hi = c.range_max.value_or(pool[cc.factor].max);
    cc.range_lo = static_cast<float>(lo);
    cc.range_span = static_cast<float>(hi - lo);
    cc.curve = CompileCurve(c.curve, &set.curve_points_);
    cc.output_min = static_cast<float>(c.output_min);
    cc.output_span = static_cast<float>(c.output_max - c.output_min);
    cc.weight = static_cast<float>(c.weight);
    cc.gate = c.gate;
    return cc;
  }

  static void Resources(const SetDefinition& def, CompiledBehaviourSet& set) {
    for (const ResourceDefinition& r : def.resources) {
      CompiledResource cr{.name = r.name,
                          .per_target = r.per_target,
                          .capacity = static_cast<int32_t>(r.capacity)};
      if (r.preemption_margin.has_value()) {
        cr.preemption_margin = static_cast<float>(*r.preemption_margin);
      }
      set.resources_.push_back(std::move(cr));
    }
  }

  static void Personalities(const SetDefinition& def,
                            CompiledBehaviourSet& set) {
    const size_t n_actions = set.actions_.size();
    for (size_t p = 0; p < def.personalities.size(); ++p) {
      const PersonalityDefinition& pd = def.personalities[p];
      set.personality_index_[pd.name] = static_cast<int>(p);
      set.personality_names_.push_back(pd.name);
      const size_t action_base = set.personality_action_weights_.size();
      set.personality_action_weights_.resize(action_base + n_actions, 1.0f);
      for (const auto& [name, w] : pd.action_weights) {
        set.personality_action_weights_[action_base +
                                        set.action_index_.at(name)] =
            static_cast<float>(w);
      }
      const size_t c_base = set.personality_consideration_weights_.size();
      for (const auto& c : set.considerations_) {
        set.personality_consideration_weights_.push_back(c.weight);
      }
      // Names first, then "action.consideration" keys, so the specific key
      // wins over the general one whatever order they were written in.
      for (int pass = 0; pass < 2; ++pass) {
        for (const auto& [key, w] : pd.consideration_weights) {
          const bool qualified = key.find('.') != std::string::npos;
          if (qualified != (pass == 1)) continue;
          ConsiderationWeight(set, key, static_cast<float>(w), c_base);
        }
      }
    }
  }

  // Sets weight `w` of every consideration `key` names (its name, or
  // "action.consideration") in the personality starting at `base`.
  static void ConsiderationWeight(CompiledBehaviourSet& set,
                                  const std::string& key, float w,
                                  size_t base) {
    for (const CompiledAction& ca : set.actions_) {
      for (uint32_t k = 0; k < ca.consideration_count; ++k) {
        const uint32_t ci = ca.first_consideration + k;
        const std::string& cname = set.considerations_[ci].name;
        if (key == cname || key == absl::StrCat(ca.name, ".", cname)) {
          set.personality_consideration_weights_[base + ci] = w;
        }
      }
    }
  }
};

namespace internal {

absl::Status IssuesStatus(const std::vector<ValidationIssue>& issues) {
  if (issues.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const auto& i : issues) lines.push_back(i.path + ": " + i.message);
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

void AttachTree(CompiledBehaviourSet& set,
                std::shared_ptr<const CompiledTree> tree) {
  SetCompiler::AttachTree(set, std::move(tree));
}

absl::StatusOr<CompiledBehaviourSet> CompileFlat(const SetDefinition& def) {
  if (absl::Status s = IssuesStatus(ValidateFlat(def)); !s.ok()) return s;
  return SetCompiler::Flat(def);
}

}  // namespace internal

namespace {
int Lookup(const absl::flat_hash_map<std::string, int>& index,
           absl::string_view name) {
  auto it = index.find(name);
  return it == index.end() ? -1 : it->second;
}
}  // namespace

int CompiledBehaviourSet::FindFactor(absl::string_view name) const {
  return Lookup(factor_index_, name);
}
int CompiledBehaviourSet::FindTargetFactor(absl::string_view name) const {
  return Lookup(target_factor_index_, name);
}
int CompiledBehaviourSet::FindAction(absl::string_view name) const {
  return Lookup(action_index_, name);
}
int CompiledBehaviourSet::FindPersonality(absl::string_view name) const {
  return Lookup(personality_index_, name);
}

}  // namespace utilityd::engine

namespace utilityd::engine {

const char* StrategyName(Strategy strategy) {
  switch (strategy) {
    case Strategy::kHighest:
      return "highest";
    case Strategy::kWeightedRandom:
      return "weighted_random";
    case Strategy::kTopK:
      return "top_k";
    case Strategy::kSoftmax:
      return "softmax";
  }
  return "unknown";
}

}  // namespace utilityd::engine
