// The numbers-only answer, shared by the compact form (CompactDecisions)
// and the block form (DecisionBlock), whose columns have the same names.
// Internal to the codec.
#ifndef UTILITYD_CODEC_SRC_ANSWER_COLUMNS_H_
#define UTILITYD_CODEC_SRC_ANSWER_COLUMNS_H_

#include <cstdint>

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

// Writes agents' numbers into the pre-sized columns through pointers
// taken once (no accessor per value): a block's rows written in one loop.
// Valid while the columns are not resized.
template <class Columns>
class ColumnWriter {
 public:
  explicit ColumnWriter(Columns* c)
      : action_(c->mutable_action_index()->mutable_data()),
        target_(c->mutable_target_index()->mutable_data()),
        score_(c->mutable_score()->mutable_data()),
        flags_(c->mutable_flags()->data()) {}

  // Agent i's numbers.
  void Write(const engine::BatchDecision& d, int i) const {
    action_[i] = d.action;
    target_[i] = d.target;
    score_[i] = d.score;
    flags_[i] = static_cast<char>((d.switched ? v1::COMPACT_FLAG_SWITCHED : 0) |
                                  (d.fallback ? v1::COMPACT_FLAG_FALLBACK : 0));
  }

 private:
  int32_t* const action_;
  int32_t* const target_;
  float* const score_;
  char* const flags_;
};

// Writes agent i's numbers into the pre-sized columns.
template <class Columns>
void WriteColumns(const engine::BatchDecision& d, int i, Columns* c) {
  ColumnWriter<Columns>(c).Write(d, i);
}

}  // namespace utilityd::codec::internal

#endif  // UTILITYD_CODEC_SRC_ANSWER_COLUMNS_H_
