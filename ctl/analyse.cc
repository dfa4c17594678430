// utilityctl analyse: what behaviour sets can never do (docs/ANALYSIS.md).
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ctl/cli.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::ctl {
namespace {

// The finding kinds --fail-on may name.
const std::set<std::string>& Kinds() {
  static const auto* kinds = new std::set<std::string>{"dead",
                                                       "undecided",
                                                       "always_veto",
                                                       "never_interrupts",
                                                       "dominated",
                                                       "nan",
                                                       "constant",
                                                       "neutral",
                                                       "plateau",
                                                       "failing_scenario",
                                                       "fragile_scenario",
                                                       "unused_accept",
                                                       "never_entered",
                                                       "never_chosen",
                                                       "never_holds",
                                                       "always_holds"};
  return *kinds;
}

bool ReadNumber(const Parsed& p, const std::string& name, double lo, double hi,
                double* out, std::ostream& err) {
  if (!p.has(name)) return true;
  if (!absl::SimpleAtod(p.get(name), out) || !(*out >= lo && *out <= hi)) {
    err << "utilityctl analyse: --" << name << ": expected a number within "
        << lo << ".." << hi << "\n";
    return false;
  }
  return true;
}

// The findings about pieces packages brought, once per package, kind and
// subject, with the sets they were found in.
void GroupByPackage(const loader::Catalog& catalog,
                    v1::AnalysisReport* report) {
  std::map<std::tuple<std::string, std::string, std::string>,
           v1::PackageFinding>
      grouped;
  for (const v1::SetAnalysis& a : report->sets()) {
    const auto set = catalog.Find(a.behaviour_set());
    if (set == nullptr || set->packages.empty()) continue;
    std::map<std::string, std::string, std::less<>> package_of;  // action
    for (const v1::Origin& o : set->definition.origins()) {
      if (absl::StartsWith(o.piece(), "actions.") && !o.package().empty()) {
        package_of[o.piece().substr(8)] = o.package();
      }
    }
    for (const v1::Finding& f : a.findings()) {
      if (!f.accepted().empty()) continue;  // the set keeps it on purpose
      const absl::string_view action =
          absl::string_view(f.subject()).substr(0, f.subject().find('.'));
      const auto p = package_of.find(action);
      if (p == package_of.end()) continue;
      v1::PackageFinding& g = grouped[{p->second, f.kind(), f.subject()}];
      if (g.sets().empty()) {
        g.set_package(p->second);
        g.set_kind(f.kind());
        g.set_subject(f.subject());
        g.set_message(f.message());
      }
      g.add_sets(a.behaviour_set());
    }
  }
  for (auto& [_, g] : grouped) *report->add_packages() = std::move(g);
}

int Analyse(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.empty()) {
    err << "utilityctl analyse: needs a directory or file of behaviour sets\n";
    return kUsage;
  }
  std::string format;
  if (!TableOrJson(p, "analyse", &format, err)) return kUsage;
  analysis::AnalysisOptions options;
  double budget = static_cast<double>(options.max_boxes);
  double samples = static_cast<double>(options.coverage_samples);
  if (!ReadNumber(p, "budget", 1, 1e9, &budget, err) ||
      !ReadNumber(p, "samples", 0, 1e8, &samples, err) ||
      !ReadNumber(p, "fragile_margin", 0, 1, &options.fragile_margin, err) ||
      !ReadNumber(p, "fragile_share", 0, 1, &options.fragile_share, err)) {
    return kUsage;
  }
  options.max_boxes = static_cast<int64_t>(budget);
  options.coverage_samples = static_cast<int64_t>(samples);
  if (p.has("map")) {
    std::vector<std::string> xy = absl::StrSplit(p.get("map"), ',');
    if (xy.size() != 2) {
      err << "utilityctl analyse: --map: expected two factors, e.g. "
             "--map=hunger,danger\n";
      return kUsage;
    }
    options.map_x = xy[0];
    options.map_y = xy[1];
  }
  std::set<std::string> fail_on = {
      "dead",        "always_veto",      "never_entered", "never_chosen",
      "never_holds", "failing_scenario", "unused_accept"};
  if (p.has("fail_on")) {
    fail_on.clear();
    for (absl::string_view k :
         absl::StrSplit(p.get("fail_on"), ',', absl::SkipEmpty())) {
      if (k == "none") continue;
      if (!Kinds().contains(std::string(k))) {
        err << "utilityctl analyse: --fail_on: unknown finding \"" << k
            << "\"; expected none or some of " << absl::StrJoin(Kinds(), ",")
            << "\n";
        return kUsage;
      }
      fail_on.insert(std::string(k));
    }
  }
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog(p.positional);
  if (!catalog.ok()) {
    err << "utilityctl analyse: " << catalog.status().message() << "\n";
    return kInvalid;
  }
  v1::AnalysisReport report;
  const std::string only = p.get("set");
  for (const auto& [name, set] : catalog->sets()) {
    if (!only.empty() && name != only) continue;
    absl::StatusOr<v1::SetAnalysis> a = analysis::Analyse(*set, options);
    if (!a.ok()) {
      err << "utilityctl analyse: " << name << ": " << a.status().message()
          << "\n";
      return kUsage;
    }
    *report.add_sets() = *std::move(a);
  }
  if (report.sets().empty()) {
    err << "utilityctl analyse: no set named " << only << "\n";
    return kUsage;
  }
  GroupByPackage(*catalog, &report);
  int failing = 0;
  for (const v1::SetAnalysis& a : report.sets()) {
    for (const v1::Finding& f : a.findings()) {
      failing += f.accepted().empty() && fail_on.contains(f.kind());
    }
  }
  if (format == "json") {
    out << ToJson(report);
  } else {
    for (const v1::SetAnalysis& a : report.sets()) {
      out << analysis::FormatAnalysis(a) << "\n";
    }
    if (!report.packages().empty()) out << "packages:\n";
    for (const v1::PackageFinding& f : report.packages()) {
      out << absl::StrFormat("  %-16s %-17s %s: in %d set%s (%s): %s\n",
                             f.package(), f.kind(), f.subject(), f.sets_size(),
                             f.sets_size() == 1 ? "" : "s",
                             absl::StrJoin(f.sets(), ", "), f.message());
    }
  }
  if (failing > 0) {
    err << "utilityctl analyse: " << failing << " finding"
        << (failing == 1 ? "" : "s") << " of the kinds --fail_on names ("
        << absl::StrJoin(fail_on, ",") << ")\n";
    return kInvalid;
  }
  return kOk;
}

}  // namespace

Command AnalyseCommand() {
  return {
      .name = "analyse",
      .synopsis =
          "DIR|FILE... [--set NAME] [--format table|json] [--fail_on KINDS]\n"
          "                        [--budget N] [--samples N] [--map F1,F2]",
      .description =
          "Reports what the behaviour sets can never do, over their factors' "
          "declared ranges:\nconsiderations that veto everywhere, are "
          "constant or sit on a clamp plateau;\nactions that can never be "
          "selected (with a certificate), or a situation where\neach other "
          "one is (a scenario to paste); actions that can never take over "
          "while\nanother runs (its commitment bonus); actions that never "
          "score above another;\neach action's share of the box; each "
          "scenario's margin and nearest flip;\na tree's nodes never entered, "
          "conditions no value passes, utility\nchildren never chosen on "
          "their path.\nExits 1 when a finding of a "
          "kind --fail_on names is found (default:\ndead,always_veto,"
          "never_entered,never_chosen,never_holds,failing_scenario,\n"
          "unused_accept); a set accepts a finding it\n"
          "keeps on purpose (analysis.accept). See docs/ANALYSIS.md.",
      .options = {{"set", "NAME", "analyse only this set"},
                  {"format", "FORMAT", "table (default) or json"},
                  {"fail_on", "KINDS",
                   "comma-separated finding kinds that fail (or none)"},
                  {"budget", "N",
                   "boxes the search may split per action (default 20000)"},
                  {"samples", "N", "coverage samples (default 20000)"},
                  {"fragile_margin", "F",
                   "fragile below this share of the score (default 0.05)"},
                  {"fragile_share", "F",
                   "fragile when a change below this share of a factor's "
                   "range flips it (default 0.05)"},
                  {"map", "F1,F2", "print the winner over two factors"}},
      .run = Analyse};
}

}  // namespace utilityd::ctl
