// BatchPass's one-pass scoring of an action (batch_pass.h): which actions
// take it and how their rows are laid out for internal::ScoreActionTiles.
#include <algorithm>

#include "scoring/batch_pass.h"
#include "scoring/consider_column.h"
#include "scoring/select_columns.h"
#include "utilityd/engine/scoring_rules.h"

namespace utilityd::engine::internal {

// How `act`'s contributions fold: the set's aggregation, compensated per
// consideration for the product when the set says so and there are two or
// more (gates aside).
internal::FoldRule BatchPass::RuleOf(const CompiledBehaviourSet& set,
                                     const CompiledAction& act) const {
  const int n = static_cast<int>(act.compensated_count);
  return {set.aggregation(),
          set.aggregation() == Aggregation::kProduct &&
              set.compensation() == Compensation::kPerConsideration && n > 1,
          CompensationModifier(n)};
}

// Whether `action` is scored in one pass with its accumulators in
// registers (internal::ScoreActionTiles): every consideration takes the
// fused pass, the score is Finish's common case (no personality, cooldown,
// trace or kept candidates), by the product or the minimum, the score the
// aggregate itself (no compensation on the product as a whole).
bool BatchPass::Tiles(const CompiledBehaviourSet& set, int action) const {
  const CompiledAction& act = set.actions()[action];
  if (tracing_ || keep_ || (act.per_target && !internal::TilesPerTarget()) ||
      act.consideration_count > internal::kMaxTileConsiderations ||
      (act.cooldown_seconds > 0 && any_cooldown_input_) ||
      set.aggregation() == Aggregation::kWeightedSum ||
      set.compensation() == Compensation::kOnProduct ||
      set.compensation() == Compensation::kGeometricMean) {
    return false;
  }
  for (uint32_t k = 0; k < act.consideration_count; ++k) {
    if (!Fused(set.considerations()[act.first_consideration + k])) {
      return false;
    }
  }
  return true;
}

// Considerations and Finish for an action Tiles takes, in one pass. A
// curve without a float shape (the own maths), and a per-target action's
// agent-wide consideration (once per agent), have their outputs computed
// first.
void BatchPass::ScoreTiles(const CompiledBehaviourSet& set, int action) {
  using internal::TileSource;
  const CompiledAction& act = set.actions()[action];
  const bool pt = act.per_target;
  const size_t n_agents = agents_.size(), count = pt ? n_pairs_ : n_agents;
  const size_t nc = act.consideration_count;
  const CompiledConsideration* cs =
      set.considerations().data() + act.first_consideration;
  tile_x_.resize(nc);
  tile_source_.resize(nc);
  size_t outputs = 0;
  for (size_t k = 0; k < nc; ++k) {
    const bool agent_wide = pt && !cs[k].per_target;
    tile_source_[k] = agent_wide ? TileSource::kAgentOutputs
                      : internal::TilesCurve(cs[k].curve)
                          ? TileSource::kCompute
                          : TileSource::kRowOutputs;
    if (tile_source_[k] != TileSource::kCompute) {
      outputs += (agent_wide ? n_agents : count) + internal::kSelectPadding;
    }
  }
  if (tile_outputs_.size() < outputs) tile_outputs_.resize(outputs);  // grows
  float* next = tile_outputs_.data();
  for (size_t k = 0; k < nc; ++k) {
    const CompiledConsideration& c = cs[k];
    if (tile_source_[k] == TileSource::kCompute) {
      tile_x_[k] = FactorColumn(c, pt);
      continue;
    }
    const bool agent_wide = tile_source_[k] == TileSource::kAgentOutputs;
    const size_t len = agent_wide ? n_agents : count;
    internal::OutputColumn(
        c, agent_wide ? agent_base_ + c.factor * n_agents : FactorColumn(c, pt),
        len, next);
    tile_x_[k] = next;
    next += len + internal::kSelectPadding;
  }
  internal::ActionTiles tiles;
  tiles.considerations = cs;
  tiles.source = tile_source_.data();
  tiles.x = tile_x_.data();
  tiles.count = nc;
  tiles.rule = RuleOf(set, act);
  tiles.weight = act.weight;
  tiles.commitment = CommitmentFactor(set.selection().commitment_bonus);
  tiles.action = action;
  if (pt) {
    // Read a vector at a time by agent (padding: no running action).
    current_action_.resize(n_agents + internal::kSelectPadding, -1);
    current_target_.resize(n_agents + internal::kSelectPadding, -1);
    tiles.agent = pair_agent_.data();
    tiles.target = pair_target_.data();
    tiles.running_target = current_target_.data();
    tiles.each = targets_each_;
  }
  tiles.running = current_action_.data();
  vetoes_[action] += internal::ScoreActionTiles(
                         tiles, count, scores_.data() + row_offset_[action]) +
                     (pt ? agents_without_targets_ : 0);
}

}  // namespace utilityd::engine::internal
