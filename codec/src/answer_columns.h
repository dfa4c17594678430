// The numbers-only answer, shared by the compact form (CompactDecisions)
// and the block form (DecisionBlock), whose columns have the same names.
// Internal to the codec.
#ifndef UTILITYD_CODEC_SRC_ANSWER_COLUMNS_H_
#define UTILITYD_CODEC_SRC_ANSWER_COLUMNS_H_

#include "utilityd/engine/batch.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec::internal {

// Sizes the columns for `n` agents: no action, no target, score 0.
template <class Columns>
void StartColumns(int n, Columns* c) {
  c->mutable_action_index()->Resize(n, -1);
  c->mutable_target_index()->Resize(n, -1);
  c->mutable_score()->Resize(n, 0.0f);
  c->mutable_flags()->assign(n, '\0');
}

// Writes agent i's numbers into the pre-sized columns.
template <class Columns>
void WriteColumns(const engine::BatchDecision& d, int i, Columns* c) {
  c->mutable_action_index()->Set(i, d.action);
  c->mutable_target_index()->Set(i, d.target);
  c->mutable_score()->Set(i, d.score);
  (*c->mutable_flags())[i] =
      static_cast<char>((d.switched ? v1::COMPACT_FLAG_SWITCHED : 0) |
                        (d.fallback ? v1::COMPACT_FLAG_FALLBACK : 0));
}

}  // namespace utilityd::codec::internal

#endif  // UTILITYD_CODEC_SRC_ANSWER_COLUMNS_H_
