// LocalTune: action weights and consideration parameters together. A
// consideration's weight, bookends and curve parameters enter the score
// nonlinearly, so the search linearises every candidate's log score where
// it stands (action weights exactly, the parameters by central
// differences through the engine), solves the linear program of the
// demands with a trust region on each parameter, decides every situation
// with the result, and moves there when it is better — a sequential linear
// program. It ends at a set under which every scenario passes (checked by
// the engine), the smallest change near where it started.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "tune_internal.h"
#include "utilityd/codec/scenarios.h"

namespace utilityd::analysis::internal {
namespace {

namespace pb = google::protobuf;

// One unlocked consideration parameter.
struct Param {
  enum What { kWeight, kMin, kMax, kCurve };
  int action = 0, consideration = 0;
  What what = kWeight;
  const pb::FieldDescriptor* field = nullptr;  // kCurve: in the kind's message
  std::string path;
  double from = 0, lo = 0, hi = 0, scale = 1;
};

const v1::Factor* FactorOf(const v1::BehaviourSet& def,
                           const v1::Consideration& c) {
  const auto& list = c.per_target() ? def.target_factors() : def.factors();
  for (const v1::Factor& f : list) {
    if (f.name() == c.factor()) return &f;
  }
  return nullptr;
}

// The curve's kind message (the set oneof member), or nullptr.
pb::Message* CurveKind(v1::Consideration* c) {
  const pb::Reflection* r = c->mutable_curve()->GetReflection();
  const pb::OneofDescriptor* kind =
      v1::Curve::descriptor()->FindOneofByName("kind");
  const pb::FieldDescriptor* f = r->GetOneofFieldDescriptor(c->curve(), kind);
  return f == nullptr ? nullptr : r->MutableMessage(c->mutable_curve(), f);
}

// The curve's kind as the format names it ("logistic").
std::string CurveKindName(const v1::Consideration* c) {
  const pb::FieldDescriptor* f =
      c->curve().GetReflection()->GetOneofFieldDescriptor(
          c->curve(), v1::Curve::descriptor()->FindOneofByName("kind"));
  return f == nullptr ? "" : f->name();
}

void Set(v1::BehaviourSet* def, const Param& p, double v) {
  v1::Consideration* c =
      def->mutable_actions(p.action)->mutable_considerations(p.consideration);
  switch (p.what) {
    case Param::kWeight:
      c->set_weight(v);
      break;
    case Param::kMin:
      c->mutable_range()->set_min(v);
      break;
    case Param::kMax:
      c->mutable_range()->set_max(v);
      break;
    case Param::kCurve: {
      pb::Message* m = CurveKind(c);
      m->GetReflection()->SetDouble(m, p.field, v);
      break;
    }
  }
}

// The parameters of consideration (a, k) that `o` unlocks.
void ParamsOf(v1::BehaviourSet& def, int a, int k, const TuneOptions& o,
              std::vector<Param>* out) {
  v1::Consideration* c = def.mutable_actions(a)->mutable_considerations(k);
  const std::string at =
      absl::StrCat(def.actions(a).name(), ".", c->name(), ".");
  if (o.consideration_weights) {
    out->push_back({.action = a,
                    .consideration = k,
                    .what = Param::kWeight,
                    .path = at + "weight",
                    .from = c->has_weight() ? c->weight() : 1.0,
                    .lo = 0,
                    .hi = 1,
                    .scale = 1});
  }
  const v1::Factor* factor = FactorOf(def, *c);
  if (o.bookends && factor != nullptr) {
    const double fmin = factor->has_min() ? factor->min() : 0.0;
    const double fmax = factor->has_max() ? factor->max() : 1.0;
    const double span = std::abs(fmax - fmin);
    const double lo = std::min(fmin, fmax) - span,
                 hi = std::max(fmin, fmax) + span;
    const double rmin = c->range().has_min() ? c->range().min() : fmin;
    const double rmax = c->range().has_max() ? c->range().max() : fmax;
    out->push_back({.action = a,
                    .consideration = k,
                    .what = Param::kMin,
                    .path = at + "range.min",
                    .from = rmin,
                    .lo = lo,
                    .hi = hi,
                    .scale = span});
    out->push_back({.action = a,
                    .consideration = k,
                    .what = Param::kMax,
                    .path = at + "range.max",
                    .from = rmax,
                    .lo = lo,
                    .hi = hi,
                    .scale = span});
  }
  pb::Message* kind = o.curves ? CurveKind(c) : nullptr;
  if (kind == nullptr) return;
  const pb::Reflection* r = kind->GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(*kind, &fields);  // the parameters the set writes out
  for (const pb::FieldDescriptor* f : fields) {
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE ||
        f->is_repeated()) {
      continue;
    }
    const double v = r->GetDouble(*kind, f);
    const double scale = std::max(1.0, std::abs(v));
    out->push_back(
        {.action = a,
         .consideration = k,
         .what = Param::kCurve,
         .field = f,
         .path = absl::StrCat(at, "curve.", CurveKindName(c), ".", f->name()),
         .from = v,
         .lo = v - 10 * scale,
         .hi = v + 10 * scale,
         .scale = scale});
  }
}

// A situation whose decision is demanded: a scenario's expected action (at
// its expected target) with its margin, or a logged decision kept.
struct Situation {
  v1::AgentSnapshot snapshot;
  int action = -1;
  std::string target;  // "": any of the action's targets
  double margin = 0;
};

// Every candidate's log score in one situation; the wanted one's index.
struct Scored {
  std::vector<int> action;
  std::vector<int> rank;
  std::vector<double> log_score;  // -inf for 0
  int want = -1;
  int winner_action = -1, winner_target = -1, want_target = -1;
};

class Search {
 public:
  Search(const loader::LoadedSet& set, const TuneOptions& o,
         const std::vector<bool>& actions)
      : set_(set), o_(o), unlocked_(actions) {
    const int n = set.compiled.action_count();
    def_ = set.definition;
    def_.clear_revision();
    for (int a = 0; a < n; ++a) {
      if (!unlocked_[a]) continue;
      for (int k = 0; k < def_.actions(a).considerations_size(); ++k) {
        ParamsOf(def_, a, k, o, &params_);
      }
    }
    for (const v1::Scenario& s : set.definition.scenarios()) {
      if (s.expected_action().empty()) continue;
      situations_.push_back({codec::ScenarioSnapshot(set.name(), s),
                             set.compiled.FindAction(s.expected_action()),
                             s.expected_target(), MarginOf(s, o)});
    }
    if (o.keep_log) KeepLog();
  }

  int actions() const { return set_.compiled.action_count(); }
  const std::vector<Param>& params() const { return params_; }

  // The set at log weight changes `y` and parameter changes `t`.
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> Build(
      const std::vector<double>& y, const std::vector<double>& t) const {
    v1::BehaviourSet def = def_;
    for (int a = 0; a < actions(); ++a) {
      if (y[a] != 0) {
        def.mutable_actions(a)->set_weight(set_.compiled.actions()[a].weight *
                                           std::exp(y[a]));
      }
    }
    for (size_t j = 0; j < params_.size(); ++j) {
      if (t[j] != 0) Set(&def, params_[j], params_[j].from + t[j]);
    }
    return loader::LoadSetProto(std::move(def), set_.source);
  }

  // Every situation scored with `set`; false when one cannot be decided.
  bool Score(const loader::LoadedSet& set, std::vector<Scored>* out) const {
    out->assign(situations_.size(), {});
    engine::Decision d;
    for (size_t i = 0; i < situations_.size(); ++i) {
      const Situation& s = situations_[i];
      codec::AgentScratch scratch;
      engine::AgentInput input;
      if (!codec::ResolveAgent(set, s.snapshot, &scratch, &input).ok() ||
          !engine::Decide(set.compiled, input, engine::ExplainLevel::kFull, &d)
               .ok()) {
        return false;
      }
      Scored& x = (*out)[i];
      x.winner_action = d.action;
      x.winner_target = d.target;
      double best = -1;
      for (const engine::CandidateTrace& c : d.candidates) {
        const int idx = static_cast<int>(x.action.size());
        x.action.push_back(c.action);
        x.rank.push_back(set.compiled.actions()[c.action].rank);
        x.log_score.push_back(c.score > 0
                                  ? std::log(c.score)
                                  : -std::numeric_limits<double>::infinity());
        const bool target_ok =
            s.target.empty() ||
            (c.target >= 0 && c.target < s.snapshot.targets_size() &&
             s.snapshot.targets(c.target).target_id() == s.target);
        if (c.action == s.action && target_ok && c.score > best) {
          best = c.score;
          x.want = idx;
          x.want_target = c.target;
        }
      }
    }
    return true;
  }

  // How far the situations are from passing (0: all pass): each rival's
  // shortfall in log score, and 1 for each wrong winner.
  double Violation(const std::vector<Scored>& scored) const {
    double v = 0;
    for (size_t i = 0; i < scored.size(); ++i) {
      const Scored& x = scored[i];
      if (x.want < 0 || !std::isfinite(x.log_score[x.want])) {
        v += 10;
        continue;
      }
      if (x.winner_action != situations_[i].action ||
          (!situations_[i].target.empty() &&
           x.winner_target != x.want_target)) {
        v += 1;
      }
      for (size_t c = 0; c < x.action.size(); ++c) {
        if (static_cast<int>(c) == x.want || x.rank[c] != x.rank[x.want])
          continue;
        v += std::max(0.0, std::log1p(situations_[i].margin) + x.log_score[c] -
                               x.log_score[x.want]);
      }
    }
    return v;
  }

  // The linear program at (y, t): the demands with every log score
  // linearised (`grad`: per situation and candidate, d log score / d t_j),
  // t within `trust` of where it stands.
  Program Linearised(const std::vector<double>& y, const std::vector<double>& t,
                     const std::vector<Scored>& scored,
                     const std::vector<std::vector<std::vector<double>>>& grad,
                     const std::vector<double>& trust) const {
    Program p;
    const int n = actions();
    const double min_score = set_.compiled.selection().min_score;
    for (int a = 0; a < n; ++a) {
      p.lower.push_back(unlocked_[a] && o_.action_weights ? -1e30 : 0);
      p.upper.push_back(unlocked_[a] && o_.action_weights ? 1e30 : 0);
      p.cost.push_back(1);
    }
    for (size_t j = 0; j < params_.size(); ++j) {
      const Param& q = params_[j];
      p.lower.push_back(std::max(q.lo - q.from, t[j] - trust[j]));
      p.upper.push_back(std::min(q.hi - q.from, t[j] + trust[j]));
      p.cost.push_back(1 / q.scale);
    }
    // log score of candidate c at the new point, as terms and a constant.
    auto term = [&](size_t i, size_t c, double sign, Program::Row* row) {
      const Scored& x = scored[i];
      const int a = x.action[c];
      row->terms.push_back({a, sign});
      row->rhs -= sign * (x.log_score[c] - y[a]);
      for (size_t j = 0; j < params_.size(); ++j) {
        const double g = grad[i][c][j];
        if (g == 0) continue;
        row->terms.push_back({n + static_cast<int>(j), sign * g});
        row->rhs += sign * g * t[j];
      }
    };
    for (size_t i = 0; i < scored.size(); ++i) {
      const Scored& x = scored[i];
      // A wanted candidate scoring 0 has no slope to follow.
      if (x.want < 0 || !std::isfinite(x.log_score[x.want])) continue;
      const size_t w = static_cast<size_t>(x.want);
      if (min_score > 0) {
        Program::Row row{.rhs = std::log(min_score)};
        term(i, w, 1, &row);
        p.rows.push_back(std::move(row));
      }
      for (size_t c = 0; c < x.action.size(); ++c) {
        if (c == w || !std::isfinite(x.log_score[c])) continue;
        // Aimed a little inside the margin: where the program's line
        // meets the engine's float scores, exactly on it may fall short.
        Program::Row row{.rhs = std::log1p(situations_[i].margin) + 1e-4};
        if (x.rank[c] > x.rank[w]) {     // kept under min_score
          if (min_score <= 0) continue;  // nothing to keep it under
          row.rhs = -std::log(min_score) + 1e-6;
          term(i, c, -1, &row);
        } else if (x.rank[c] == x.rank[w]) {
          term(i, w, 1, &row);
          term(i, c, -1, &row);
        } else {
          continue;
        }
        p.rows.push_back(std::move(row));
      }
    }
    // Each demand may fall short by a slack that costs far more than any
    // change: the program always has a solution, the least short one
    // first, so the search moves towards passing even when the trust
    // region cannot reach it in one step.
    for (Program::Row& row : p.rows) {
      row.terms.push_back({static_cast<int>(p.cost.size()), 1.0});
      p.lower.push_back(0);
      p.upper.push_back(1e30);
      p.cost.push_back(1e3);
    }
    return p;
  }

  // d log score / d t_j of every candidate in every situation, by central
  // differences through the engine.
  bool Gradients(const std::vector<double>& y, const std::vector<double>& t,
                 const std::vector<Scored>& at,
                 std::vector<std::vector<std::vector<double>>>* grad) const {
    grad->assign(at.size(), {});
    for (size_t i = 0; i < at.size(); ++i) {
      (*grad)[i].assign(at[i].action.size(),
                        std::vector<double>(params_.size(), 0));
    }
    for (size_t j = 0; j < params_.size(); ++j) {
      // Central, or one-sided at a bound (a weight of 1).
      const Param& q = params_[j];
      const double h = 1e-4 * q.scale;
      std::vector<double> up = t, down = t;
      up[j] = std::min(t[j] + h, q.hi - q.from);
      down[j] = std::max(t[j] - h, q.lo - q.from);
      const double width = up[j] - down[j];
      if (width <= 0) continue;
      std::vector<Scored> su, sd;
      auto a = Build(y, up);
      auto b = Build(y, down);
      if (!a.ok() || !b.ok() || !Score(**a, &su) || !Score(**b, &sd)) continue;
      for (size_t i = 0; i < at.size(); ++i) {
        for (size_t c = 0; c < at[i].action.size(); ++c) {
          if (c >= su[i].log_score.size() || c >= sd[i].log_score.size())
            continue;
          const double g = (su[i].log_score[c] - sd[i].log_score[c]) / width;
          if (std::isfinite(g)) (*grad)[i][c][j] = g;
        }
      }
    }
    return true;
  }

 private:
  // Each logged decision of this set, as a situation demanding its winner
  // (at its target) by a hair.
  void KeepLog() {
    engine::Decision d;
    for (const v1::AgentSnapshot& snapshot : o_.log) {
      if (snapshot.behaviour_set() != set_.name()) continue;
      codec::AgentScratch scratch;
      engine::AgentInput input;
      if (!codec::ResolveAgent(set_, snapshot, &scratch, &input).ok() ||
          !engine::Decide(set_.compiled, input, engine::ExplainLevel::kNone, &d)
               .ok() ||
          d.action < 0 || d.score <= 0) {
        continue;
      }
      std::string target;
      if (d.target >= 0 && d.target < snapshot.targets_size()) {
        target = snapshot.targets(d.target).target_id();
      }
      situations_.push_back({snapshot, d.action, target, 1e-5});
    }
  }

  const loader::LoadedSet& set_;
  const TuneOptions& o_;
  std::vector<bool> unlocked_;
  v1::BehaviourSet def_;
  std::vector<Param> params_;
  std::vector<Situation> situations_;
};

// Rounds x to `digits` significant digits.
double Round(double x, int digits) {
  return x == 0 ? 0 : std::stod(absl::StrFormat("%.*g", digits, x));
}

// The sequential linear program from (y, t): each step solves the program
// linearised where the search stands, within a trust region per
// parameter, and moves when the engine finds the result better (less
// short of passing, then a smaller change); the region grows after a move
// and shrinks after a miss. Returns how short of passing it ends.
double Descend(const Search& search, std::vector<double>* y,
               std::vector<double>* t, std::vector<Scored>* scored) {
  const size_t n = y->size(), m = t->size();
  std::vector<double> trust(m);
  for (size_t j = 0; j < m; ++j) trust[j] = 0.25 * search.params()[j].scale;
  auto cost = [&](const std::vector<double>& ys,
                  const std::vector<double>& ts) {
    double c = 0;
    for (double v : ys) c += std::abs(v);
    for (size_t j = 0; j < m; ++j)
      c += std::abs(ts[j]) / search.params()[j].scale;
    return c;
  };
  double violation = search.Violation(*scored);
  double merit = 1e3 * violation + cost(*y, *t);
  // The passing point with the least change seen: the merit may trade a
  // hair of shortfall for change, the answer may not.
  double best = violation == 0 ? cost(*y, *t) : INFINITY;
  std::vector<double> best_y = *y, best_t = *t;
  std::vector<Scored> best_scored = *scored;
  for (int step = 0; step < 80; ++step) {
    std::vector<std::vector<std::vector<double>>> grad;
    search.Gradients(*y, *t, *scored, &grad);
    const Program p = search.Linearised(*y, *t, *scored, grad, trust);
    std::vector<double> x;
    double gain = 0;
    if (SolveProgram(p, &x)) {
      std::vector<double> y2(x.begin(), x.begin() + n),
          t2(x.begin() + n, x.begin() + n + m);
      auto next = search.Build(y2, t2);
      std::vector<Scored> s2;
      if (next.ok() && search.Score(**next, &s2)) {
        const double v2 = search.Violation(s2);
        const double merit2 = 1e3 * v2 + cost(y2, t2);
        if (merit2 < merit - 1e-9) {
          gain = merit - merit2;
          *y = std::move(y2), *t = std::move(t2), *scored = std::move(s2);
          violation = v2;
          merit = merit2;
          if (v2 == 0 && cost(*y, *t) < best) {
            best = cost(*y, *t);
            best_y = *y, best_t = *t, best_scored = *scored;
          }
        }
      }
    }
    for (size_t j = 0; j < m; ++j) {
      const double full = search.params()[j].hi - search.params()[j].lo;
      trust[j] = gain > 0 ? std::min(full, trust[j] * 1.5) : trust[j] * 0.5;
    }
    const bool small = std::all_of(trust.begin(), trust.end(),
                                   [&](double r) { return r < 1e-6; });
    if (small || (violation == 0 && gain > 0 && gain < 1e-6)) break;
    if (m == 0 && gain == 0) break;  // action weights only: one program
  }
  if (std::isfinite(best)) {
    *y = std::move(best_y), *t = std::move(best_t);
    *scored = std::move(best_scored);
    return 0;
  }
  return violation;
}

// Why the local search found nothing, and what could still help: what is
// still locked (never "unlock more" when everything is unlocked), and the
// weights-only tuning, which names the scenarios that conflict. Says no
// flag: the CLI and the inspector both show it.
std::string NoLocalChange(const loader::LoadedSet& set, const TuneOptions& o,
                          const std::vector<bool>& actions) {
  std::vector<std::string> locked;
  if (!o.action_weights) locked.push_back("action weights");
  if (!o.consideration_weights) locked.push_back("consideration weights");
  if (!o.bookends) locked.push_back("bookends");
  if (!o.curves) locked.push_back("curves");
  std::vector<std::string> actions_locked;
  for (size_t a = 0; a < actions.size(); ++a) {
    if (!actions[a]) {
      actions_locked.push_back(set.compiled.actions()[a].name);
    }
  }
  std::string text =
      "no change of the unlocked weights and parameters near the set makes "
      "every scenario pass (a local search, which can miss a change far "
      "from the set)";
  if (!locked.empty() || !actions_locked.empty()) {
    absl::StrAppend(&text, "; still locked: ", absl::StrJoin(locked, ", "),
                    locked.empty() || actions_locked.empty() ? "" : "; ",
                    actions_locked.empty() ? "" : "the actions ",
                    absl::StrJoin(actions_locked, ", "));
  }
  absl::StrAppend(&text,
                  "; tuning the action weights alone gives an exact answer "
                  "that names the scenarios which conflict");
  return text;
}

}  // namespace

absl::StatusOr<v1::TuneReport> LocalTune(const loader::LoadedSet& set,
                                         const TuneOptions& o,
                                         const std::vector<bool>& actions) {
  v1::TuneReport report;
  report.set_behaviour_set(set.name());
  report.set_method("local");
  // The scenarios as they decide today (and those no change can help).
  std::vector<std::unique_ptr<Decided>> decided;
  for (const v1::Scenario& s : set.definition.scenarios()) {
    if (s.expected_action().empty()) continue;
    auto d = std::make_unique<Decided>();
    if (absl::Status st = DecideScenario(set, s, d.get()); !st.ok()) {
      report.add_conflicts(
          absl::StrCat("scenario \"", s.name(), "\": ", st.message()));
      continue;
    }
    *report.add_before() = Margin(set, *d);
    decided.push_back(std::move(d));
  }
  Search search(set, o, actions);
  const int n = search.actions();
  const size_t m = search.params().size();
  std::vector<double> y(n, 0), t(m, 0);
  std::vector<Scored> scored;
  if (!search.Score(set, &scored)) {
    return absl::InternalError("a scenario cannot be decided");
  }
  const double violation = Descend(search, &y, &t, &scored);
  if (violation > 0) {
    report.set_feasible(false);
    report.add_conflicts(NoLocalChange(set, o, actions));
    return report;
  }
  // Rounded as a designer would write them, while every scenario passes.
  for (int digits : {3, 4, 6, 9}) {
    std::vector<double> yr(n), tr(m);
    for (int a = 0; a < n; ++a) {
      const double w = set.compiled.actions()[a].weight;
      yr[a] = y[a] == 0 ? 0 : std::log(Round(w * std::exp(y[a]), digits) / w);
    }
    for (size_t j = 0; j < m; ++j) {
      const double from = search.params()[j].from;
      tr[j] = t[j] == 0 ? 0 : Round(from + t[j], digits) - from;
    }
    auto tuned = search.Build(yr, tr);
    if (!tuned.ok()) continue;
    absl::StatusOr<bool> pass = Verify(set, **tuned, decided, o, &report);
    if (!pass.ok()) return pass.status();
    if (!*pass && digits < 9) continue;
    for (int a = 0; a < n; ++a) {
      if (yr[a] == 0) continue;
      const double w = set.compiled.actions()[a].weight;
      v1::WeightChange* c = report.add_changes();
      c->set_action(set.compiled.actions()[a].name);
      c->set_from(w);
      c->set_to(w * std::exp(yr[a]));
      report.set_total_change(report.total_change() + std::abs(yr[a]));
    }
    for (size_t j = 0; j < m; ++j) {
      if (tr[j] == 0) continue;
      const Param& q = search.params()[j];
      v1::ParamChange* c = report.add_params();
      c->set_path(q.path);
      c->set_from(q.from);
      c->set_to(q.from + tr[j]);
      c->set_scale(q.scale);
      report.set_total_change(report.total_change() +
                              std::abs(tr[j]) / q.scale);
    }
    report.set_patch(PatchYaml(report));
    report.set_feasible(true);
    return report;
  }
  report.set_feasible(false);
  report.add_conflicts("the tuned set did not load");
  return report;
}

}  // namespace utilityd::analysis::internal
