// utilityctl tune: the smallest weight change that makes a set's scenarios
// pass with their margins (docs/ANALYSIS.md, "Tuning").
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "ctl/cli.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

int Tune(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.empty()) {
    err << "utilityctl tune: needs a directory or file of behaviour sets\n";
    return kUsage;
  }
  std::string format;
  if (!TableOrJson(p, "tune", &format, err)) return kUsage;
  analysis::TuneOptions options;
  if (p.has("margin") && (!absl::SimpleAtod(p.get("margin"), &options.margin) ||
                          !(options.margin >= 0 && options.margin <= 10))) {
    err << "utilityctl tune: --margin: expected a number within 0..10, e.g. "
           "0.05\n";
    return kUsage;
  }
  if (absl::Status st =
          analysis::ParseUnlock(p.get("unlock", "weights"), &options);
      !st.ok()) {
    err << "utilityctl tune: --" << st.message() << "\n";
    return kUsage;
  }
  if (p.has("log")) {
    absl::StatusOr<std::unique_ptr<replay::LogReader>> reader =
        replay::LogReader::Open(p.get("log"));
    if (!reader.ok()) {
      err << "utilityctl tune: " << reader.status().message() << "\n";
      return kInvalid;
    }
    v1::DecisionLogEntry entry;
    while (true) {
      absl::StatusOr<bool> more = (*reader)->Next(&entry);
      if (!more.ok()) {
        err << "utilityctl tune: " << more.status().message() << "\n";
        return kInvalid;
      }
      if (!*more) break;
      if (entry.has_snapshot()) options.log.push_back(entry.snapshot());
    }
  }
  options.keep_log = p.has("keep_log");
  if (options.keep_log && !p.has("log")) {
    err << "utilityctl tune: --keep_log needs --log FILE\n";
    return kUsage;
  }
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog(p.positional);
  if (!catalog.ok()) {
    err << "utilityctl tune: " << catalog.status().message() << "\n";
    return kInvalid;
  }
  std::string name = p.get("set");
  if (name.empty() && catalog->sets().size() == 1) {
    name = catalog->sets().begin()->first;
  }
  const auto set = catalog->Find(name);
  if (set == nullptr) {
    err << "utilityctl tune: name the set to tune with --set (one of the "
           "sets read)\n";
    return kUsage;
  }
  absl::StatusOr<v1::TuneReport> report = analysis::Tune(*set, options);
  if (!report.ok()) {
    err << "utilityctl tune: " << report.status().message() << "\n";
    return report.status().code() == absl::StatusCode::kInvalidArgument
               ? kUsage
               : kInvalid;
  }
  out << (format == "json" ? ToJson(*report) : analysis::FormatTune(*report));
  return report->feasible() ? kOk : kInvalid;
}

}  // namespace

Command TuneCommand() {
  return {
      .name = "tune",
      .synopsis =
          "DIR|FILE [--set NAME] [--margin F] [--unlock WHAT[:A,B]]\n"
          "                        [--log FILE [--keep_log]] [--format "
          "table|json]",
      .description =
          "Finds the smallest change of the unlocked parameters under which "
          "every scenario\nof the set with an expected action wins with its "
          "margin (the scenario's\nexpected_margin, else --margin, default "
          "0.05: the winner at least 1.05 x\nevery rival), checks it by "
          "deciding each scenario with the changed set, and\nprints the "
          "change as a YAML patch. Action weights alone (--unlock\n"
          "action_weights) are one linear program, the smallest change "
          "there is; when\nnone exists it names the scenarios that "
          "contradict each other, or the veto\nor rank no weight can change, "
          "and exits 1. Consideration weights, bookends\nand curve "
          "parameters make it a local search: the smallest change near the "
          "set.\nWith --log, counts the logged decisions the change flips; "
          "with --keep_log too,\nkeeps every one of them. See "
          "docs/ANALYSIS.md.",
      .options = {{"set", "NAME", "the set to tune (needed when several)"},
                  {"margin", "F", "required relative margin (default 0.05)"},
                  {"unlock", "WHAT",
                   "what may change, joined by +: weights (action and "
                   "consideration weights, the default), action_weights, "
                   "bookends, curves; :ACTION,ACTION for only those actions"},
                  {"log", "FILE", "a decision log to count flipped decisions"},
                  {"keep_log", "", "keep every decision of the log"},
                  {"format", "FORMAT", "table (default) or json"}},
      .run = Tune};
}

}  // namespace utilityd::ctl
