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
  std::map<std::string, std::string> seen;                // set name -> file
  std::map<std::string, std::vector<std::string>> users;  // package -> sets
  const std::vector<loader::FileLoad> loads = loader::LoadFiles(*files);
  for (const loader::FileLoad& f : loads) {
    if (f.set != nullptr) {
      for (const std::string& package : f.set->packages) {
        users[package].push_back(f.set->name());
      }
    }
  }
  for (const loader::FileLoad& f : loads) {
    if (!f.error.empty()) {
      err << f.error << "\n";
      problems += 1 + static_cast<int>(
                          std::count(f.error.begin(), f.error.end(), '\n'));
      continue;
    }
    if (f.package != nullptr) {
      const std::vector<std::string>& by = users[f.package->name()];
      out << absl::StrFormat(
          "ok  %s  package %s  (%d factors, %d actions; used by %s)\n", f.file,
          f.package->name(), f.package->package.factors_size(),
          f.package->package.actions_size(),
          by.empty() ? "no set" : absl::StrJoin(by, ", "));
      continue;
    }
    const loader::LoadedSet& s = *f.set;
    if (auto [it, fresh] = seen.emplace(s.name(), f.file); !fresh) {
      err << f.file << ": name: set \"" << s.name()
          << "\" is already defined in " << it->second << "\n";
      ++problems;
      continue;
    }
    const std::vector<std::string> failed = codec::CheckScenarios(s);
    for (const std::string& line : failed) err << line << "\n";
    problems += static_cast<int>(failed.size());
    if (failed.empty()) {
      out << absl::StrFormat(
          "ok  %s  %s@%s  (%d factors, %d actions, %d scenarios hold%s)\n",
          f.file, s.name(), s.revision(), s.definition.factors_size(),
          s.definition.actions_size(), s.definition.scenarios_size(),
          s.packages.empty()
              ? ""
              : absl::StrCat("; packages ", absl::StrJoin(s.packages, ", ")));
    }
  }
  if (problems > 0) {
    err << problems << (problems == 1 ? " problem\n" : " problems\n");
    return kInvalid;
  }
  return kOk;
}

// --- packages --------------------------------------------------------------

int Packages(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.empty()) {
    err << "utilityctl packages: name at least one file or directory\n";
    return kUsage;
  }
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog(p.positional);
  if (!catalog.ok()) {
    err << catalog.status().message() << "\n";
    return kInvalid;
  }
  const std::string one = p.get("package", "");
  if (!one.empty()) {
    const auto it = catalog->packages().find(one);
    if (it == catalog->packages().end()) {
      std::vector<std::string> known;
      for (const auto& [name, _] : catalog->packages()) known.push_back(name);
      err << "--package: " << engine::UnknownNameMessage("package", one, known)
          << "\n";
      return kInvalid;
    }
    for (const std::string& set : it->second.used_by) out << set << "\n";
    return kOk;
  }
  out << absl::StrFormat("%-20s %-32s %s\n", "PACKAGE", "FILE", "USED BY");
  for (const auto& [name, package] : catalog->packages()) {
    out << absl::StrFormat(
        "%-20s %-32s %s\n", name, package.file->source,
        package.used_by.empty() ? "-" : absl::StrJoin(package.used_by, ","));
  }
  return kOk;
}

}  // namespace

Command PackagesCommand() {
  return {
      .name = "packages",
      .synopsis = "PATH... [--package NAME]",
      .description =
          "Lists the packages of the files and directories given and the "
          "sets (archetypes)\nthat compose each, directly or through other "
          "packages. With --package, prints\nthe names of the sets that "
          "compose that one, one per line: what an edit to it\nchanges.",
      .options = {{"package", "NAME", "only the sets composing this package"}},
      .run = Packages};
}

Command ValidateCommand() {
  return {
      .name = "validate",
      .synopsis = "PATH...",
      .description =
          "Validates behaviour-set and package files (YAML or JSON) and every "
          "such file\nin the directories given, each set composed with the "
          "packages it uses.\nReports every problem with file, line and field "
          "path, and checks that each\nscenario's expected action wins. Exits "
          "1 on any problem.",
      .run = Validate};
}

}  // namespace utilityd::ctl
