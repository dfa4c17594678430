// utilityctl sets and get: the sets a directory or a server holds.
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

// --- sets and get -----------------------------------------------------------

int Sets(const Parsed& p, std::ostream& out, std::ostream& err) {
  const std::string format = p.get("format", "table");
  if (format != "json" && format != "table") {
    err << "--format: expected json or table, got \"" << format << "\"\n";
    return kUsage;
  }
  std::unique_ptr<Source> source = OpenSource(p, err);
  if (source == nullptr) return kInvalid;
  absl::StatusOr<v1::ListBehaviourSetsResponse> list = source->List();
  if (!list.ok()) return Failed(list.status(), err);
  if (format == "json") {
    out << ToJson(*list) << "\n";
    return kOk;
  }
  out << absl::StrFormat("%-20s %-16s %7s %7s  %s\n", "NAME", "REVISION",
                         "FACTORS", "ACTIONS", "FACTOR ORDER");
  for (const v1::BehaviourSetSummary& s : list->behaviour_sets()) {
    out << absl::StrFormat("%-20s %-16s %7d %7d  %s\n", s.name(), s.revision(),
                           s.factors_size(), s.actions_size(),
                           absl::StrJoin(s.factors(), ","));
  }
  return kOk;
}

int Get(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.size() != 1) {
    err << "utilityctl get: name exactly one behaviour set\n";
    return kUsage;
  }
  std::unique_ptr<Source> source = OpenSource(p, err);
  if (source == nullptr) return kInvalid;
  absl::StatusOr<v1::GetBehaviourSetResponse> got =
      source->Get(p.positional[0]);
  if (!got.ok()) return Failed(got.status(), err);
  out << ToJson(*got) << "\n";
  return kOk;
}

}  // namespace

Command SetsCommand() {
  return {
      .name = "sets",
      .synopsis =
          "[--config_dir DIR | --target HOST:PORT] [--format table|json]",
      .description =
          "Lists behaviour sets with their revisions and factor order (the "
          "packed order\nclients send values in), from a config directory or "
          "a running server.",
      .options =
          WithTls({{"config_dir", "DIR",
                    "behaviour sets to load (default examples/behaviour_sets)"},
                   {"target", "HOST:PORT", "ask a running utilityd"},
                   {"format", "FORMAT", "table (default) or json"}}),
      .run = Sets};
}

Command GetCommand() {
  return {
      .name = "get",
      .synopsis = "NAME [--config_dir DIR | --target HOST:PORT]",
      .description =
          "Prints one behaviour set's full definition, every default written "
          "out, as\nGetBehaviourSetResponse JSON.",
      .options =
          WithTls({{"config_dir", "DIR",
                    "behaviour sets to load (default examples/behaviour_sets)"},
                   {"target", "HOST:PORT", "ask a running utilityd"}}),
      .run = Get};
}

}  // namespace utilityd::ctl
