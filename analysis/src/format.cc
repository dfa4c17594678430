// FormatAnalysis: a SetAnalysis for people.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "utilityd/analysis/analysis.h"

namespace utilityd::analysis {
namespace {

const char* ReachName(v1::Reach r) {
  switch (r) {
    case v1::REACH_ALIVE:
      return "alive";
    case v1::REACH_DEAD:
      return "DEAD";
    case v1::REACH_UNDECIDED:
      return "undecided";
    default:
      return "-";
  }
}

// A witness as YAML to paste under the set's `scenarios:`.
std::string WitnessYaml(const v1::Scenario& s) {
  std::vector<std::string> factors;
  for (const auto& [name, value] : s.factors()) {
    factors.push_back(absl::StrFormat("%s: %.6g", name, value));
  }
  std::sort(factors.begin(), factors.end());
  std::string out =
      absl::StrCat("    - name: \"", s.name(), "\"\n      factors: {",
                   absl::StrJoin(factors, ", "), "}\n");
  for (const v1::ScenarioTarget& t : s.targets()) {
    std::vector<std::string> tf;
    for (const auto& [name, value] : t.factors()) {
      tf.push_back(absl::StrFormat("%s: %.6g", name, value));
    }
    std::sort(tf.begin(), tf.end());
    absl::StrAppend(&out, "      targets: [{id: ", t.id(), ", factors: {",
                    absl::StrJoin(tf, ", "), "}}]\n");
  }
  if (!s.current_action().empty()) {
    absl::StrAppend(&out, "      current_action: ", s.current_action(), "\n");
  }
  absl::StrAppend(&out, "      expected_action: ", s.expected_action(), "\n");
  if (!s.expected_target().empty()) {
    absl::StrAppend(&out, "      expected_target: ", s.expected_target(), "\n");
  }
  return out;
}

// A tree set's nodes: kind and label, reach, and the conditions that hold
// when each is entered (or why it never is).
void AppendTree(const v1::SetAnalysis& a, std::string* out_text) {
  std::string& out = *out_text;
  if (a.tree_size() > 0) {
    absl::StrAppend(&out, absl::StrFormat("  %-4s %-28s %-9s %s\n", "node",
                                          "tree", "reach", "entered when"));
  }
  for (const v1::TreeNodeReach& x : a.tree()) {
    const std::string what =
        absl::StrCat(x.kind(), x.label() == absl::StrCat("node ", x.node())
                                   ? ""
                                   : absl::StrCat(" ", x.label()));
    std::string notes = x.reach() == v1::REACH_DEAD
                            ? x.reason()
                            : absl::StrJoin(x.path(), ", ");
    if (x.kind() == "condition") {
      absl::StrAppend(
          &notes, notes.empty() ? "" : "; ",
          absl::StrFormat("curve %.3g..%.3g", x.min_output(), x.max_output()));
    }
    absl::StrAppend(&out, absl::StrFormat("  %-4d %-28s %-9s %s\n", x.node(),
                                          what, ReachName(x.reach()), notes));
  }
}

}  // namespace

std::string FormatAnalysis(const v1::SetAnalysis& a) {
  std::string out = absl::StrCat(a.behaviour_set(), " (revision ",
                                 a.revision().substr(0, 12), ")\n");
  if (a.findings().empty()) {
    absl::StrAppend(&out, "  no findings\n");
  } else {
    absl::StrAppend(&out, "  findings:\n");
    for (const v1::Finding& f : a.findings()) {
      absl::StrAppend(&out, absl::StrFormat("    %-17s %s: %s\n", f.kind(),
                                            f.subject(), f.message()));
      if (!f.accepted().empty()) {
        absl::StrAppend(&out, "                      accepted: ", f.accepted(),
                        "\n");
      }
    }
  }
  if (a.actions_size() > 0) {
    absl::StrAppend(&out, absl::StrFormat("  %-20s %-9s %-24s %s\n", "action",
                                          "reach", "coverage [95%]", "notes"));
    for (const v1::ActionReach& x : a.actions()) {
      std::vector<std::string> notes;
      if (x.dominated_by_size() > 0) {
        notes.push_back(absl::StrCat("never above ",
                                     absl::StrJoin(x.dominated_by(), ", ")));
      }
      if (x.never_interrupts_size() > 0) {
        notes.push_back(absl::StrCat(
            "never interrupts ", absl::StrJoin(x.never_interrupts(), ", ")));
      }
      absl::StrAppend(
          &out,
          absl::StrFormat("  %-20s %-9s %5.1f%% [%4.1f, %4.1f]     %s\n",
                          x.action(), ReachName(x.reach()), 100 * x.coverage(),
                          100 * x.coverage_low(), 100 * x.coverage_high(),
                          absl::StrJoin(notes, "; ")));
    }
    if (a.has_coverage()) {
      absl::StrAppend(
          &out,
          absl::StrFormat("  (coverage: %d uniform samples of the box; "
                          "nothing selected in %.1f%%)\n",
                          a.coverage().samples(), 100 * a.coverage().none()));
    }
  }
  AppendTree(a, &out);
  if (a.scenarios_size() > 0) {
    absl::StrAppend(
        &out, absl::StrFormat("  %-34s %-14s %-14s %-8s %s\n", "scenario",
                              "expected", "winner", "margin", "nearest flip"));
    for (const v1::ScenarioMargin& s : a.scenarios()) {
      const std::string flip =
          s.nearest_factor().empty()
              ? "-"
              : absl::StrFormat("%s %.4g (%.1f%% of range)%s",
                                s.nearest_factor(), s.nearest_value(),
                                100 * s.nearest_share(),
                                s.fragile() ? "  FRAGILE" : "");
      absl::StrAppend(&out, absl::StrFormat("  %-34s %-14s %-14s %-8.4f %s\n",
                                            s.scenario(), s.expected_action(),
                                            s.winner(), s.margin(), flip));
    }
  }
  const v1::Coverage& c = a.coverage();
  if (c.map_rows_size() > 0) {
    absl::StrAppend(&out, "  winner over ", c.map_x(), " (across) and ",
                    c.map_y(), " (up), the other factors at mid-range:\n");
    for (const std::string& row : c.map_rows()) {
      absl::StrAppend(&out, "    |", row, "|\n");
    }
    std::vector<std::string> legend;
    for (const auto& [k, v] : c.legend()) legend.push_back(k + " " + v);
    std::sort(legend.begin(), legend.end());
    absl::StrAppend(&out, "    ", absl::StrJoin(legend, ", "), "\n");
  }
  bool witnesses = false;
  for (const v1::ActionReach& x : a.actions()) {
    if (!x.has_witness()) continue;
    if (!witnesses) {
      absl::StrAppend(&out,
                      "  witnesses (situations where each action is "
                      "selected; paste under scenarios:):\n");
      witnesses = true;
    }
    absl::StrAppend(&out, WitnessYaml(x.witness()));
  }
  for (const std::string& n : a.not_analysed()) {
    absl::StrAppend(&out, "  not analysed: ", n, "\n");
  }
  return out;
}

}  // namespace utilityd::analysis
