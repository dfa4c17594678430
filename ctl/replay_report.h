// utilityctl replay's report for people (its --format text).
#ifndef UTILITYD_CTL_REPLAY_REPORT_H_
#define UTILITYD_CTL_REPLAY_REPORT_H_

#include <string>

#include "utilityd/v1/replay.pb.h"

namespace utilityd::ctl {

// The totals, then per set its churn, actions and from -> to table, then
// the examples.
[[nodiscard]] std::string FormatReplayReport(const v1::ReplayReport& report);

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_REPLAY_REPORT_H_
