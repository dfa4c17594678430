// What the two tuners share (tune.cc: action weights, exactly; tune_local.cc:
// consideration parameters too, by repeated linear programs): scenarios
// decided with every candidate's score, the linear program, and the checks
// of a tuned set. Internal to the analysis.
#ifndef UTILITYD_ANALYSIS_SRC_TUNE_INTERNAL_H_
#define UTILITYD_ANALYSIS_SRC_TUNE_INTERNAL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/engine/decide.h"

namespace utilityd::analysis::internal {

// A scenario decided: every candidate's score (explain full).
struct Decided {
  const v1::Scenario* scenario = nullptr;
  v1::AgentSnapshot snapshot;  // the input's spans point into it
  engine::Decision decision;
  engine::AgentInput input;
  codec::AgentScratch scratch;
};

absl::Status DecideScenario(const loader::LoadedSet& set, const v1::Scenario& s,
                            Decided* d);
// The expected candidate: the expected action at the expected target (or
// its best target); nullptr when it has none.
const engine::CandidateTrace* Expected(const loader::LoadedSet& set,
                                       const Decided& d);
// The scenario's winner and margin over the runner-up.
v1::ScenarioMargin Margin(const loader::LoadedSet& set, const Decided& d);
// The report's changes (action weights, consideration parameters) as YAML
// to merge into the set, by action and consideration name.
std::string PatchYaml(const v1::TuneReport& report);
// The margin scenario `s` must keep.
double MarginOf(const v1::Scenario& s, const TuneOptions& o);
// Why the expected action of `d` scores 0.
std::string ZeroScore(const engine::CompiledBehaviourSet& cs, const Decided& d,
                      const engine::CandidateTrace* want);
// Decides every scenario with the tuned set into report->after; whether
// each passes with its margin.
absl::StatusOr<bool> Check(const loader::LoadedSet& tuned,
                           const std::vector<std::unique_ptr<Decided>>& decided,
                           const TuneOptions& o, v1::TuneReport* report);
// Check, then the log's flips counted afresh into the report; whether the
// tuned set passes (with o.keep_log, no logged decision may flip).
absl::StatusOr<bool> Verify(
    const loader::LoadedSet& set, const loader::LoadedSet& tuned,
    const std::vector<std::unique_ptr<Decided>>& decided, const TuneOptions& o,
    v1::TuneReport* report);
// Counts the log's decisions of this set that the tuned set decides
// otherwise (report->log_decisions, log_flipped).
void CountFlips(const loader::LoadedSet& set, const loader::LoadedSet& tuned,
                const TuneOptions& o, v1::TuneReport* report);

// A linear program: minimise sum cost[v] |x[v]| subject to
// lower[v] <= x[v] <= upper[v] and, for each row, sum terms >= rhs.
struct Program {
  struct Row {
    std::vector<std::pair<int, double>> terms;  // variable, coefficient
    double rhs = 0;
  };
  std::vector<double> lower, upper, cost;
  std::vector<Row> rows;
};

// Solves `p` with COIN-OR CLP; false when it has no solution (or the build
// has no CLP).
bool SolveProgram(const Program& p, std::vector<double>* x);

// The smallest change near the set as it is of the unlocked action weights
// (`actions`) and consideration parameters (o.consideration_weights,
// o.bookends, o.curves) under which every scenario passes with its margin
// (and, with o.keep_log, every logged decision stays): tune_local.cc.
absl::StatusOr<v1::TuneReport> LocalTune(const loader::LoadedSet& set,
                                         const TuneOptions& o,
                                         const std::vector<bool>& actions);

}  // namespace utilityd::analysis::internal

#endif  // UTILITYD_ANALYSIS_SRC_TUNE_INTERNAL_H_
