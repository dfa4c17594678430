// utilityctl replay's text report (replay_report.h).
#include "ctl/replay_report.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace utilityd::ctl {
namespace {

// Appends "<label>: key n key n ...\n", keys in order.
void AppendCounts(absl::string_view label,
                  const google::protobuf::Map<std::string, int64_t>& counts,
                  std::string* s) {
  const std::map<std::string, int64_t> sorted(counts.begin(), counts.end());
  absl::StrAppend(s, label, ":");
  for (const auto& [key, n] : sorted) absl::StrAppend(s, " ", key, " ", n);
  *s += "\n";
}

}  // namespace

std::string FormatReplayReport(const v1::ReplayReport& r) {
  std::string s =
      absl::StrFormat("entries read %d, replayed %d, errors %d; baseline: %s\n",
                      r.entries_read(), r.replayed(), r.errors(), r.baseline());
  if (!r.skipped().empty()) AppendCounts("skipped", r.skipped(), &s);
  if (r.variants().contains("canary")) {
    AppendCounts("decided by", r.variants(), &s);
  }
  absl::StrAppend(
      &s,
      absl::StrFormat("churn %.2f%%  (%d flipped of %d compared",
                      100 * r.churn(), r.flipped(), r.replayed() - r.errors()));
  if (r.random_decisions() > 0) {
    absl::StrAppend(
        &s, absl::StrFormat("; %d by a random strategy, mean total "
                            "variation %.3f",
                            r.random_decisions(), r.total_variation().mean()));
  }
  s += ")\n";
  auto spread = [&s](const char* what, const v1::Spread& x) {
    if (x.count() == 0) return;
    absl::StrAppend(
        &s, absl::StrFormat("%-22s p50 %.4f  p99 %.4f  max %.4f  (%d)\n", what,
                            x.p50(), x.p99(), x.max(), x.count()));
  };
  spread("winner score |change|", r.winner_score_change());
  spread("flip margin", r.flip_margin());
  if (r.baseline_mismatches() > 0) {
    absl::StrAppend(
        &s, "baseline mismatches: ", r.baseline_mismatches(),
        " (the baseline at the logged revision decided otherwise)\n");
  }
  for (const v1::SetChurn& set : r.sets()) {
    absl::StrAppend(
        &s, absl::StrFormat("\n%s  %s -> %s  churn %.2f%%  (%d of %d)",
                            set.behaviour_set(), set.baseline_revision(),
                            set.candidate_revision(), 100 * set.churn(),
                            set.flipped(), set.decisions()));
    if (set.errors() > 0) {
      absl::StrAppend(&s, "  errors ", set.errors(),
                      ", first: ", set.first_error());
    }
    absl::StrAppend(&s, absl::StrFormat("\n  %-20s %9s %9s %7s %8s %8s\n",
                                        "action", "baseline", "candidate",
                                        "churn", "+winning", "+vetoed"));
    for (const v1::ActionChurn& a : set.actions()) {
      absl::StrAppend(&s, absl::StrFormat("  %-20s %9d %9d %6.1f%% %8d %8d\n",
                                          a.action(), a.baseline_wins(),
                                          a.candidate_wins(), 100 * a.churn(),
                                          a.newly_winning(), a.newly_vetoed()));
    }
    s += "  from -> to\n";
    bool any = false;
    for (const v1::Transition& t : set.transitions()) {
      if (t.from() == t.to() && t.target_changed() == 0) continue;
      any = true;
      absl::StrAppend(
          &s, absl::StrFormat("    %-18s -> %-18s %8d",
                              t.from().empty() ? "(none)" : t.from(),
                              t.to().empty() ? "(none)" : t.to(), t.count()));
      if (t.target_changed() > 0) {
        absl::StrAppend(
            &s, absl::StrFormat("  (%d other target)", t.target_changed()));
      }
      s += "\n";
    }
    if (!any) s += "    (no changes)\n";
  }
  for (const v1::ReplayExample& x : r.examples()) {
    auto side = [](const v1::ReplaySide& d) {
      std::string chosen = d.action().empty() ? "(none)" : d.action();
      if (!d.target_id().empty()) absl::StrAppend(&chosen, "@", d.target_id());
      return absl::StrFormat("%s %.3f", chosen, d.score());
    };
    absl::StrAppend(
        &s,
        absl::StrFormat("\nexample %s  %s  %s: %s -> %s  (margin %.3f)\n",
                        x.decision_id(), x.agent_id(), x.behaviour_set(),
                        side(x.baseline()), side(x.candidate()), x.margin()));
    if (!x.baseline().summary().empty()) {
      absl::StrAppend(&s, "  baseline:  ", x.baseline().summary(), "\n");
    }
    if (!x.candidate().summary().empty()) {
      absl::StrAppend(&s, "  candidate: ", x.candidate().summary(), "\n");
    }
  }
  return s;
}

}  // namespace utilityd::ctl
