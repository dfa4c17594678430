// A behaviour tree's reach: which nodes are ever entered, which conditions
// can pass and fail, which children of utility nodes are ever chosen
// (docs/ANALYSIS.md, "Trees"). Internal to the analysis.
#ifndef UTILITYD_ANALYSIS_SRC_TREE_REACH_H_
#define UTILITYD_ANALYSIS_SRC_TREE_REACH_H_

#include "model.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/v1/analysis.pb.h"

namespace utilityd::analysis::internal {

// Adds a TreeNodeReach per node of the model's set's tree to `out`, and
// its findings (never_entered, never_holds, always_holds, never_chosen).
void AnalyseTree(const Model& model, const AnalysisOptions& options,
                 v1::SetAnalysis* out);

}  // namespace utilityd::analysis::internal

#endif  // UTILITYD_ANALYSIS_SRC_TREE_REACH_H_
