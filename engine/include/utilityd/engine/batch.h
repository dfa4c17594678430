// Decides many agents of one behaviour set at once: the fast path for
// explain levels none and top, which the service uses for every batch.
//
// The agents' factors are transposed into columns and each consideration
// is evaluated for the whole column with its curve kind decided once, so
// the loops are tight and free of per-agent dispatch; each candidate keeps
// its accumulators in a column too. The arithmetic per agent is exactly
// Decide's, in the same order, so results are identical to calling Decide
// for each agent (batch_test checks this over random inputs, every example
// set and strategy).
//
//   BatchDecider decider;                         // reuse: no allocation
//   std::vector<BatchDecision> out(inputs.size());
//   absl::Status s = decider.Decide(set, inputs, ExplainLevel::kNone, out);
#ifndef UTILITYD_ENGINE_BATCH_H_
#define UTILITYD_ENGINE_BATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine {

// What Decide reports at ExplainLevel::kNone and kTop, per agent.
struct BatchDecision {
  int32_t action = -1;
  int32_t target = -1;
  float score = 0;
  bool switched = false;
  bool fallback = false;
  int32_t rank = 0;
  int32_t runner_up_action = -1;
  int32_t runner_up_target = -1;
  float runner_up_score = 0;
  double draw = -1;
};

// The summary of a full Decision.
[[nodiscard]] BatchDecision Summarise(const Decision& d);

// Adds d's vetoed candidates to `vetoes_by_action` (sized to the set's
// actions); returns whether one was vetoed first for a non-finite input.
bool CountVetoes(const Decision& d, absl::Span<uint32_t> vetoes_by_action);

class BatchDecider {
 public:
  // Decides inputs[i] into out[i] (out.size() >= inputs.size()). An agent
  // whose input does not fit the set gets its error in `errors` (when given,
  // sized like inputs; OK elsewhere) and action -1; the others are decided.
  // Random strategies and explain full go through Decide agent by agent.
  // Afterwards, vetoes_by_action() counts the vetoed candidates of the
  // decided agents per action, and agents_with_invalid_input() those agents
  // with a candidate vetoed first for a NaN or infinite input — as Decide's
  // traces would.
  void Decide(const CompiledBehaviourSet& set,
              absl::Span<const AgentInput> inputs, ExplainLevel level,
              absl::Span<BatchDecision> out,
              std::vector<absl::Status>* errors = nullptr);

  absl::Span<const uint32_t> vetoes_by_action() const { return vetoes_; }
  uint32_t agents_with_invalid_input() const { return invalid_agents_; }

 private:
  void ScoreColumns(const CompiledBehaviourSet& set,
                    absl::Span<const AgentInput> inputs);
  void Select(const CompiledBehaviourSet& set,
              absl::Span<const AgentInput> inputs,
              absl::Span<BatchDecision> out);

  // Agents that fit the set (indices into inputs).
  std::vector<uint32_t> agents_;
  // Candidate rows: for each non-target action one row over agents_; for
  // each per-target action one row over pairs_ (agent, target).
  std::vector<uint32_t> pair_agent_;   // pair -> position in agents_
  std::vector<uint32_t> pair_target_;  // pair -> target index
  std::vector<uint32_t> pair_begin_;   // position in agents_ -> first pair
  std::vector<int32_t> current_action_, current_target_;  // per agent
  // Factor columns: agent factors over agents, target factors over pairs,
  // and agent factors over pairs (filled on first use).
  std::vector<float> agent_columns_, target_columns_, pair_columns_;
  std::vector<uint8_t> pair_column_ready_;
  // Per column: holds a NaN or an infinity.
  std::vector<uint8_t> agent_nonfinite_, target_nonfinite_;
  std::vector<float> normalised_, curved_, weights_;
  std::vector<float> raw_acc_, comp_acc_, weight_sum_;
  // Per row element: 0 not vetoed, 1 vetoed first for a non-finite input,
  // 2 vetoed first by a zero contribution.
  std::vector<uint8_t> veto_;
  std::vector<uint8_t> agent_invalid_;
  std::vector<uint32_t> vetoes_;
  uint32_t invalid_agents_ = 0;
  // Final scores: row offsets per action into scores_.
  std::vector<float> scores_;
  std::vector<size_t> row_offset_;
  Decision scalar_;
};

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_BATCH_H_
