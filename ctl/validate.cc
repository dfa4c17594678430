// utilityctl validate: files and directories of sets, every problem at once.
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
#include "utilityd/codec/scenarios.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

// --- validate --------------------------------------------------------------

int Validate(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.empty()) {
    err << "utilityctl validate: name at least one file or directory\n";
    return kUsage;
  }
  absl::StatusOr<std::vector<std::string>> files =
      loader::ListSetFiles(p.positional);
  if (!files.ok()) {
    err << files.status().message() << "\n";
    return kInvalid;
  }
  if (files->empty()) {
    err << "no behaviour-set files (*.yaml, *.yml, *.json) in "
        << absl::StrJoin(p.positional, ", ") << "\n";
    return kInvalid;
  }
  int problems = 0;
  std::map<std::string, std::string> seen;  // set name -> file
  for (const std::string& f : *files) {
    absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> set =
        loader::LoadSetFile(f);
    if (!set.ok()) {
      const std::string message(set.status().message());
      err << message << "\n";
      problems += 1 + static_cast<int>(
                          std::count(message.begin(), message.end(), '\n'));
      continue;
    }
    const loader::LoadedSet& s = **set;
    if (auto [it, fresh] = seen.emplace(s.name(), f); !fresh) {
      err << f << ": name: set \"" << s.name() << "\" is already defined in "
          << it->second << "\n";
      ++problems;
      continue;
    }
    const std::vector<std::string> failed = codec::CheckScenarios(s);
    for (const std::string& line : failed) err << line << "\n";
    problems += static_cast<int>(failed.size());
    if (failed.empty()) {
      out << absl::StrFormat(
          "ok  %s  %s@%s  (%d factors, %d actions, %d scenarios hold)\n", f,
          s.name(), s.revision(), s.definition.factors_size(),
          s.definition.actions_size(), s.definition.scenarios_size());
    }
  }
  if (problems > 0) {
    err << problems << (problems == 1 ? " problem\n" : " problems\n");
    return kInvalid;
  }
  return kOk;
}

}  // namespace

Command ValidateCommand() {
  return {
      .name = "validate",
      .synopsis = "PATH...",
      .description =
          "Validates behaviour-set files (YAML or JSON) and every such file "
          "in the\ndirectories given. Reports every problem with file, line "
          "and field path,\nand checks that each scenario's expected action "
          "wins. Exits 1 on any problem.",
      .run = Validate};
}

}  // namespace utilityd::ctl
