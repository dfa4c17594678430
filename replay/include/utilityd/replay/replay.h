// Decides logged snapshots again with candidate behaviour sets and reports
// what changes against a baseline: the logged decisions, or the same
// snapshots decided with baseline sets (docs/REPLAY.md).
//
//   Replayer replayer({.candidate = &candidate});     // baseline: the log
//   while (true) {
//     v1::DecisionLogEntry* e = replayer.NewEntry();
//     if (!*reader.Next(e)) break;
//     replayer.Add(e);
//   }
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

  // The entry to read the next log entry into, then to Add: a message
  // from the replayer's pool, used again once its batch is decided, so
  // that reading into it (LogReader::Next overwrites it) rarely allocates.
  // Until it is added, every call returns it again.
  v1::DecisionLogEntry* NewEntry();
  // Takes the entry NewEntry returned (anything else is a bug and aborts).
  // Entries are decided in batches, or at Finish.
  void Add(v1::DecisionLogEntry* entry);
  // Takes a copy of `entry`.
  void Add(const v1::DecisionLogEntry& entry);
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
