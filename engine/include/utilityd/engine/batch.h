// Decides many agents of one behaviour set at once. This is the engine's one
// scoring path: Decide for a single agent is a batch of one, and explain
// full is a trace written by the same pass.
//
// The pass, in named steps:
//   Admit       check each agent's input against the set
//   Transpose   factors into one column per factor (agents, and
//               agent-target pairs for per-target actions)
//   per action:
//     Considerations  normalise -> curve -> output -> weight -> aggregate,
//                     and vetoes, one consideration over a whole column
//     Finish          compensate -> action weight and personality ->
//                     cooldown -> commitment -> veto to 0
//   Select      the best two candidates of every agent (for the highest
//               strategy and 16 agents or more, a column at a time across
//               agents), then per agent: ranks, eligibility, the strategy,
//               ties, the fallback, the runner-up; and the trace when
//               asked for
//
//   BatchDecider decider;                      // reuse: no allocation
//   std::vector<BatchDecision> out(inputs.size());
//   decider.Decide(set, inputs, ExplainLevel::kNone, absl::MakeSpan(out));
#ifndef UTILITYD_ENGINE_BATCH_H_
#define UTILITYD_ENGINE_BATCH_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine {
namespace internal {
class BatchPass;
}  // namespace internal

// A block's factors as an ECS chunk holds them, factor-major: factor f of
// row r at data[f * rows + r]. inputs[i] of the call is row row_of[i]
// (row_of empty: row i).
struct FactorMajorColumns {
  const float* data = nullptr;
  size_t rows = 0;
  absl::Span<const int> row_of;
};

// A block's agents as columns, each field as the block carries it: row r's
// factor f at factors[f * rows + r] (factors_by_row: at
// factors[r * factor_count + f]); row r's targets are targets
// target_offsets[r] up to target_offsets[r + 1], target g's factors at
// target_factors[g * target_factor_count ...]; seconds_since_action row-major
// (row r's action a at r * action_count + a; +infinity "never"). A column
// left empty means its default for every row: no running action, target
// not given (kAnyTarget), no personality, seed 0, nothing ended recently,
// no targets.
struct AgentColumns {
  size_t rows = 0;
  const float* factors = nullptr;
  bool factors_by_row = false;
  absl::Span<const int32_t> current_action, current_target, personality;
  absl::Span<const uint64_t> seeds;
  absl::Span<const float> seconds_since_action;
  absl::Span<const uint32_t> target_offsets;  // rows + 1, or empty
  absl::Span<const float> target_factors;
};

class BatchDecider {
 public:
  // Decides inputs[i] into out[i] (out.size() >= inputs.size()). An agent
  // whose input does not fit the set gets its error in `errors` (when given,
  // sized like inputs; OK elsewhere) and action -1; the others are decided.
  // When `traces` is not empty (size >= inputs.size()), traces[i] also gets
  // every candidate of a decided agent, and at ExplainLevel::kFull every
  // consideration; without traces the level changes nothing and costs
  // nothing. Afterwards, vetoes_by_action() counts the vetoed candidates of
  // the decided agents per action, and agents_with_invalid_input() those
  // agents with a candidate vetoed first for a NaN or infinite input.
  void Decide(const CompiledBehaviourSet& set,
              absl::Span<const AgentInput> inputs, ExplainLevel level,
              absl::Span<BatchDecision> out,
              std::vector<absl::Status>* errors = nullptr,
              absl::Span<Decision> traces = {});

  // As Decide, for inputs the caller has already checked against `set`
  // with CheckAgentInput (a tree's utility node: the tick checked the
  // agent): the check is skipped. An input that does not fit is undefined.
  void DecideChecked(const CompiledBehaviourSet& set,
                     absl::Span<const AgentInput> inputs, ExplainLevel level,
                     absl::Span<BatchDecision> out,
                     absl::Span<Decision> traces = {});

  // As Decide at ExplainLevel::kNone, each input's factors read from
  // `columns` instead of its own `factors` (left empty): the columns are
  // the engine's working columns as they stand when every row is an input
  // and fits (no transpose, no copy), else gathered once. Bit for bit the
  // decisions Decide makes with the same factors in each input.
  void DecideFactorMajor(const CompiledBehaviourSet& set,
                         absl::Span<const AgentInput> inputs,
                         const FactorMajorColumns& columns,
                         absl::Span<BatchDecision> out,
                         std::vector<absl::Status>* errors = nullptr);

  // As Decide at ExplainLevel::kNone, rows[r] decided into out[r]
  // (out.size() >= rows), every field read from its column: no AgentInput
  // per row, each column checked as a whole. A column whose length does not
  // fit (a per-row column neither empty nor `rows` long, offsets that are
  // not rows + 1 entries rising from 0 to the targets' count, target
  // factors not that count x target_factor_count) refuses the call with
  // INVALID_ARGUMENT naming it, nothing decided. A row whose index is out
  // of range (running action, personality, current target) gets the error
  // CheckAgentInput gives it in `errors` (sized `rows`) and action -1; the
  // other rows are decided, bit for bit as Decide decides the same fields.
  absl::Status DecideColumns(const CompiledBehaviourSet& set,
                             const AgentColumns& columns,
                             absl::Span<BatchDecision> out,
                             std::vector<absl::Status>* errors = nullptr);

  BatchDecider();
  ~BatchDecider();
  BatchDecider(BatchDecider&&) noexcept;
  BatchDecider& operator=(BatchDecider&&) noexcept;

  absl::Span<const uint32_t> vetoes_by_action() const;

  // With candidates kept, what the last Decide scored stays readable
  // without a trace (replay compares vetoes and margins this way), for
  // inputs[input] of that Decide: whether some candidate of `action` was not
  // vetoed, and the final score of the candidate (action, target), target
  // -1 for an action that is not per-target (0 when vetoed, absent, or the
  // input failed). Off by default: it costs a pass over each row.
  void set_keep_candidates(bool on);
  bool ActionOpen(size_t input, int action) const;
  float CandidateScore(const CompiledBehaviourSet& set, size_t input,
                       int action, int target) const;
  uint32_t agents_with_invalid_input() const;

 private:
  // The pass's working memory (scoring/batch_pass.h), reused across calls.
  std::unique_ptr<internal::BatchPass> pass_;
};

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_BATCH_H_
