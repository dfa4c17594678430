// One fused pass per consideration over a whole row of candidates:
// normalise the factor, evaluate the curve, apply the output range and the
// weight, and fold the contribution into the action's accumulators, marking
// vetoes — in registers, 8 or 16 candidates a step (Google Highway), instead
// of one pass over memory per step. Every operation is the one the
// separate passes of BatchDecider (and its explain-full trace) perform, in
// the same order, so the results are the same bits on every SIMD target
// and on both paths. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_SCORING_CONSIDER_COLUMN_H_
#define UTILITYD_ENGINE_SRC_SCORING_CONSIDER_COLUMN_H_

#include <cstddef>
#include <cstdint>

#include "utilityd/engine/compiled_set.h"

namespace utilityd::engine::internal {

// An action's running values over its row, as BatchDecider keeps them.
struct RowAccumulators {
  float* raw;         // the aggregate so far
  float* comp;        // the product with per-consideration compensation
  float* weight_sum;  // the weighted sum's weights so far
  uint32_t* veto;     // 0 none, 1 invalid input, 2 a consideration's zero
  // Where the values so far are read: the same rows, or for an action's
  // first consideration rows of the starting values (so that the rows
  // above need not be filled first). The weighted sum reads its own.
  const float* raw_from;
  const float* comp_from;
  const uint32_t* veto_from;
};

// How the consideration's contributions combine.
struct FoldRule {
  Aggregation aggregation = Aggregation::kProduct;
  bool compensate = false;  // per consideration (the product only)
  float modifier = 0;       // CompensationModifier(n)
};

// Whether the fused pass computes `c`'s curve (every kind but the
// piecewise linear, whose points the separate passes walk).
bool FusesCurve(const CompiledCurve& curve);

// Folds consideration `c` over x[0..n) (its factor column, every value
// finite; one weight, c.weight, for all) into `acc`.
void ConsiderColumn(const CompiledConsideration& c, const FoldRule& rule,
                    const float* x, size_t n, const RowAccumulators& acc);

// An agent-wide consideration of a per-target action in two steps, so that
// its curve runs once per agent rather than once per target: out[0..n) =
// c's output (normalised, curved, rescaled) of x[0..n), the agents'
// column; then the row's element m folds out[index[m]] (its agent's).
// When every agent has `each` elements (each > 0), element m's agent is
// m / each, and out must be readable 16 values past its last agent.
void OutputColumn(const CompiledConsideration& c, const float* x, size_t n,
                  float* out);
void FoldGathered(const CompiledConsideration& c, const FoldRule& rule,
                  const float* out, const uint32_t* index, size_t n,
                  uint32_t each, const RowAccumulators& acc);

// An action scored in one pass over its row, a tile of vectors at a
// time, with its accumulator and vetoes in registers across its
// considerations, then finished as BatchDecider's common case does:
// score = 0 when vetoed, else aggregate * weight * (commitment when the
// candidate is its agent's current one). For an action whose every
// consideration takes the fused pass (finite inputs, one weight for all),
// by the product (compensated per consideration or not) or the minimum,
// with nothing traced, kept, cooling or varied by personality. Each value
// is computed by the operations ConsiderColumn, FoldGathered and Finish
// perform, in their order, so the scores are the same bits.
//
// Where each consideration's values come from: its factor column over the
// row, through its float shape (kCompute, TilesCurve); its outputs over
// the row (kRowOutputs); or, an agent's factor in a per-target action, its
// outputs over the agents (kAgentOutputs, readable 16 past the last agent
// when every agent has `each` targets). Outputs come from OutputColumn.
enum class TileSource : uint8_t { kCompute, kRowOutputs, kAgentOutputs };
struct ActionTiles {
  const CompiledConsideration* considerations = nullptr;
  const TileSource* source = nullptr;  // per consideration
  const float* const* x = nullptr;     // per consideration
  size_t count = 0;                    // considerations
  FoldRule rule;
  float weight = 1;      // the action's
  float commitment = 1;  // CommitmentFactor of the set's bonus
  int32_t action = 0;
  const int32_t* running = nullptr;  // per agent, its running action
  // A per-target action's row of (agent, target) pairs: each pair's agent
  // and target, each agent's running target, and every agent's count of
  // targets when all have the same (else 0). No agent: the row is the
  // agents'.
  const uint32_t* agent = nullptr;
  const uint32_t* target = nullptr;
  const int32_t* running_target = nullptr;
  uint32_t each = 0;
};

// Whether a curve has a float shape (every kind FusesCurve takes but the
// own maths in double), so that a tile can compute it.
bool TilesCurve(const CompiledCurve& curve);

// Whether the SIMD target in use scores per-target actions in tiles too
// (where it is faster: the same bits either way).
bool TilesPerTarget();

// The most considerations an action ScoreActionTiles takes may have.
inline constexpr size_t kMaxTileConsiderations = 32;

// Scores `a` for the row [0, n) into score[0..n); returns how many it
// vetoed.
uint32_t ScoreActionTiles(const ActionTiles& a, size_t n, float* score);

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_SCORING_CONSIDER_COLUMN_H_
