// Selection for many agents at once: each agent's best two candidates,
// kept in registers while every candidate is offered, with Highway (8 or
// 16 agents a step), by comparisons and selects only — so every SIMD target
// gives the same answer as the one-agent-at-a-time rule in
// BatchDecider::SelectOne. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_SCORING_SELECT_COLUMNS_H_
#define UTILITYD_ENGINE_SRC_SCORING_SELECT_COLUMNS_H_

#include <cstddef>
#include <cstdint>

namespace utilityd::engine::internal {

// Agents' best two candidates so far (first and second), one array per
// field. `action` -1: none yet; held scores are positive.
struct TopTwoView {
  float* score;
  int32_t* rank;
  int32_t* action;
  int32_t* target;
  int32_t* current;  // 1 when the candidate is the agent's current one
};

// Per-agent arrays passed to TopTwo hold a multiple of this many elements.
inline constexpr size_t kSelectPadding = 16;

// Every agent's candidates, as BatchDecider holds them: one score row per
// action, indexed by agent (an agent-wide action) or by (agent, target)
// pair (a per-target action, agent j's pairs from pair_begin[j]).
struct CandidateRows {
  size_t agents = 0;
  const float* scores = nullptr;        // every row; readable 16 past its end
  const size_t* row_offset = nullptr;   // per action, into scores
  const uint8_t* per_target = nullptr;  // per action
  const int32_t* rank = nullptr;        // per action
  int actions = 0;
  // Per agent, padded to a multiple of kSelectPadding (the padding: no
  // current action); agent j's pairs are pair_begin[j] up to
  // pair_begin[j + 1] (one more entry: the padding has no pairs).
  const int32_t* current_action = nullptr;
  const int32_t* current_target = nullptr;
  const uint32_t* pair_begin = nullptr;
  // Every agent's count of targets when all have the same (agent j's pairs
  // then start at j * each), else 0. With 1 or 2 a per-target row is read
  // by whole vectors, not gathered: the scores must then be readable 32
  // past a row's end.
  uint32_t each = 0;
  bool check_eligible = false;
  float min_score = 0;
};

// Every agent's best two candidates into `first` and `second` (arrays of
// a multiple of kSelectPadding), offered in the order SelectOne offers
// them — actions in order, a per-target action's targets in order — 8 or
// 16 agents a step with their best two held in registers: only positive
// scores compete; one is ahead of another when it is eligible and the
// other not (only when `check_eligible`: score >= min_score), else by
// higher rank, then higher score, then being the current action; a tie
// keeps the earlier.
void TopTwo(const CandidateRows& rows, const TopTwoView& first,
            const TopTwoView& second);

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_SCORING_SELECT_COLUMNS_H_
