// Pieces of a SetAnalysis that more than one check writes: a finding, a
// number for people, a point of the box as a scenario. Internal to the
// analysis.
#ifndef UTILITYD_ANALYSIS_SRC_REPORT_H_
#define UTILITYD_ANALYSIS_SRC_REPORT_H_

#include <string>
#include <vector>

#include "model.h"
#include "utilityd/v1/analysis.pb.h"

namespace utilityd::analysis::internal {

void AddFinding(v1::SetAnalysis* out, const std::string& kind,
                const std::string& subject, const std::string& message);

// Four significant digits.
std::string Number(double x);

// A point of `model`'s box as a scenario where `action` is expected, from
// state `current` (-1: none), with one target "t1" when `with_target`.
v1::Scenario AsScenario(const Model& model, const std::vector<double>& point,
                        bool with_target, int action, int current);

}  // namespace utilityd::analysis::internal

#endif  // UTILITYD_ANALYSIS_SRC_REPORT_H_
