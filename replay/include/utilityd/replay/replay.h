// Decides logged snapshots again with candidate behaviour sets and reports
// what changes against a baseline: the logged decisions, or the same
// snapshots decided with baseline sets (docs/REPLAY.md).
//
//   Replayer replayer({.candidate = InCatalog(candidate)});  // vs the log
//   while (true) {
//     v1::DecisionLogEntry* e = replayer.NewEntry();
//     if (!*reader.Next(e)) break;
//     replayer.Add(e);
//   }
//   v1::ReplayReport report = replayer.Report();
//   if (report.churn() > 0.05) fail();
//
// Entries are decided in batches per set through engine::BatchDecider, as
// the service decides them: the same snapshot, seed and set give the same
// decision, so an unchanged candidate reports no churn.
#ifndef UTILITYD_REPLAY_REPLAY_H_
#define UTILITYD_REPLAY_REPLAY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_log.pb.h"
#include "utilityd/v1/replay.pb.h"

namespace utilityd::replay {

// Finds a behaviour set by name; null when there is none.
using SetLookup = std::function<std::shared_ptr<const loader::LoadedSet>(
    absl::string_view name)>;
// Looks sets up in `catalog`, which must outlive the lookup.
SetLookup InCatalog(const loader::Catalog& catalog);

// One entry once decided, as Replayer reports it to `on_compared`.
struct Comparison {
  const v1::DecisionLogEntry* entry = nullptr;
  enum class Result { kSame, kFlipped, kError, kSkipped };
  Result result = Result::kSame;
  // What it adds to churn: 0 or 1, or a random strategy's total variation.
  double churn = 0;
  // |candidate winner's score - baseline winner's score| (flat sets only).
  bool scores_compared = false;
  double score_change = 0;
  // The actions chosen ("" for none) and, for errors, why (for skipped
  // entries, the reason as the report's `skipped` names it).
  std::string baseline_action, candidate_action;
  std::string error;
};

struct ReplayOptions {
  // The sets to try. Required.
  SetLookup candidate;
  // The sets to compare with; empty compares with the logged decisions.
  SetLookup baseline;
  // Named in the report's `baseline` ("logged" when there is none).
  std::string baseline_name;
  // Flipped decisions kept with both breakdowns, the first in log order.
  int examples = 3;
  // Only the entries this variant decided (e.g. a canary's, compared with
  // the live sets); the others are skipped as "other_variant". Unset: all.
  std::optional<v1::Variant> variant;
  // When set, called for every entry: a skipped one as it is added, the
  // others once decided, in log order within each set.
  std::function<void(const Comparison&)> on_compared;
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
  // Decides what is pending (on_compared hears of it now).
  void Flush();
  // Decides what is pending and returns the report of every entry added so
  // far; adding may go on.
  v1::ReplayReport Report();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// One side of a comparison at explain full: what `set` decides for
// `snapshot` (its expected revision ignored), with the summary line of the
// breakdown, through the service's path.
void ExplainSide(const loader::LoadedSet& set,
                 const v1::AgentSnapshot& snapshot, v1::ReplaySide* out);

}  // namespace utilityd::replay

#endif  // UTILITYD_REPLAY_REPLAY_H_
