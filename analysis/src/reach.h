// Whether an action can be selected anywhere in the box (branch and bound
// with exact per-term bounds, every box's middle decided by the engine),
// and whether one action ever outscores another (a separable difference's
// maximum as a sum of one-factor maxima). Internal to the analysis.
#ifndef UTILITYD_ANALYSIS_SRC_REACH_H_
#define UTILITYD_ANALYSIS_SRC_REACH_H_

#include <optional>
#include <string>
#include <vector>

#include "model.h"

namespace utilityd::analysis::internal {

enum class ReachKind { kAlive, kDead, kUndecided };

// What the search looks for: a situation where the action is selected, or
// only one where it is eligible (scores above 0 and min_score: a utility
// node that tries the next best child when one fails can reach any
// eligible child).
enum class ReachGoal { kSelected, kEligible };

struct Part {
  Box box;
  std::string reason;  // vetoed, below_min_score, outranked, outscored,
                       // path_condition, ...
  int by = -1;         // the action that outranks or outscores
  int condition = -1;  // path_condition: the condition node
};

struct ReachResult {
  ReachKind kind = ReachKind::kUndecided;
  std::vector<double> witness;  // alive: a point where it is selected
  bool witness_has_target = false;
  std::vector<Part> certificate;  // dead: why, part by part
  int64_t boxes = 0;
};

// Searches for a situation where action `a` is selected from state
// `current` (-1: none), over the box with no target (flat actions) or one
// target (per-target actions), where every condition of `path` (if given)
// has its outcome.
ReachResult Reach(const Model& model, int a, int current, int64_t max_boxes,
                  double min_width,
                  const std::vector<PathCondition>* path = nullptr,
                  ReachGoal goal = ReachGoal::kSelected);

// Whether action `b` scores at least as much as `a` everywhere in the box
// (fresh state); nullopt when the set's aggregation does not separate
// (min, on_product compensation).
std::optional<bool> NeverAbove(const Model& model, int a, int b);

}  // namespace utilityd::analysis::internal

#endif  // UTILITYD_ANALYSIS_SRC_REACH_H_
