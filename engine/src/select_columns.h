// Selection for many agents at once: each agent's best two candidates,
// updated one candidate column at a time with Highway (8 or 16 agents a
// step), by comparisons and selects only — so every SIMD target gives the
// same answer as the one-agent-at-a-time rule in BatchDecider::SelectOne.
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_SELECT_COLUMNS_H_
#define UTILITYD_ENGINE_SRC_SELECT_COLUMNS_H_

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

// Arrays passed to OfferColumn must hold a multiple of this many elements.
inline constexpr size_t kSelectPadding = 16;

// Offers agent j its candidate (score s[j], target t[j], current c[j], of
// action `action` and rank `rank`) for j < n, n a multiple of
// kSelectPadding: only positive scores compete; one is ahead of another
// when it is eligible and the other not (only when `check_eligible`:
// score >= min_score), else by higher rank, then higher score, then being
// the current action; a tie keeps the earlier.
void OfferColumn(size_t n, const float* s, const int32_t* t, const int32_t* c,
                 int32_t action, int32_t rank, bool check_eligible,
                 float min_score, const TopTwoView& first,
                 const TopTwoView& second);

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_SELECT_COLUMNS_H_
