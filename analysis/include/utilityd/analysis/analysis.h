// Design-time analysis of a behaviour set (docs/ANALYSIS.md): what each
// consideration can do over its factor's declared range, which actions can
// never be selected (with a situation where each other one is, or a
// certificate of why not), which actions never outscore another, each
// action's share of the factor box, and how far each scenario is from
// flipping.
//
//   analysis::AnalysisOptions options;           // budget, samples, seed
//   absl::StatusOr<v1::SetAnalysis> a = analysis::Analyse(set, options);
//   std::cout << analysis::FormatAnalysis(*a);   // or ToJson
//
// Every claim is about the set's declared factor ranges ("the box"): a
// situation is a point of it, with no targets or one target (per-target
// actions), no personality, every cooldown clock "not recently".
#ifndef UTILITYD_ANALYSIS_ANALYSIS_H_
#define UTILITYD_ANALYSIS_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/analysis.pb.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::analysis {

struct AnalysisOptions {
  // Boxes the search may split per action and state before it answers
  // "undecided" (utilityctl analyse --budget).
  int64_t max_boxes = 20000;
  // A box narrower than this share of every factor's range is not split
  // further: what it holds stays undecided.
  double min_width = 1e-4;
  // Uniform samples of the box for coverage, and their seed.
  int64_t coverage_samples = 20000;
  uint64_t seed = 1;
  // A scenario is fragile when its margin is below this share of its
  // score, or a change of one factor by less than `fragile_share` of the
  // factor's range flips it.
  double fragile_margin = 0.05;
  double fragile_share = 0.05;
  // A 2-D map of the winner over two factors (names; both or neither),
  // the others at the middle of their ranges.
  std::string map_x, map_y;
  int map_columns = 48;
  int map_rows = 16;
};

// Analyses one set. INVALID_ARGUMENT for options that do not fit it (an
// unknown map factor).
[[nodiscard]] absl::StatusOr<v1::SetAnalysis> Analyse(
    const loader::LoadedSet& set, const AnalysisOptions& options);

// The analysis for people: findings first, then the tables.
[[nodiscard]] std::string FormatAnalysis(const v1::SetAnalysis& analysis);

struct TuneOptions {
  // Required relative margin: the expected action's score at least
  // (1 + margin) x every rival's, unless the scenario sets its own
  // (Scenario.expected_margin).
  double margin = 0.05;
  // The actions whose weights (and, below, considerations) may change;
  // empty: every action's.
  std::vector<std::string> unlock;
  // What else may change, in the unlocked actions' considerations
  // (utilityctl tune --unlock weights, bookends, curves): the weights, the
  // range bookends, the curve parameters the set writes out. Any of them
  // makes the problem nonlinear: the change is then the smallest found
  // near the set as it is.
  bool action_weights = true;
  bool consideration_weights = false;
  bool bookends = false;
  bool curves = false;
  // Decided before and after, to count the decisions the change flips.
  std::vector<v1::AgentSnapshot> log;
  // Every decision of `log` is kept: its winner stays above each rival of
  // its rank (and eligible under min_score; ineligible higher ranks stay
  // so) — constraints of the same program, named by log entry when they
  // contradict a scenario (utilityctl tune --keep_log).
  bool keep_log = false;
};

// Reads utilityctl tune's --unlock (and the inspector's): what may change,
// joined by "+" — "weights" (action and consideration weights),
// "action_weights", "bookends", "curves" — then optionally ":A,B" for only
// those actions. INVALID_ARGUMENT names a part it does not know.
[[nodiscard]] absl::Status ParseUnlock(absl::string_view spec,
                                       TuneOptions* options);

// The smallest change of action weights (sum of |log ratios|, a linear
// program solved by COIN-OR CLP) under which every scenario with an
// expected action passes with its margin, checked by deciding each
// scenario with the changed set. With consideration parameters unlocked,
// the smallest change found near the set (repeated linear programs over
// the scores linearised where the search stands, docs/ANALYSIS.md). Not
// feasible: `conflicts` name the scenarios whose demands contradict each other
// (a negative cycle of their difference constraints; with `keep_log`, log
// entries too), or the veto or rank no weight can change. UNIMPLEMENTED when
// built without CLP.
[[nodiscard]] absl::StatusOr<v1::TuneReport> Tune(const loader::LoadedSet& set,
                                                  const TuneOptions& options);

// The tuning for people.
[[nodiscard]] std::string FormatTune(const v1::TuneReport& report);

}  // namespace utilityd::analysis

#endif  // UTILITYD_ANALYSIS_ANALYSIS_H_
