// Tune: the smallest change of action weights that makes every scenario
// pass with its margin. An action weight multiplies every score of the
// action, so in log weights each demand "E at least (1 + m) x R" is a
// difference constraint y_E - y_R >= c; minimising sum |y| over them is a
// linear program (COIN-OR CLP). No solution means a cycle of demands whose
// sum cannot hold: Bellman-Ford finds it and names its scenarios.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tune_internal.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/scenarios.h"

#ifdef UTILITYD_HAVE_CLP
#include "ClpSimplex.hpp"
#include "CoinPackedMatrix.hpp"
#include "CoinPackedVector.hpp"
#endif

namespace utilityd::analysis {
namespace internal {

constexpr double kUnbounded = 1e30;

// One demand: y[hi] - y[lo] >= c (action indexes; -1 is the fixed zero,
// for bounds), from a scenario.
struct Demand {
  int hi = -1, lo = -1;
  double c = 0;
  std::string why;
};

absl::Status DecideScenario(const loader::LoadedSet& set, const v1::Scenario& s,
                            Decided* d) {
  d->scenario = &s;
  d->snapshot = codec::ScenarioSnapshot(set.name(), s);
  if (absl::Status st =
          codec::ResolveAgent(set, d->snapshot, &d->scratch, &d->input);
      !st.ok()) {
    return st;
  }
  return engine::Decide(set.compiled, d->input, engine::ExplainLevel::kFull,
                        &d->decision);
}

// The expected candidate: the expected action at the expected target (or
// its best target).
const engine::CandidateTrace* Expected(const loader::LoadedSet& set,
                                       const Decided& d) {
  const int a = set.compiled.FindAction(d.scenario->expected_action());
  const engine::CandidateTrace* best = nullptr;
  for (const engine::CandidateTrace& c : d.decision.candidates) {
    if (c.action != a) continue;
    if (!d.scenario->expected_target().empty() &&
        (c.target < 0 || c.target >= d.snapshot.targets_size() ||
         d.snapshot.targets(c.target).target_id() !=
             d.scenario->expected_target())) {
      continue;
    }
    if (best == nullptr || c.score > best->score) best = &c;
  }
  return best;
}

v1::ScenarioMargin Margin(const loader::LoadedSet& set, const Decided& d) {
  v1::ScenarioMargin m;
  m.set_scenario(d.scenario->name());
  m.set_expected_action(d.scenario->expected_action());
  if (d.decision.action >= 0) {
    m.set_winner(set.compiled.actions()[d.decision.action].name);
  }
  m.set_score(d.decision.score);
  if (d.decision.runner_up_action >= 0) {
    m.set_runner_up(set.compiled.actions()[d.decision.runner_up_action].name);
  }
  m.set_margin(d.decision.score - d.decision.runner_up_score);
  return m;
}

// Bellman-Ford over the demands (edge hi -> lo, weight -c): a negative
// cycle is a set of demands no weights meet. Returns its reasons.
std::vector<std::string> NegativeCycle(int actions,
                                       const std::vector<Demand>& demands) {
  const int n = actions + 1;  // node `actions` is the fixed zero
  auto node = [&](int a) { return a < 0 ? actions : a; };
  std::vector<double> dist(n, 0);
  std::vector<int> via(n, -1);  // the demand that last relaxed the node
  int touched = -1;
  for (int round = 0; round < n; ++round) {
    touched = -1;
    for (size_t k = 0; k < demands.size(); ++k) {
      const Demand& d = demands[k];
      const int u = node(d.hi), v = node(d.lo);
      if (dist[u] - d.c < dist[v] - 1e-12) {
        dist[v] = dist[u] - d.c;
        via[v] = static_cast<int>(k);
        touched = v;
      }
    }
    if (touched < 0) return {};
  }
  // Walk back n steps to land on the cycle, then around it.
  int v = touched;
  for (int i = 0; i < n; ++i) v = node(demands[via[v]].hi);
  std::vector<std::string> cycle;
  int u = v;
  do {
    const Demand& d = demands[via[u]];
    cycle.push_back(d.why);
    u = node(d.hi);
  } while (u != v && cycle.size() <= demands.size());
  std::reverse(cycle.begin(), cycle.end());
  std::sort(cycle.begin(), cycle.end());
  cycle.erase(std::unique(cycle.begin(), cycle.end()), cycle.end());
  return cycle;
}

bool SolveProgram(const Program& p, std::vector<double>* x) {
#ifdef UTILITYD_HAVE_CLP
  // Columns: x_v = pos_v - neg_v, both >= 0, cost on each; the bounds of
  // x_v are rows, since they need not contain 0.
  const int vars = static_cast<int>(p.cost.size());
  std::vector<double> lower(2 * vars, 0), upper(2 * vars, COIN_DBL_MAX),
      objective;
  for (int v = 0; v < vars; ++v) {
    objective.push_back(p.cost[v]);
    objective.push_back(p.cost[v]);
  }
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, 2 * vars);
  std::vector<double> row_lower, row_upper;
  auto add = [&](const std::vector<std::pair<int, double>>& terms, double lo,
                 double hi) {
    std::map<int, double> merged;  // a variable once per row
    for (const auto& [v, k] : terms) merged[v] += k;
    CoinPackedVector row;
    for (const auto& [v, k] : merged) {
      if (k == 0) continue;
      row.insert(2 * v, k);
      row.insert(2 * v + 1, -k);
    }
    matrix.appendRow(row);
    row_lower.push_back(lo);
    row_upper.push_back(hi);
  };
  for (int v = 0; v < vars; ++v) {
    add({{v, 1.0}}, p.lower[v], p.upper[v]);
  }
  for (const Program::Row& r : p.rows) add(r.terms, r.rhs, COIN_DBL_MAX);
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(matrix, lower.data(), upper.data(), objective.data(),
                    row_lower.data(), row_upper.data());
  model.primal();
  if (!model.isProvenOptimal()) return false;
  const double* solution = model.primalColumnSolution();
  x->assign(vars, 0);
  for (int v = 0; v < vars; ++v) {
    (*x)[v] = solution[2 * v] - solution[2 * v + 1];
  }
  return true;
#else
  (void)p, (void)x;
  return false;
#endif
}

// Minimises sum |y_a| over the unlocked actions subject to the demands;
// false when the program has no solution.
bool Solve(int actions, const std::vector<bool>& unlocked,
           const std::vector<Demand>& demands, std::vector<double>* y) {
  Program p;
  for (int a = 0; a < actions; ++a) {
    p.lower.push_back(unlocked[a] ? -kUnbounded : 0);
    p.upper.push_back(unlocked[a] ? kUnbounded : 0);
    p.cost.push_back(1);
  }
  for (const Demand& d : demands) {
    Program::Row row{.rhs = d.c};
    if (d.hi >= 0) row.terms.push_back({d.hi, 1.0});
    if (d.lo >= 0) row.terms.push_back({d.lo, -1.0});
    p.rows.push_back(std::move(row));
  }
  return SolveProgram(p, y);
}

// The set with new action weights.
absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> WithWeights(
    const loader::LoadedSet& set, const std::vector<double>& weights) {
  v1::BehaviourSet def = set.definition;
  def.clear_revision();
  for (int a = 0; a < def.actions_size(); ++a) {
    def.mutable_actions(a)->set_weight(weights[a]);
  }
  return loader::LoadSetProto(std::move(def), set.source);
}

// The margin scenario `s` must keep.
double MarginOf(const v1::Scenario& s, const TuneOptions& o) {
  return s.has_expected_margin() ? s.expected_margin() : o.margin;
}

// The demands of one decided scenario (or the conflicts that make any
// impossible): its expected candidate at least (1 + margin) x each rival
// of its rank, eligible under min_score, above higher ranks' rivals only
// by pushing them under min_score.
void ScenarioDemands(const engine::CompiledBehaviourSet& cs, const Decided& d,
                     const engine::CandidateTrace& want, double margin,
                     std::vector<Demand>* demands,
                     std::vector<std::string>* conflicts) {
  const v1::Scenario& s = *d.scenario;
  const int E = cs.FindAction(s.expected_action());
  const double min_score = cs.selection().min_score;
  if (min_score > 0) {
    demands->push_back(
        {E, -1, std::log(min_score / want.score) + 1e-9,
         absl::StrCat("scenario \"", s.name(), "\" (min_score)")});
  }
  for (const engine::CandidateTrace& c : d.decision.candidates) {
    if (&c == &want || c.score <= 0) continue;
    const int R = c.action;
    const std::string why =
        absl::StrCat("scenario \"", s.name(), "\" (", s.expected_action(),
                     " over ", cs.actions()[R].name, ")");
    const int rank_e = cs.actions()[E].rank, rank_r = cs.actions()[R].rank;
    if (rank_r < rank_e) continue;  // outranked by E: no contest
    if (rank_r > rank_e) {
      if (min_score <= 0) {
        conflicts->push_back(
            absl::StrCat("scenario \"", s.name(), "\": ", cs.actions()[R].name,
                         " outranks ", s.expected_action(),
                         " and is eligible: weights cannot change ranks"));
      } else {  // push the rival under min_score
        demands->push_back({-1, R, std::log(c.score / min_score) + 1e-9, why});
      }
      continue;
    }
    const double need =
        std::log1p(margin) + std::log(c.score) - std::log(want.score);
    if (R != E) {
      demands->push_back({E, R, need, why});
    } else if (need > 0) {
      conflicts->push_back(absl::StrCat(
          "scenario \"", s.name(), "\": another target of ",
          s.expected_action(),
          " scores as much; its weight cannot separate its own targets"));
    }
  }
}

// Why the expected action of `d` scores 0.
std::string ZeroScore(const engine::CompiledBehaviourSet& cs, const Decided& d,
                      const engine::CandidateTrace* want) {
  const v1::Scenario& s = *d.scenario;
  std::string why = "it has no candidate";
  if (want != nullptr && want->vetoed_by >= 0) {
    const int E = cs.FindAction(s.expected_action());
    why = absl::StrCat("consideration ",
                       cs.considerations()[cs.actions()[E].first_consideration +
                                           want->vetoed_by]
                           .name,
                       " vetoes it");
  } else if (want != nullptr) {
    why = "it is vetoed";
  }
  return absl::StrCat("scenario \"", s.name(), "\": ", s.expected_action(),
                      " scores 0 (", why, "): no weight can raise it");
}

// The demands that keep a logged decision: its winner W above each
// eligible rival of its rank, W eligible under min_score, and higher ranks'
// candidates that score but are under min_score kept there. Only the
// tightest demand per pair of actions is kept, so a long log adds at most
// one row per pair to the program.
void LogDemands(const loader::LoadedSet& set, const TuneOptions& o,
                std::map<std::pair<int, int>, Demand>* tightest) {
  const engine::CompiledBehaviourSet& cs = set.compiled;
  const double min_score = cs.selection().min_score;
  const double keep = std::log1p(1e-5);  // strictly above, as decided
  auto demand = [&](int hi, int lo, double c, const std::string& why) {
    auto [it, fresh] = tightest->try_emplace({hi, lo}, Demand{hi, lo, c, why});
    if (!fresh && c > it->second.c) it->second = Demand{hi, lo, c, why};
  };
  engine::Decision d;
  for (size_t k = 0; k < o.log.size(); ++k) {
    const v1::AgentSnapshot& snapshot = o.log[k];
    if (snapshot.behaviour_set() != set.name()) continue;
    codec::AgentScratch scratch;
    engine::AgentInput input;
    if (!codec::ResolveAgent(set, snapshot, &scratch, &input).ok() ||
        !engine::Decide(cs, input, engine::ExplainLevel::kFull, &d).ok() ||
        d.action < 0 || d.score <= 0) {
      continue;  // not decided, or the fallback with nothing eligible
    }
    const int W = d.action;
    const std::string why =
        absl::StrCat("log entry ", k + 1, " (agent ", snapshot.agent_id(), ": ",
                     cs.actions()[W].name, ")");
    if (min_score > 0) demand(W, -1, std::log(min_score / d.score), why);
    for (const engine::CandidateTrace& c : d.candidates) {
      if (c.action == W || c.score <= 0) continue;
      const int rank_w = cs.actions()[W].rank,
                rank_r = cs.actions()[c.action].rank;
      if (rank_r > rank_w && min_score > 0) {
        demand(-1, c.action, std::log(c.score / min_score) + keep, why);
      } else if (rank_r == rank_w) {
        // A tie goes to the action listed first.
        const double ahead = c.action < W ? keep : 0;
        demand(W, c.action, ahead + std::log(c.score) - std::log(d.score), why);
      }
    }
  }
}

// Every scenario with an expected action, decided, and its demands.
void CollectDemands(const loader::LoadedSet& set, const TuneOptions& o,
                    v1::TuneReport* report, std::vector<Demand>* demands,
                    std::vector<std::string>* conflicts,
                    std::vector<std::unique_ptr<Decided>>* decided) {
  for (const v1::Scenario& s : set.definition.scenarios()) {
    if (s.expected_action().empty()) continue;
    auto d = std::make_unique<Decided>();
    if (absl::Status st = DecideScenario(set, s, d.get()); !st.ok()) {
      conflicts->push_back(
          absl::StrCat("scenario \"", s.name(), "\": ", st.message()));
      continue;
    }
    *report->add_before() = Margin(set, *d);
    const engine::CandidateTrace* want = Expected(set, *d);
    if (want == nullptr || want->score <= 0) {
      conflicts->push_back(ZeroScore(set.compiled, *d, want));
      continue;
    }
    ScenarioDemands(set.compiled, *d, *want, MarginOf(s, o), demands,
                    conflicts);
    decided->push_back(std::move(d));
  }
}

// The weights for log changes `y`, rounded to `digits` significant digits
// (unchanged where y is 0).
std::vector<double> Rounded(const engine::CompiledBehaviourSet& cs,
                            const std::vector<double>& y, int digits) {
  std::vector<double> weights(cs.action_count());
  for (int a = 0; a < cs.action_count(); ++a) {
    const double w = cs.actions()[a].weight * std::exp(y[a]);
    weights[a] = std::abs(y[a]) < 1e-12
                     ? cs.actions()[a].weight
                     : std::stod(absl::StrFormat("%.*g", digits, w));
  }
  return weights;
}

// Decides every scenario with the tuned set into report->after; whether
// each passes with its margin.
absl::StatusOr<bool> Check(const loader::LoadedSet& tuned,
                           const std::vector<std::unique_ptr<Decided>>& decided,
                           const TuneOptions& o, v1::TuneReport* report) {
  report->clear_after();
  bool pass = true;
  for (const auto& d : decided) {
    Decided again;
    if (!DecideScenario(tuned, *d->scenario, &again).ok()) {
      return absl::InternalError("the tuned set cannot decide a scenario");
    }
    const v1::ScenarioMargin& m = *report->add_after() = Margin(tuned, again);
    pass &= m.winner() == d->scenario->expected_action() &&
            (m.runner_up().empty() ||
             m.score() >= (1 + MarginOf(*d->scenario, o)) *
                              (m.score() - m.margin()) * (1 - 1e-6));
  }
  return pass;
}

// The log's decisions of this set that the tuned set decides otherwise.
void CountFlips(const loader::LoadedSet& set, const loader::LoadedSet& tuned,
                const TuneOptions& o, v1::TuneReport* report) {
  for (const v1::AgentSnapshot& snapshot : o.log) {
    if (snapshot.behaviour_set() != set.name()) continue;
    codec::AgentScratch a, b;
    engine::AgentInput ia, ib;
    engine::Decision da, db;
    if (!codec::ResolveAgent(set, snapshot, &a, &ia).ok() ||
        !codec::ResolveAgent(tuned, snapshot, &b, &ib).ok() ||
        !engine::Decide(set.compiled, ia, engine::ExplainLevel::kNone, &da)
             .ok() ||
        !engine::Decide(tuned.compiled, ib, engine::ExplainLevel::kNone, &db)
             .ok()) {
      continue;
    }
    report->set_log_decisions(report->log_decisions() + 1);
    if (da.action != db.action || da.target != db.target) {
      report->set_log_flipped(report->log_flipped() + 1);
    }
  }
}

absl::StatusOr<bool> Verify(
    const loader::LoadedSet& set, const loader::LoadedSet& tuned,
    const std::vector<std::unique_ptr<Decided>>& decided, const TuneOptions& o,
    v1::TuneReport* report) {
  absl::StatusOr<bool> pass = Check(tuned, decided, o, report);
  if (!pass.ok()) return pass.status();
  report->clear_log_decisions();
  report->clear_log_flipped();
  CountFlips(set, tuned, o, report);
  return *pass && !(o.keep_log && report->log_flipped() > 0);
}

// The changed weights into the report, with the YAML patch.
void WriteChanges(const engine::CompiledBehaviourSet& cs,
                  const std::vector<double>& weights, v1::TuneReport* report) {
  for (int a = 0; a < cs.action_count(); ++a) {
    if (weights[a] == cs.actions()[a].weight) continue;
    v1::WeightChange* c = report->add_changes();
    c->set_action(cs.actions()[a].name);
    c->set_from(cs.actions()[a].weight);
    c->set_to(weights[a]);
    report->set_total_change(
        report->total_change() +
        std::abs(std::log(weights[a] / cs.actions()[a].weight)));
  }
  report->set_patch(PatchYaml(*report));
}

std::string PatchYaml(const v1::TuneReport& report) {
  // action -> its weight line and, per consideration, "key: value" items
  // ("weight: 0.8", "range: {min: 2}", "curve: {logistic: {steepness: 9}}").
  std::map<std::string, std::string> weight;
  std::map<std::string,
           std::map<std::string, std::map<std::string, std::string>>>
      items;  // action, consideration, group ("weight", "range", "curve.K")
  std::vector<std::string> order;
  auto seen = [&](const std::string& a) {
    if (std::find(order.begin(), order.end(), a) == order.end())
      order.push_back(a);
  };
  for (const v1::WeightChange& c : report.changes()) {
    seen(c.action());
    weight[c.action()] = absl::StrFormat("%.9g   # was %.9g", c.to(), c.from());
  }
  for (const v1::ParamChange& c : report.params()) {
    const std::vector<std::string> part = absl::StrSplit(c.path(), '.');
    if (part.size() < 3) continue;
    seen(part[0]);
    std::string group = part[2], key = part.back();
    if (part.size() == 5) group = absl::StrCat("curve.", part[3]);
    items[part[0]][part[1]][group] += absl::StrFormat(
        "%s%s: %.9g", items[part[0]][part[1]][group].empty() ? "" : ", ", key,
        c.to());
  }
  if (order.empty()) return "";
  std::string out = "actions:\n";
  for (const std::string& a : order) {
    absl::StrAppend(&out, "  - name: ", a, "\n");
    if (weight.contains(a))
      absl::StrAppend(&out, "    weight: ", weight[a], "\n");
    if (!items.contains(a)) continue;
    absl::StrAppend(&out, "    considerations:\n");
    for (const auto& [c, groups] : items[a]) {
      absl::StrAppend(&out, "      - name: ", c, "\n");
      for (const auto& [g, text] : groups) {
        if (g == "weight") {
          absl::StrAppend(&out, "        ", text, "\n");
        } else if (absl::StartsWith(g, "curve.")) {
          absl::StrAppend(&out, "        curve: {", g.substr(6), ": {", text,
                          "}}\n");
        } else {
          absl::StrAppend(&out, "        ", g, ": {", text, "}\n");
        }
      }
    }
  }
  return out;
}

}  // namespace internal

using internal::CollectDemands;
using internal::Decided;
using internal::Demand;
using internal::LogDemands;
using internal::NegativeCycle;
using internal::Rounded;
using internal::Solve;
using internal::Verify;
using internal::WithWeights;
using internal::WriteChanges;

absl::Status ParseUnlock(absl::string_view spec, TuneOptions* options) {
  const size_t colon = spec.find(':');
  options->action_weights = options->consideration_weights = false;
  options->bookends = options->curves = false;
  for (absl::string_view what :
       absl::StrSplit(spec.substr(0, colon), '+', absl::SkipEmpty())) {
    if (what == "weights") {
      options->action_weights = options->consideration_weights = true;
    } else if (what == "action_weights") {
      options->action_weights = true;
    } else if (what == "bookends") {
      options->bookends = true;
    } else if (what == "curves") {
      options->curves = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unlock: unknown \"", what,
          "\"; expected weights, action_weights, bookends or curves (joined "
          "by +), optionally :ACTION,ACTION"));
    }
  }
  options->unlock.clear();
  if (colon != absl::string_view::npos) {
    options->unlock =
        absl::StrSplit(spec.substr(colon + 1), ',', absl::SkipEmpty());
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::TuneReport> Tune(const loader::LoadedSet& set,
                                    const TuneOptions& o) {
#ifndef UTILITYD_HAVE_CLP
  return absl::UnimplementedError(
      "tune needs COIN-OR CLP (coinor-libclp-dev), which this build lacks");
#endif
  const engine::CompiledBehaviourSet& cs = set.compiled;
  if (cs.tree() != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(set.name(),
                     " has a behaviour tree: its leaves are chosen by the "
                     "tree's nodes, which weights do not rank"));
  }
  if (o.keep_log && cs.selection().strategy != engine::Strategy::kHighest) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--keep_log: ", set.name(),
        " draws its actions at random; a logged draw is not a decision "
        "weights can keep (count the flips without --keep_log)"));
  }
  const int n = cs.action_count();
  std::vector<bool> unlocked(n, o.unlock.empty());
  for (const std::string& name : o.unlock) {
    const int a = cs.FindAction(name);
    if (a < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--unlock: ", set.name(), " has no action \"", name, "\""));
    }
    unlocked[a] = true;
  }
  if (o.consideration_weights || o.bookends || o.curves) {
    return internal::LocalTune(set, o, unlocked);
  }
  if (!o.action_weights) unlocked.assign(n, false);
  v1::TuneReport report;
  report.set_behaviour_set(set.name());
  report.set_method("exact");
  std::vector<Demand> demands;
  std::vector<std::string> conflicts;
  std::vector<std::unique_ptr<Decided>> decided;
  CollectDemands(set, o, &report, &demands, &conflicts, &decided);
  if (o.keep_log) {
    std::map<std::pair<int, int>, Demand> kept;
    LogDemands(set, o, &kept);
    for (auto& [pair, d] : kept) demands.push_back(std::move(d));
  }
  // Locked actions are the fixed zero: y_a = 0 both ways.
  for (int a = 0; a < n; ++a) {
    if (unlocked[a]) continue;
    const std::string why = absl::StrCat(cs.actions()[a].name, " is locked");
    demands.push_back({a, -1, 0, why});
    demands.push_back({-1, a, 0, why});
  }
  std::vector<double> y;
  if (conflicts.empty()) {
    std::vector<std::string> cycle = NegativeCycle(n, demands);
    if (!cycle.empty()) {
      conflicts.push_back(absl::StrCat(
          "these demands contradict each other (each wants its action above "
          "the next one's, around a cycle): ",
          absl::StrJoin(cycle, "; ")));
    } else if (!Solve(n, unlocked, demands, &y)) {
      conflicts.push_back("the linear program has no solution");
    }
  }
  if (!conflicts.empty()) {
    report.set_feasible(false);
    for (const std::string& c : conflicts) report.add_conflicts(c);
    return report;
  }
  // Rounded as a designer would write them, as long as every scenario
  // still passes with its margin.
  for (int digits : {3, 4, 6, 9}) {
    const std::vector<double> weights = Rounded(cs, y, digits);
    absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> tuned =
        WithWeights(set, weights);
    if (!tuned.ok()) return tuned.status();
    absl::StatusOr<bool> pass = Verify(set, **tuned, decided, o, &report);
    if (!pass.ok()) return pass.status();
    if (!*pass && digits < 9) continue;
    WriteChanges(cs, weights, &report);
    break;
  }
  report.set_feasible(true);
  return report;
}

std::string FormatTune(const v1::TuneReport& r) {
  std::string out = absl::StrCat(r.behaviour_set(), "\n");
  if (!r.feasible()) {
    absl::StrAppend(&out, "  no weights make every scenario pass:\n");
    for (const std::string& c : r.conflicts())
      absl::StrAppend(&out, "    ", c, "\n");
    return out;
  }
  if (r.changes().empty() && r.params().empty()) {
    absl::StrAppend(
        &out, "  every scenario passes with its margin: nothing to change\n");
  } else if (r.changes().empty()) {
    absl::StrAppend(
        &out, absl::StrFormat("  %d parameter%s changed (sum of |change| "
                              "/ scale %.4f, %s):\n",
                              r.params_size(), r.params_size() == 1 ? "" : "s",
                              r.total_change(), r.method()));
  } else {
    absl::StrAppend(
        &out, absl::StrFormat(
                  "  %d weight%s%s changed (total change %.4f, %s):\n",
                  r.changes_size(), r.changes_size() == 1 ? "" : "s",
                  r.params().empty()
                      ? ""
                      : absl::StrCat(" and ", r.params_size(), " parameter",
                                     r.params_size() == 1 ? "" : "s"),
                  r.total_change(), r.method()));
    for (const v1::WeightChange& c : r.changes()) {
      absl::StrAppend(&out, absl::StrFormat("    %-20s %.6g -> %.6g\n",
                                            c.action(), c.from(), c.to()));
    }
  }
  for (const v1::ParamChange& c : r.params()) {
    absl::StrAppend(&out, absl::StrFormat("    %-32s %.6g -> %.6g\n", c.path(),
                                          c.from(), c.to()));
  }
  absl::StrAppend(&out, absl::StrFormat("  %-34s %-22s %s\n", "scenario",
                                        "before (margin)", "after (margin)"));
  for (int i = 0; i < r.after_size(); ++i) {
    const v1::ScenarioMargin& b = r.before(i);
    const v1::ScenarioMargin& a = r.after(i);
    absl::StrAppend(
        &out,
        absl::StrFormat("  %-34s %-22s %s\n", a.scenario(),
                        absl::StrFormat("%s (%.3f)", b.winner(), b.margin()),
                        absl::StrFormat("%s (%.3f)", a.winner(), a.margin())));
  }
  if (r.log_decisions() > 0) {
    absl::StrAppend(
        &out, absl::StrFormat("  the log: %d of %d decisions change (%.2f%%)\n",
                              r.log_flipped(), r.log_decisions(),
                              100.0 * r.log_flipped() / r.log_decisions()));
  }
  if (!r.patch().empty()) absl::StrAppend(&out, "  patch:\n", r.patch());
  return out;
}

}  // namespace utilityd::analysis
