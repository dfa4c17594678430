// Analyse: the considerations' ranges, the actions' reach, dominance,
// coverage and the scenarios' margins, gathered into one SetAnalysis.
#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "model.h"
#include "reach.h"
#include "report.h"
#include "tree_reach.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/engine/sensitivity.h"

namespace utilityd::analysis {
namespace internal {

void AddFinding(v1::SetAnalysis* out, const std::string& kind,
                const std::string& subject, const std::string& message) {
  v1::Finding* f = out->add_findings();
  f->set_kind(kind);
  f->set_subject(subject);
  f->set_message(message);
}

std::string Number(double x) { return absl::StrFormat("%.4g", x); }

v1::Scenario AsScenario(const Model& model, const std::vector<double>& point,
                        bool with_target, int action, int current) {
  const engine::CompiledBehaviourSet& set = model.set();
  v1::Scenario s;
  s.set_name(absl::StrCat("analyse: ", set.actions()[action].name, " wins"));
  v1::ScenarioTarget* target = with_target ? s.add_targets() : nullptr;
  if (target != nullptr) target->set_id("t1");
  for (size_t d = 0; d < point.size(); ++d) {
    const Dim& dim = model.dims()[d];
    const double v = static_cast<float>(point[d]);
    if (dim.target) {
      (*target->mutable_factors())[set.target_factors()[dim.index].name] = v;
    } else {
      (*s.mutable_factors())[dim.name] = v;
    }
  }
  if (current >= 0) s.set_current_action(set.actions()[current].name);
  s.set_expected_action(set.actions()[action].name);
  if (with_target) s.set_expected_target("t1");
  return s;
}

}  // namespace internal

namespace {

using internal::AddFinding;
using internal::AsScenario;
using internal::Box;
using internal::Dim;
using internal::Model;
using internal::Number;
using internal::Range;
using internal::ReachKind;
using internal::ReachResult;

// Each consideration over its factor's declared range.
void Considerations(const Model& model, v1::SetAnalysis* out) {
  const engine::CompiledBehaviourSet& set = model.set();
  const bool sum = set.aggregation() == engine::Aggregation::kWeightedSum;
  for (const engine::CompiledAction& a : set.actions()) {
    for (uint32_t k = 0; k < a.consideration_count; ++k) {
      const int c = static_cast<int>(a.first_consideration + k);
      const engine::CompiledConsideration& cc = set.considerations()[c];
      const Dim& dim = model.dims()[model.DimOf(c)];
      const Range r = model.TermRange(c, dim.lo, dim.hi);
      v1::ConsiderationRange* x = out->add_considerations();
      x->set_action(a.name);
      x->set_consideration(cc.name);
      x->set_factor(dim.name);
      x->set_per_target(cc.per_target);
      x->set_min_contribution(static_cast<float>(r.lo));
      x->set_max_contribution(static_cast<float>(r.hi));
      // Where the bookends clamp it within the factor's range.
      const double b0 =
          std::min<double>(cc.range_lo, cc.range_lo + cc.range_span);
      const double b1 =
          std::max<double>(cc.range_lo, cc.range_lo + cc.range_span);
      const double full = dim.hi - dim.lo;
      const double inside =
          std::max(0.0, std::min(b1, dim.hi) - std::max(b0, dim.lo));
      const double plateau = full > 0 ? 1.0 - inside / full : 0;
      x->set_plateau_share(plateau);
      const std::string subject = absl::StrCat(a.name, ".", cc.name);
      const std::string where =
          absl::StrCat(dim.name, " ", Number(dim.lo), "..", Number(dim.hi));
      if (!sum && r.hi <= 0) {
        AddFinding(out, "always_veto", subject,
                   absl::StrCat(
                       "vetoes everywhere: its contribution is 0 over all of ",
                       where, " (", a.name, " can never score)"));
      } else if (r.lo == r.hi) {
        AddFinding(
            out, r.lo == 1 && !sum ? "neutral" : "constant", subject,
            absl::StrCat(
                r.lo == 1 && !sum ? "never lowers the score: " : "constant: ",
                "it gives ", Number(r.lo), " over all of ", where));
      } else if (plateau >= 0.5) {
        AddFinding(
            out, "plateau", subject,
            absl::StrFormat("flat on %.0f%% of %s: its bookends %s..%s cover "
                            "only part of the factor's range",
                            100 * plateau, where, Number(b0), Number(b1)));
      }
      for (int g = 0; g <= 256; ++g) {
        if (std::isnan(model.Term(c, dim.lo + full * g / 256))) {
          AddFinding(out, "nan", subject,
                     absl::StrCat("its curve gives NaN at ", dim.name, " = ",
                                  Number(dim.lo + full * g / 256),
                                  ": check its parameters"));
          break;
        }
      }
    }
  }
}

// "outscored by hide in 12 parts, vetoed in 3".
std::string Why(const engine::CompiledBehaviourSet& set,
                const std::vector<internal::Part>& parts) {
  std::map<std::string, int> counts;
  for (const internal::Part& p : parts) {
    std::string key = p.reason;
    if (p.by >= 0) absl::StrAppend(&key, " by ", set.actions()[p.by].name);
    ++counts[key];
  }
  std::vector<std::string> out;
  for (const auto& [k, n] : counts) {
    out.push_back(absl::StrCat(k, " in ", n, n == 1 ? " part" : " parts"));
  }
  return absl::StrJoin(out, ", ");
}

// Each action's reach from a fresh state, and from each rival's running.
void Actions(const Model& model, const AnalysisOptions& o,
             v1::SetAnalysis* out) {
  const engine::CompiledBehaviourSet& set = model.set();
  const int n = set.action_count();
  for (int a = 0; a < n; ++a) {
    const engine::CompiledAction& action = set.actions()[a];
    v1::ActionReach* x = out->add_actions();
    x->set_action(action.name);
    const ReachResult r =
        internal::Reach(model, a, -1, o.max_boxes, o.min_width);
    x->set_boxes(r.boxes);
    switch (r.kind) {
      case ReachKind::kAlive:
        x->set_reach(v1::REACH_ALIVE);
        *x->mutable_witness() =
            AsScenario(model, r.witness, r.witness_has_target, a, -1);
        break;
      case ReachKind::kDead: {
        x->set_reach(v1::REACH_DEAD);
        for (const internal::Part& p : r.certificate) {
          if (x->certificate_size() >= 64) break;
          v1::CertificatePart* c = x->add_certificate();
          c->mutable_low()->Add(p.box.lo.begin(), p.box.lo.end());
          c->mutable_high()->Add(p.box.hi.begin(), p.box.hi.end());
          c->set_reason(p.reason);
          if (p.by >= 0) c->set_by(set.actions()[p.by].name);
        }
        AddFinding(
            out, "dead", action.name,
            absl::StrCat("can never be selected: ", Why(set, r.certificate),
                         " (", r.certificate.size(), " parts of the box)"));
        break;
      }
      case ReachKind::kUndecided:
        x->set_reach(v1::REACH_UNDECIDED);
        AddFinding(
            out, "undecided", action.name,
            absl::StrCat("neither a situation where it is selected nor a "
                         "proof that there is none within ",
                         r.boxes, " boxes (raise --budget)"));
        break;
    }
    // Whom it can never take over from: their commitment bonus.
    if (r.kind != ReachKind::kAlive || set.selection().commitment_bonus <= 0) {
      continue;
    }
    for (int c = 0; c < n; ++c) {
      if (c == a) continue;
      const ReachResult rc = internal::Reach(
          model, a, c, std::max<int64_t>(1, o.max_boxes / 4), o.min_width);
      if (rc.kind != ReachKind::kDead) continue;
      x->add_never_interrupts(set.actions()[c].name);
      AddFinding(
          out, "never_interrupts", action.name,
          absl::StrCat("can never take over while ", set.actions()[c].name,
                       " runs (its commitment bonus ",
                       Number(set.selection().commitment_bonus),
                       "): ", Why(set, rc.certificate)));
    }
  }
}

void Dominance(const Model& model, v1::SetAnalysis* out) {
  const engine::CompiledBehaviourSet& set = model.set();
  bool separable = true;
  for (int a = 0; a < set.action_count() && separable; ++a) {
    for (int b = 0; b < set.action_count(); ++b) {
      if (a == b) continue;
      const std::optional<bool> never = internal::NeverAbove(model, a, b);
      if (!never.has_value()) {
        separable = false;
        break;
      }
      if (!*never) continue;
      // Two actions scoring alike everywhere: the later one is reported.
      if (*internal::NeverAbove(model, b, a) && a < b) continue;
      // A per-target rival needs a target: without one a flat action
      // competes without it.
      if (set.actions()[b].per_target && !set.actions()[a].per_target) {
        continue;
      }
      // A rival of a lower rank never matters: the higher rank wins
      // whatever the scores. The list, the table's note and the findings
      // name the same rivals (docs/ANALYSIS.md, "Dominance").
      if (set.actions()[a].rank > set.actions()[b].rank) continue;
      out->mutable_actions(a)->add_dominated_by(set.actions()[b].name);
      AddFinding(out, "dominated", set.actions()[a].name,
                 absl::StrCat("never scores above ", set.actions()[b].name,
                              " anywhere in the box"));
    }
  }
  if (!separable) {
    out->add_not_analysed(
        "dominance: the min aggregation and on_product compensation do not "
        "separate into one-factor terms");
  }
}

uint64_t SplitMix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Wilson's 95% interval of k successes in n.
std::pair<double, double> Wilson(int64_t k, int64_t n) {
  if (n == 0) return {0, 1};
  const double z = 1.959964, p = static_cast<double>(k) / n;
  const double d = 1 + z * z / n;
  const double c = (p + z * z / (2 * n)) / d;
  const double h = z * std::sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / d;
  return {std::max(0.0, c - h), std::min(1.0, c + h)};
}

absl::Status Coverage(const Model& model, const AnalysisOptions& o,
                      v1::SetAnalysis* out) {
  const engine::CompiledBehaviourSet& set = model.set();
  const bool with_target = set.has_per_target_actions();
  const Box box = model.FullBox(with_target);
  std::vector<int64_t> wins(set.action_count(), 0);
  int64_t none = 0;
  uint64_t state = o.seed;
  std::vector<double> point(box.lo.size());
  for (int64_t s = 0; s < o.coverage_samples; ++s) {
    for (size_t d = 0; d < point.size(); ++d) {
      const double u = (SplitMix(&state) >> 11) * 0x1.0p-53;
      point[d] = box.lo[d] + u * (box.hi[d] - box.lo[d]);
    }
    const int w = model.Winner(point, with_target, -1, -1, nullptr);
    if (w < 0)
      ++none;
    else
      ++wins[w];
  }
  v1::Coverage* c = out->mutable_coverage();
  c->set_samples(o.coverage_samples);
  c->set_none(o.coverage_samples > 0
                  ? static_cast<double>(none) / o.coverage_samples
                  : 0);
  for (int a = 0; a < set.action_count(); ++a) {
    v1::ActionReach* x = out->mutable_actions(a);
    const auto [lo, hi] = Wilson(wins[a], o.coverage_samples);
    x->set_coverage(o.coverage_samples > 0
                        ? static_cast<double>(wins[a]) / o.coverage_samples
                        : 0);
    x->set_coverage_low(lo);
    x->set_coverage_high(hi);
  }
  if (o.map_x.empty() && o.map_y.empty()) return absl::OkStatus();
  int mx = -1, my = -1;
  for (size_t d = 0; d < model.dims().size(); ++d) {
    if (!with_target && model.dims()[d].target) continue;
    if (model.dims()[d].name == o.map_x) mx = static_cast<int>(d);
    if (model.dims()[d].name == o.map_y) my = static_cast<int>(d);
  }
  if (mx < 0 || my < 0 || mx == my) {
    std::vector<std::string> names;
    for (const Dim& d : model.dims()) names.push_back(d.name);
    return absl::InvalidArgumentError(absl::StrCat(
        "--map: expected two different factors of ", set.name(), " (",
        absl::StrJoin(names, ", "), "), got ", o.map_x, ",", o.map_y));
  }
  c->set_map_x(o.map_x);
  c->set_map_y(o.map_y);
  for (size_t d = 0; d < point.size(); ++d) {
    point[d] = 0.5 * (box.lo[d] + box.hi[d]);
  }
  const std::string symbols = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int a = 0; a < set.action_count(); ++a) {
    (*c->mutable_legend())[std::string(1, symbols[a % symbols.size()])] =
        set.actions()[a].name;
  }
  (*c->mutable_legend())["."] = "(nothing selected)";
  for (int row = o.map_rows - 1; row >= 0; --row) {
    std::string line;
    point[my] =
        box.lo[my] + (box.hi[my] - box.lo[my]) * (row + 0.5) / o.map_rows;
    for (int col = 0; col < o.map_columns; ++col) {
      point[mx] =
          box.lo[mx] + (box.hi[mx] - box.lo[mx]) * (col + 0.5) / o.map_columns;
      const int w = model.Winner(point, with_target, -1, -1, nullptr);
      line += w < 0 ? '.' : symbols[w % symbols.size()];
    }
    c->add_map_rows(line);
  }
  return absl::OkStatus();
}

void Scenarios(const loader::LoadedSet& loaded, const AnalysisOptions& o,
               v1::SetAnalysis* out) {
  const engine::CompiledBehaviourSet& set = loaded.compiled;
  codec::AgentScratch scratch;
  engine::SensitivityAnalyser analyser;
  std::vector<engine::FactorSensitivity> sensitivity;
  for (const v1::Scenario& scenario : loaded.definition.scenarios()) {
    const v1::AgentSnapshot snapshot =
        codec::ScenarioSnapshot(loaded.name(), scenario);
    engine::AgentInput input;
    if (!codec::ResolveAgent(loaded, snapshot, &scratch, &input).ok() ||
        !engine::Decide(set, input, engine::ExplainLevel::kTop,
                        &scratch.decision)
             .ok()) {
      continue;  // utilityctl validate names what is wrong
    }
    const engine::Decision& d = scratch.decision;
    v1::ScenarioMargin* x = out->add_scenarios();
    x->set_scenario(scenario.name());
    x->set_expected_action(scenario.expected_action());
    if (d.action >= 0) x->set_winner(set.actions()[d.action].name);
    x->set_score(d.score);
    if (d.runner_up_action >= 0) {
      x->set_runner_up(set.actions()[d.runner_up_action].name);
      x->set_margin(d.score - d.runner_up_score);
    } else {
      x->set_margin(d.score);
    }
    double nearest = INFINITY;
    if (analyser.Analyse(set, input, &sensitivity).ok()) {
      for (const engine::FactorSensitivity& s : sensitivity) {
        const engine::FactorDefinition& def =
            s.target_factor ? set.target_factors()[s.factor]
                            : set.factors()[s.factor];
        const double range = def.max - def.min;
        for (const engine::Crossing* c : {&s.below, &s.above}) {
          if (!c->found || range <= 0) continue;
          const double share = std::abs(c->value - s.current) / range;
          if (share < nearest) {
            nearest = share;
            x->set_nearest_factor(s.target_factor ? "target." + def.name
                                                  : def.name);
            x->set_nearest_value(c->value);
            x->set_nearest_share(share);
          }
        }
      }
    }
    const bool failing = !scenario.expected_action().empty() &&
                         x->winner() != scenario.expected_action();
    // A negative margin is a higher rank winning over a higher score: its
    // distance from flipping is the nearest change alone.
    const bool fragile =
        !failing && d.action >= 0 &&
        ((x->margin() >= 0 && x->margin() < o.fragile_margin * d.score) ||
         nearest < o.fragile_share);
    x->set_fragile(fragile);
    if (failing) {
      AddFinding(
          out, "failing_scenario", scenario.name(),
          absl::StrCat("expects ", scenario.expected_action(), ", ",
                       x->winner().empty() ? "nothing" : x->winner(), " wins"));
    } else if (fragile) {
      AddFinding(
          out, "fragile_scenario", scenario.name(),
          absl::StrCat(x->winner(), " wins by ", Number(x->margin()),
                       x->runner_up().empty() ? "" : " over " + x->runner_up(),
                       x->nearest_factor().empty()
                           ? ""
                           : absl::StrFormat("; %s at %s flips it (%.1f%% of "
                                             "its range away)",
                                             x->nearest_factor(),
                                             Number(x->nearest_value()),
                                             100 * x->nearest_share())));
    }
  }
}

// Marks the findings the set's author accepts (analysis.accept), and
// reports accept entries that match nothing (the finding is gone: the note
// can go too).
void Accept(const loader::LoadedSet& loaded, v1::SetAnalysis* out) {
  const auto& accept = loaded.definition.analysis().accept();
  std::vector<bool> used(accept.size(), false);
  for (v1::Finding& f : *out->mutable_findings()) {
    for (int k = 0; k < accept.size(); ++k) {
      if (accept[k].kind() == f.kind() && accept[k].subject() == f.subject()) {
        f.set_accepted(accept[k].reason());
        used[k] = true;
      }
    }
  }
  for (int k = 0; k < accept.size(); ++k) {
    if (used[k]) continue;
    AddFinding(
        out, "unused_accept", accept[k].subject(),
        absl::StrCat("analysis.accept[", k, "] accepts a ", accept[k].kind(),
                     " finding that analyse no longer reports"));
  }
}

// Findings in the order a designer reads them.
void SortFindings(v1::SetAnalysis* out) {
  static const std::vector<std::string> order = {
      "dead",        "never_entered",    "never_chosen",     "undecided",
      "always_veto", "never_holds",      "always_holds",     "never_interrupts",
      "dominated",   "failing_scenario", "fragile_scenario", "nan",
      "constant",    "neutral",          "plateau",          "unused_accept"};
  auto rank = [&](const v1::Finding& f) {
    return std::find(order.begin(), order.end(), f.kind()) - order.begin();
  };
  std::stable_sort(out->mutable_findings()->begin(),
                   out->mutable_findings()->end(),
                   [&](const v1::Finding& x, const v1::Finding& y) {
                     return rank(x) < rank(y);
                   });
}

}  // namespace

absl::StatusOr<v1::SetAnalysis> Analyse(const loader::LoadedSet& loaded,
                                        const AnalysisOptions& options) {
  v1::SetAnalysis out;
  out.set_behaviour_set(loaded.name());
  out.set_revision(loaded.revision());
  const Model model(loaded.compiled);
  Considerations(model, &out);
  if (loaded.compiled.tree() != nullptr) {
    // Its actions are leaves the tree chooses by its nodes, not candidates
    // competing by score: the tree's reach instead of the actions'.
    internal::AnalyseTree(model, options, &out);
    Accept(loaded, &out);
    SortFindings(&out);
    return out;
  }
  Actions(model, options, &out);
  Dominance(model, &out);
  if (absl::Status s = Coverage(model, options, &out); !s.ok()) return s;
  Scenarios(loaded, options, &out);
  if (loaded.compiled.personality_count() > 0) {
    out.add_not_analysed(
        "personalities: the box is analysed without one (their multipliers "
        "change which actions can win)");
  }
  Accept(loaded, &out);
  SortFindings(&out);
  return out;
}

}  // namespace utilityd::analysis
