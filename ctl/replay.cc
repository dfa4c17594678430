// utilityctl replay: logged snapshots decided again with candidate sets.
#include "utilityd/replay/replay.h"

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
#include "ctl/replay_report.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "utilityd/client/client.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

// Loads a directory of behaviour sets for replay; prints why on failure.
std::optional<loader::Catalog> ReplaySets(const std::string& what,
                                          const std::string& dir,
                                          std::ostream& err) {
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog({dir});
  if (!catalog.ok()) {
    err << "utilityctl replay: --" << what << " " << dir << ": "
        << catalog.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(catalog);
}

int Replay(const Parsed& p, std::ostream& out, std::ostream& err) {
  std::vector<std::string> logs = p.positional;
  if (p.has("log")) logs.insert(logs.begin(), p.get("log"));
  if (logs.empty() || !p.has("candidate")) {
    err << "utilityctl replay: needs --log FILE and --candidate DIR\n";
    return kUsage;
  }
  std::string format;
  if (!TableOrJson(p, "replay", &format, err)) return kUsage;
  double max_churn = -1;
  if (p.has("max_churn") &&
      (!absl::SimpleAtod(p.get("max_churn"), &max_churn) || max_churn < 0 ||
       max_churn > 1)) {
    err << "utilityctl replay: --max_churn: expected a fraction within 0..1, "
           "e.g. 0.05\n";
    return kUsage;
  }
  replay::ReplayOptions options;
  if (p.has("examples") &&
      (!absl::SimpleAtoi(p.get("examples"), &options.examples) ||
       options.examples < 0)) {
    err << "utilityctl replay: --examples: expected a whole number >= 0\n";
    return kUsage;
  }
  std::optional<loader::Catalog> candidate =
      ReplaySets("candidate", p.get("candidate"), err);
  if (!candidate) return kInvalid;
  std::optional<loader::Catalog> baseline;
  if (p.has("baseline")) {
    baseline = ReplaySets("baseline", p.get("baseline"), err);
    if (!baseline) return kInvalid;
  }
  options.candidate = replay::InCatalog(*candidate);
  if (baseline) options.baseline = replay::InCatalog(*baseline);
  options.baseline_name = p.get("baseline");
  if (p.has("variant")) {
    const std::string v = p.get("variant");
    if (v != "live" && v != "canary") {
      err << "utilityctl replay: --variant: expected live or canary, got \""
          << v << "\"\n";
      return kUsage;
    }
    options.variant = v == "canary" ? v1::VARIANT_CANARY : v1::VARIANT_LIVE;
  }
  replay::Replayer replayer(options);
  int bad = 0;
  for (const std::string& path : logs) {
    // The replay goes on past a bad JSON line and reports each one; a bad
    // binary entry ends its file.
    absl::StatusOr<std::unique_ptr<replay::LogReader>> reader =
        replay::LogReader::Open(path);
    if (!reader.ok()) {
      err << "utilityctl replay: " << reader.status().message() << "\n";
      return kInvalid;
    }
    while (true) {
      v1::DecisionLogEntry* e = replayer.NewEntry();
      absl::StatusOr<bool> more = (*reader)->Next(e);
      if (!more.ok()) {
        err << more.status().message() << "\n";
        ++bad;
        continue;
      }
      if (!*more) break;
      replayer.Add(e);
    }
  }
  const v1::ReplayReport report = replayer.Report();
  if (format == "json") {
    out << ToJson(report);
  } else {
    out << FormatReplayReport(report);
  }
  if (bad > 0) {
    err << "utilityctl replay: " << bad << " log entries could not be read\n";
    return kInvalid;
  }
  if (max_churn >= 0 && report.churn() > max_churn) {
    err << absl::StrFormat(
        "utilityctl replay: churn %.4f is above --max_churn %.4f\n",
        report.churn(), max_churn);
    return kInvalid;
  }
  return kOk;
}

}  // namespace

Command ReplayCommand() {
  return {
      .name = "replay",
      .synopsis =
          "--log FILE... --candidate DIR [--baseline DIR]\n"
          "                        [--format table|json] "
          "[--max_churn F] [--examples N]\n"
          "                        [--variant live|canary]",
      .description =
          "Decides every logged snapshot again with the candidate sets and "
          "reports what\nchanges against the baseline: the logged decisions, "
          "or the same snapshots\ndecided with the --baseline sets. Reports "
          "churn (the share of decisions whose\naction or target changes) "
          "overall, per set and per action, the from -> to\nmatrix, newly "
          "vetoed and newly winning actions, the winner's score change,\n"
          "the margins of flips, and examples with both breakdowns. Logs are "
          "JSON lines or\nbinary (utilityd --decision_log_format); more "
          "files may follow --log FILE.\nWith --max_churn, exits 1 when churn "
          "is above it (a CI gate). See docs/REPLAY.md.",
      .options = {{"log", "FILE", "decision log to replay (more may follow)"},
                  {"candidate", "DIR", "behaviour sets to try"},
                  {"baseline", "DIR",
                   "behaviour sets to compare with (default: the logged "
                   "decisions)"},
                  {"format", "FORMAT", "table (default) or json"},
                  {"max_churn", "F",
                   "exit 1 when churn is above F (0..1, e.g. 0.05)"},
                  {"variant", "V",
                   "only the decisions this variant made: live or canary "
                   "(docs/CANARY.md)"},
                  {"examples", "N", "flipped decisions to show (default 3)"}},
      .run = Replay};
}

}  // namespace utilityd::ctl
