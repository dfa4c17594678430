// utilityctl log: a decision log in the one-line human form.
#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "ctl/bench.h"
#include "ctl/cli.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "utilityd/client/client.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

// --- log ---------------------------------------------------------------------

// One decision-log line for humans:
//   2026-11-30T06:58:00.123Z  arena_mage@88030940  mage-1 -> recharge 0.992
//     (switched from attack)  margin 0.782
//       *recharge 0.99 [charges_missing 1.00→1.00, ...] | attack@goblin-1 ...
std::string FormatLogEntry(const v1::DecisionLogEntry& e) {
  const absl::Time t = absl::FromUnixSeconds(e.time().seconds()) +
                       absl::Nanoseconds(e.time().nanos());
  std::string chosen = e.action().empty() ? "(no action)" : e.action();
  if (!e.target_id().empty()) absl::StrAppend(&chosen, "@", e.target_id());
  std::string line = absl::StrFormat(
      "%s  %s@%s  %s -> %s %.3f",
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone()),
      e.behaviour_set(), e.revision().substr(0, 8), e.agent_id(), chosen,
      e.score());
  if (e.switched() && !e.current_action().empty()) {
    absl::StrAppend(&line, "  (switched from ", e.current_action(), ")");
  }
  if (e.runner_up_score() > 0) {
    absl::StrAppend(&line, absl::StrFormat("  margin %.3f",
                                           e.score() - e.runner_up_score()));
  }
  if (!e.explanation().summary().empty()) {
    absl::StrAppend(&line, "\n    ", e.explanation().summary());
  }
  if (e.tree_status() != v1::NODE_STATUS_UNSPECIFIED) {
    absl::StrAppend(&line, absl::StrFormat("\n    t=%g run ", e.game_time()),
                    Leaves(e.run_leaves(), true));
    if (!e.halted_leaves().empty()) {
      absl::StrAppend(&line, "; halt ", Leaves(e.halted_leaves(), false));
    }
    absl::StrAppend(&line, "; root ", StatusName(e.tree_status()));
    if (!e.tree_reset().empty()) {
      absl::StrAppend(&line, "; state reset: ", e.tree_reset());
    }
  }
  return line;
}

int Log(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.size() > 1) {
    err << "utilityctl log: name at most one file (default: standard input)\n";
    return kUsage;
  }
  absl::StatusOr<std::unique_ptr<replay::LogReader>> reader =
      replay::LogReader::Open(p.positional.empty() ? "-" : p.positional[0]);
  if (!reader.ok()) {
    err << reader.status().message() << "\n";
    return kInvalid;
  }
  const bool sampled_only = p.has("sampled");
  int bad = 0;
  v1::DecisionLogEntry e;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(&e);
    if (!more.ok()) {
      err << more.status().message() << "\n";
      ++bad;
      continue;  // a binary log's error ends it: Next returns false next
    }
    if (!*more) break;
    if (sampled_only && !e.has_explanation() &&
        e.tree_status() == v1::NODE_STATUS_UNSPECIFIED) {
      continue;
    }
    out << FormatLogEntry(e) << "\n";
  }
  return bad == 0 ? kOk : kInvalid;
}

}  // namespace

Command LogCommand() {
  return {.name = "log",
          .synopsis = "[FILE] [--sampled]",
          .description =
              "Prints a decision log (utilityd --decision_log, JSON lines or "
              "binary) in the\none-line human format, with the score breakdown "
              "of sampled decisions. Reads\nstandard input when FILE is absent "
              "or -.",
          .options = {{"sampled", "", "only decisions that carry a breakdown"}},
          .run = Log};
}

}  // namespace utilityd::ctl
