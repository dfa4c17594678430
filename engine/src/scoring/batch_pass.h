// BatchDecider's pass and its working memory (batch.cc): the steps batch.h
// lists, each a method, and the columns, rows and selection arrays they
// share, kept across calls so that a reused decider allocates nothing.
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_SCORING_BATCH_PASS_H_
#define UTILITYD_ENGINE_SRC_SCORING_BATCH_PASS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "scoring/consider_column.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/explain.h"

namespace utilityd::engine::internal {

class BatchPass {
 public:
  // Decide and DecideChecked: `check` runs CheckAgentInput on each input;
  // with `columns` (DecideFactorMajor) the factors come from there.
  void Run(const CompiledBehaviourSet& set, absl::Span<const AgentInput> inputs,
           ExplainLevel level, absl::Span<BatchDecision> out,
           std::vector<absl::Status>* errors, absl::Span<Decision> traces,
           bool check, const FactorMajorColumns* columns = nullptr);
  // DecideColumns: every field from its column (checked by the caller for
  // its shape, CheckColumns).
  void RunColumns(const CompiledBehaviourSet& set, const AgentColumns& columns,
                  absl::Span<BatchDecision> out,
                  std::vector<absl::Status>* errors);
  bool ActionOpen(size_t input, int action) const;
  float CandidateScore(const CompiledBehaviourSet& set, size_t input,
                       int action, int target) const;
  absl::Span<const uint32_t> vetoes() const { return vetoes_; }
  uint32_t invalid_agents() const { return invalid_agents_; }
  void set_keep_candidates(bool on) { keep_ = on; }

 private:
  // One candidate as selection sees it.
  struct Candidate {
    int32_t action;
    int32_t target;
    float score;
    int32_t rank;
  };

  // The steps after admission, for `n_inputs` inputs or rows.
  void Score(const CompiledBehaviourSet& set, const FactorMajorColumns* columns,
             size_t n_inputs, absl::Span<BatchDecision> out,
             absl::Span<Decision> traces);
  void Admit(const CompiledBehaviourSet& set,
             absl::Span<const AgentInput> inputs, absl::Span<BatchDecision> out,
             std::vector<absl::Status>* errors, bool check);
  void AdmitColumns(const CompiledBehaviourSet& set, const AgentColumns& c,
                    absl::Span<BatchDecision> out,
                    std::vector<absl::Status>* errors);
  void AdmitWholeColumns(const CompiledBehaviourSet& set,
                         const AgentColumns& c);
  void StartAdmit(const CompiledBehaviourSet& set, size_t most,
                  std::vector<absl::Status>* errors);
  void EndAdmit(size_t agents, size_t pairs);
  void Transpose(const CompiledBehaviourSet& set,
                 const FactorMajorColumns* columns);
  void GrowPairs(size_t count);
  const float* FactorMajorAgents(int nf, const FactorMajorColumns* columns);
  void LayOutRows(const CompiledBehaviourSet& set);
  const float* FactorColumn(const CompiledConsideration& c, bool per_target);
  bool Fused(const CompiledConsideration& c) const;
  bool StartRows(const CompiledBehaviourSet& set, const CompiledAction& act,
                 size_t count);
  void Considerations(const CompiledBehaviourSet& set, int action);
  bool Tiles(const CompiledBehaviourSet& set, int action) const;
  void ScoreTiles(const CompiledBehaviourSet& set, int action);
  FoldRule RuleOf(const CompiledBehaviourSet& set,
                  const CompiledAction& act) const;
  void Accumulate(const CompiledBehaviourSet& set, int action, int k,
                  size_t count, const float* w);
  void MarkVetoedBy(int action, int k, size_t count);
  void TraceConsideration(const CompiledBehaviourSet& set, int action, int k,
                          size_t count, const float* x, const float* w);
  void Finish(const CompiledBehaviourSet& set, int action);
  template <bool kVaried>
  void ApplyFactors(const CompiledBehaviourSet& set, int action, size_t count,
                    float* score, CandidateTrace* trace);
  void Select(const CompiledBehaviourSet& set, absl::Span<BatchDecision> out,
              absl::Span<Decision> traces);
  template <bool kCollect>
  void SelectOne(const CompiledBehaviourSet& set, uint64_t seed, size_t j,
                 BatchDecision* d);
  void TopTwoColumns(const CompiledBehaviourSet& set);
  // `seed` is read by the random strategies only.
  void Conclude(const CompiledBehaviourSet& set, uint64_t seed, size_t j,
                const Candidate& first, const Candidate& second,
                BatchDecision* d);
  static void WriteChosen(const Candidate& chosen, const Candidate& runner,
                          bool switched, BatchDecision* d);
  int Pick(const CompiledBehaviourSet& set, size_t j, int32_t top_rank,
           double draw);
  void WriteTrace(const CompiledBehaviourSet& set, size_t j,
                  const BatchDecision& d, Decision* trace) const;
  size_t AgentOf(bool per_target, size_t m) const {
    return per_target ? pair_agent_[m] : m;
  }
  // Admitted agent j's seed, and its seconds since each action (null when
  // none ended recently), from its input or its row of the columns.
  uint64_t Seed(size_t j) const;
  const float* Clocks(const CompiledBehaviourSet& set, size_t j) const;

  bool tracing_ = false;       // candidate traces wanted
  bool factor_major_ = false;  // factors from DecideFactorMajor's columns
  // Where the agents' fields are read: the inputs, or (when not null) the
  // columns of DecideColumns.
  absl::Span<const AgentInput> inputs_;
  const AgentColumns* agent_columns_in_ = nullptr;
  std::vector<uint8_t>
      row_bad_;  // DecideColumns: per row, an index out of range
  // set_keep_candidates: open-action bits per admitted agent, then per
  // input; each input's position in agents_ (-1 when it failed).
  bool keep_ = false;
  size_t open_words_ = 0;
  std::vector<uint64_t> open_, open_by_input_;
  std::vector<int32_t> position_;
  bool full_ = false;  // consideration traces wanted too
  // Agents that fit the set (indices into inputs).
  std::vector<uint32_t> agents_;
  // Candidate rows: for each non-target action one row over agents_; for
  // each per-target action one row over the pairs (agent, target), the
  // first n_pairs_ entries of the pair arrays (they only grow: GrowPairs).
  size_t n_pairs_ = 0;
  std::vector<uint32_t> pair_agent_;   // pair -> position in agents_
  std::vector<uint32_t> pair_target_;  // pair -> target index
  std::vector<uint32_t> pair_begin_;   // position in agents_ -> first pair
  // Every agent's count of targets when all have the same (pair p's agent
  // is then p / targets_each_), else 0.
  uint32_t targets_each_ = 0;
  std::vector<int32_t> current_action_, current_target_, personality_;
  bool any_personality_ = false, any_cooldown_input_ = false;
  uint32_t agents_without_targets_ = 0;
  // Factor columns: agent factors over agents, target factors over pairs,
  // and agent factors over pairs (filled on first use).
  std::vector<float> agent_columns_, target_columns_, pair_columns_;
  // Where agent factor k's column starts: agent_base_ + k * n_agents, in
  // agent_columns_ or, factor-major and whole, in the caller's columns.
  const float* agent_base_ = nullptr;
  // Each admitted agent's factors and each pair's target factors, for
  // Transpose.
  std::vector<const float*> rows_, pair_rows_;
  // Or, DecideColumns with every row admitted: pair p's target factors at
  // pair_base_ + p * target_factor_count (pair_rows_ unused), and with its
  // factors row by row, agent j's at row_base_ + j * factor_count (rows_
  // unused).
  const float* pair_base_ = nullptr;
  const float* row_base_ = nullptr;
  std::vector<uint8_t> pair_column_ready_;
  // Per column: holds a NaN or an infinity.
  std::vector<uint8_t> agent_nonfinite_, target_nonfinite_;
  // Per row element of the action being scored.
  std::vector<float> normalised_, curved_, weights_;
  std::vector<float>
      agent_outputs_;  // an agent-wide consideration's, per agent
  // ScoreTiles, per consideration: where it reads, and the outputs
  // computed first.
  std::vector<const float*> tile_x_;
  std::vector<TileSource> tile_source_;
  std::vector<float> tile_outputs_;
  std::vector<float> raw_acc_, comp_acc_, weight_sum_;
  // The product's and the minimum's starting values (1) and no veto, read
  // by an action's first consideration when fused; they only grow.
  std::vector<float> start_ones_;
  std::vector<uint32_t> start_no_veto_;
  // 0 not vetoed, 1 vetoed first for a non-finite input, 2 vetoed first by
  // a zero contribution.
  std::vector<uint32_t> veto_;
  bool invalid_input_veto_ = false;  // the action's row read a non-finite input
  std::vector<uint8_t> agent_invalid_;
  std::vector<uint32_t> vetoes_;
  uint32_t invalid_agents_ = 0;
  // Final scores: row offsets per action into scores_.
  std::vector<float> scores_;
  std::vector<size_t> row_offset_;
  // Traces, when wanted: per row element, and per consideration of each row
  // element (offset per action, then consideration-major).
  std::vector<CandidateTrace> candidate_traces_;
  std::vector<ConsiderationTrace> consideration_traces_;
  std::vector<size_t> consideration_offset_;
  // The highest strategy: every agent's best two candidates (top_[0] the
  // first).
  struct TopArrays {
    std::vector<float> score;
    std::vector<int32_t> rank, action, target, current;
  };
  TopArrays top_[2];
  // TopTwoColumns' inputs per action.
  std::vector<uint8_t> action_per_target_;
  std::vector<int32_t> action_rank_;
  // Selection's working memory for one agent.
  std::vector<Candidate> candidates_;
  std::vector<uint32_t> pool_;
  std::vector<double> pick_weights_, probabilities_;
};

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_SCORING_BATCH_PASS_H_
