// Decides logged snapshots again with candidate behaviour sets and reports
// what changes against a baseline: the logged decisions, or the same
// snapshots decided with baseline sets (docs/REPLAY.md).
//
//   Replayer replayer({.candidate = &candidate});     // baseline: the log
//   for (each entry e of the logs) replayer.Add(std::move(e));
//   v1::ReplayReport report = replayer.Finish();
//   if (report.churn() > 0.05) fail();
//
// Entries are decided in batches per set through engine::BatchDecider, as
// the service decides them: the same snapshot, seed and set give the same
// decision, so an unchanged candidate reports no churn.
#ifndef UTILITYD_REPLAY_REPLAY_H_
#define UTILITYD_REPLAY_REPLAY_H_

#include <memory>
#include <string>

#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_log.pb.h"
#include "utilityd/v1/replay.pb.h"

namespace utilityd::replay {

struct ReplayOptions {
  // The sets to try. Required; must outlive the Replayer.
  const loader::Catalog* candidate = nullptr;
  // The sets to compare with; null compares with the logged decisions.
  const loader::Catalog* baseline = nullptr;
  // Named in the report's `baseline` ("logged" when there is none).
  std::string baseline_name;
  // Flipped decisions kept with both breakdowns, the first in log order.
  int examples = 3;
};

class Replayer {
 public:
  explicit Replayer(ReplayOptions options);
  ~Replayer();
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  // Takes one log entry; it is decided when its set's batch fills, or at
  // Finish.
  void Add(v1::DecisionLogEntry entry);
  // Decides what is pending and returns the report. Call once.
  v1::ReplayReport Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Prints a report for people: the totals, then per set its churn, actions
// and from -> to table, then the examples.
std::string FormatReport(const v1::ReplayReport& report);

}  // namespace utilityd::replay

#endif  // UTILITYD_REPLAY_REPLAY_H_
