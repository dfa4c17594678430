#include "utilityd/engine/batch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "curves/curve_kernels.h"
#include "curves/curve_math.h"
#include "scoring/batch_pass.h"
#include "scoring/consider_column.h"
#include "scoring/select_columns.h"
#include "utilityd/engine/random.h"
#include "utilityd/engine/scoring_rules.h"

namespace utilityd::engine {

BatchDecider::BatchDecider() : pass_(std::make_unique<internal::BatchPass>()) {}
BatchDecider::~BatchDecider() = default;
BatchDecider::BatchDecider(BatchDecider&&) noexcept = default;
BatchDecider& BatchDecider::operator=(BatchDecider&&) noexcept = default;

void BatchDecider::Decide(const CompiledBehaviourSet& set,
                          absl::Span<const AgentInput> inputs,
                          ExplainLevel level, absl::Span<BatchDecision> out,
                          std::vector<absl::Status>* errors,
                          absl::Span<Decision> traces) {
  pass_->Run(set, inputs, level, out, errors, traces, /*check=*/true);
}

void BatchDecider::DecideChecked(const CompiledBehaviourSet& set,
                                 absl::Span<const AgentInput> inputs,
                                 ExplainLevel level,
                                 absl::Span<BatchDecision> out,
                                 absl::Span<Decision> traces) {
  pass_->Run(set, inputs, level, out, nullptr, traces, /*check=*/false);
}

void BatchDecider::DecideFactorMajor(const CompiledBehaviourSet& set,
                                     absl::Span<const AgentInput> inputs,
                                     const FactorMajorColumns& columns,
                                     absl::Span<BatchDecision> out,
                                     std::vector<absl::Status>* errors) {
  pass_->Run(set, inputs, ExplainLevel::kNone, out, errors, {},
             /*check=*/true, &columns);
}

absl::Span<const uint32_t> BatchDecider::vetoes_by_action() const {
  return pass_->vetoes();
}

void BatchDecider::set_keep_candidates(bool on) {
  pass_->set_keep_candidates(on);
}

bool BatchDecider::ActionOpen(size_t input, int action) const {
  return pass_->ActionOpen(input, action);
}

float BatchDecider::CandidateScore(const CompiledBehaviourSet& set,
                                   size_t input, int action, int target) const {
  return pass_->CandidateScore(set, input, action, target);
}

uint32_t BatchDecider::agents_with_invalid_input() const {
  return pass_->invalid_agents();
}

namespace internal {

void BatchPass::Run(const CompiledBehaviourSet& set,
                    absl::Span<const AgentInput> inputs, ExplainLevel level,
                    absl::Span<BatchDecision> out,
                    std::vector<absl::Status>* errors,
                    absl::Span<Decision> traces, bool check,
                    const FactorMajorColumns* columns) {
  tracing_ = !traces.empty();
  full_ = tracing_ && level == ExplainLevel::kFull;
  factor_major_ = columns != nullptr;
  inputs_ = inputs;
  agent_columns_in_ = nullptr;
  Admit(set, inputs, out, errors, check);
  Score(set, columns, inputs.size(), out, traces);
}

void BatchPass::RunColumns(const CompiledBehaviourSet& set,
                           const AgentColumns& columns,
                           absl::Span<BatchDecision> out,
                           std::vector<absl::Status>* errors) {
  tracing_ = full_ = false;
  factor_major_ = true;
  inputs_ = {};
  agent_columns_in_ = &columns;
  AdmitColumns(set, columns, out, errors);
  const FactorMajorColumns factors{.data = columns.factors,
                                   .rows = columns.rows};
  // Row by row, the factors are transposed as rows (Transpose).
  Score(set, columns.factors_by_row ? nullptr : &factors, columns.rows, out,
        {});
  agent_columns_in_ = nullptr;  // the caller's, gone after the call
}

void BatchPass::Score(const CompiledBehaviourSet& set,
                      const FactorMajorColumns* columns, size_t n_inputs,
                      absl::Span<BatchDecision> out,
                      absl::Span<Decision> traces) {
  Transpose(set, columns);
  LayOutRows(set);
  open_words_ = keep_ ? (set.action_count() + 63) / 64 : 0;
  open_.assign(agents_.size() * open_words_, 0);
  for (int a = 0; a < set.action_count(); ++a) {
    if (Tiles(set, a)) {
      ScoreTiles(set, a);
      continue;
    }
    Considerations(set, a);
    Finish(set, a);
  }
  for (uint8_t invalid : agent_invalid_) invalid_agents_ += invalid;
  Select(set, out, traces);
  if (keep_) {
    // From admitted agents' positions to the inputs' order.
    open_by_input_.assign(n_inputs * open_words_, 0);
    position_.assign(n_inputs, -1);
    for (size_t j = 0; j < agents_.size(); ++j) {
      std::copy_n(open_.data() + j * open_words_, open_words_,
                  open_by_input_.data() + agents_[j] * open_words_);
      position_[agents_[j]] = static_cast<int32_t>(j);
    }
  }
}

bool BatchPass::ActionOpen(size_t input, int action) const {
  return (open_by_input_[input * open_words_ + action / 64] >> (action % 64)) &
         1;
}

float BatchPass::CandidateScore(const CompiledBehaviourSet& set, size_t input,
                                int action, int target) const {
  if (input >= position_.size() || action < 0 || action >= set.action_count() ||
      position_[input] < 0) {
    return 0;
  }
  const size_t j = static_cast<size_t>(position_[input]);
  if (!set.actions()[action].per_target) {
    return target < 0 ? scores_[row_offset_[action] + j] : 0;
  }
  const uint32_t first = pair_begin_[j], last = pair_begin_[j + 1];
  if (target < 0 || first + static_cast<uint32_t>(target) >= last) return 0;
  return scores_[row_offset_[action] + first + target];
}

namespace {
// Rows of kWidth values one after another from `base`, into kWidth
// columns of `count`.
template <int kWidth>
[[gnu::always_inline]] inline void TransposeRows(const float* base,
                                                 size_t count, float* out) {
  for (size_t m = 0; m < count; ++m) {
    for (int k = 0; k < kWidth; ++k) out[k * count + m] = base[m * kWidth + k];
  }
}
}  // namespace

// Transposes once: one contiguous column per factor, for agents and for
// (agent, target) pairs. Agent factors are copied to the pair columns only
// when a per-target action reads them (FactorColumn).
UTILITYD_VECTOR_CLONES
void BatchPass::Transpose(const CompiledBehaviourSet& set,
                          const FactorMajorColumns* columns) {
  const size_t n_agents = agents_.size(), n_pairs = n_pairs_;
  const int nf = set.factor_count(), ntf = set.target_factor_count();
  // Four columns at a time (then two, then one): each row's pointer read
  // once per four values, the four written to their columns contiguously.
  // row(m): row m's first value.
  auto transpose = [](auto row, size_t count, int width, float* out) {
    int k = 0;
    for (; k + 4 <= width; k += 4) {
      float* c0 = out + k * count;
      float* c1 = c0 + count;
      float* c2 = c1 + count;
      float* c3 = c2 + count;
      for (size_t m = 0; m < count; ++m) {
        const float* r = row(m) + k;
        c0[m] = r[0];
        c1[m] = r[1];
        c2[m] = r[2];
        c3[m] = r[3];
      }
    }
    if (k + 2 <= width) {
      float* c0 = out + k * count;
      float* c1 = c0 + count;
      for (size_t m = 0; m < count; ++m) {
        const float* r = row(m) + k;
        c0[m] = r[0];
        c1[m] = r[1];
      }
      k += 2;
    }
    if (k < width) {
      float* col = out + k * count;
      for (size_t m = 0; m < count; ++m) col[m] = row(m)[k];
    }
  };
  // Rows one after the other from `base` (DecideColumns, every row
  // admitted), else each row from its pointer in `rows`.
  auto transpose_rows = [&](const float* base,
                            const std::vector<const float*>& rows, size_t count,
                            int width, float* out) {
    if (base != nullptr) {
      // The narrow widths of target factors with the width known, so that
      // the strided loads vectorise.
      switch (width) {
        case 1:
          return TransposeRows<1>(base, count, out);
        case 2:
          return TransposeRows<2>(base, count, out);
        case 3:
          return TransposeRows<3>(base, count, out);
        default:
          break;
      }
      transpose([base, width](size_t m) { return base + m * width; }, count,
                width, out);
    } else {
      const float* const* each = rows.data();
      transpose([each](size_t m) { return each[m]; }, count, width, out);
    }
  };
  agent_base_ = FactorMajorAgents(nf, columns);
  if (agent_base_ == nullptr) {
    agent_columns_.resize(static_cast<size_t>(nf) * n_agents);
    transpose_rows(row_base_, rows_, n_agents, nf, agent_columns_.data());
    agent_base_ = agent_columns_.data();
  }
  target_columns_.resize(static_cast<size_t>(ntf) * n_pairs);
  transpose_rows(pair_base_, pair_rows_, n_pairs, ntf, target_columns_.data());
  // Which columns hold a NaN or an infinity (rare): only those are checked
  // per element. The exponent bits all set, tested on the bits so that the
  // scan vectorises.
  auto any_nonfinite = [](const float* col, size_t count) {
    uint32_t bad = 0;
    for (size_t m = 0; m < count; ++m) {
      uint32_t bits;
      std::memcpy(&bits, &col[m], sizeof bits);
      bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    return bad != 0;
  };
  agent_nonfinite_.resize(nf);
  for (int k = 0; k < nf; ++k) {
    agent_nonfinite_[k] = any_nonfinite(agent_base_ + k * n_agents, n_agents);
  }
  target_nonfinite_.resize(ntf);
  for (int k = 0; k < ntf; ++k) {
    target_nonfinite_[k] =
        any_nonfinite(target_columns_.data() + k * n_pairs, n_pairs);
  }
  pair_columns_.resize(static_cast<size_t>(nf) * n_pairs);
  pair_column_ready_.assign(nf, 0);
}

// Sizes the score rows, the per-element working columns and the traces.
void BatchPass::LayOutRows(const CompiledBehaviourSet& set) {
  const size_t n_agents = agents_.size(), n_pairs = n_pairs_;
  row_offset_.resize(set.action_count());
  consideration_offset_.resize(set.action_count());
  size_t total = 0, traced = 0;
  for (int a = 0; a < set.action_count(); ++a) {
    const CompiledAction& act = set.actions()[a];
    const size_t count = act.per_target ? n_pairs : n_agents;
    row_offset_[a] = total;
    consideration_offset_[a] = traced;
    total += count;
    traced += count * act.consideration_count;
  }
  // Padded: internal::TopTwo reads whole vectors past a row's end (two
  // for a per-target row with two targets each).
  scores_.resize(total + 2 * internal::kSelectPadding);
  if (tracing_) candidate_traces_.resize(total);
  if (full_) consideration_traces_.resize(traced);
  const size_t widest = std::max(n_agents, n_pairs);
  for (auto* column : {&normalised_, &curved_, &raw_acc_, &comp_acc_,
                       &weight_sum_, &weights_}) {
    column->resize(widest);
  }
  veto_.resize(widest);
  agent_invalid_.assign(n_agents, 0);
}

// The column of consideration c's factor over the rows of an action.
const float* BatchPass::FactorColumn(const CompiledConsideration& c,
                                     bool per_target) {
  const size_t n_agents = agents_.size(), n_pairs = n_pairs_;
  const size_t k = static_cast<size_t>(c.factor);
  if (c.per_target) return target_columns_.data() + k * n_pairs;
  if (!per_target) return agent_base_ + k * n_agents;
  float* col = pair_columns_.data() + k * n_pairs;
  if (!pair_column_ready_[k]) {
    const float* src = agent_base_ + k * n_agents;
    for (size_t p = 0; p < n_pairs; ++p) col[p] = src[pair_agent_[p]];
    pair_column_ready_[k] = 1;
  }
  return col;
}

// Whether consideration `c` takes the fused pass: the common case, every
// input finite, one weight for all, no values to trace.
bool BatchPass::Fused(const CompiledConsideration& c) const {
  const bool nonfinite =
      c.per_target ? target_nonfinite_[c.factor] : agent_nonfinite_[c.factor];
  return !full_ && !nonfinite && !any_personality_ &&
         internal::FusesCurve(c.curve);
}

// Readies action `act`'s rows of `count` accumulators. A fused first
// consideration reads the starting values from rows that hold them for
// good and writes every element, so the rows need no fill (not for the
// weighted sum, whose fold leaves the vetoes alone): returns true then.
bool BatchPass::StartRows(const CompiledBehaviourSet& set,
                          const CompiledAction& act, size_t count) {
  const bool weighted_sum = set.aggregation() == Aggregation::kWeightedSum;
  if (!weighted_sum && act.consideration_count > 0 &&
      Fused(set.considerations()[act.first_consideration])) {
    if (start_ones_.size() < count) {  // they only grow: no fill per batch
      start_ones_.resize(count, 1.0f);
      start_no_veto_.resize(count, 0u);
    }
    return true;
  }
  const float start = weighted_sum ? 0.0f : 1.0f;
  std::fill_n(raw_acc_.data(), count, start);
  // Each aggregation's own accumulator: the product's compensated one, the
  // weighted sum's weights.
  if (set.aggregation() == Aggregation::kProduct) {
    std::fill_n(comp_acc_.data(), count, start);
  } else if (weighted_sum) {
    std::fill_n(weight_sum_.data(), count, 0.0f);
  }
  std::fill_n(veto_.data(), count, 0u);
  return false;
}

// Each consideration of `action` over its whole row, marking vetoes in
// consideration order: in one fused pass (consider_column.h) when every
// input is finite, one weight serves all and nothing is traced; else in
// separate passes — normalise, curve, then weight and aggregate
// (Accumulate) — whose values the explain-full trace reads.
UTILITYD_VECTOR_CLONES
void BatchPass::Considerations(const CompiledBehaviourSet& set, int action) {
  const CompiledAction& act = set.actions()[action];
  const size_t count = act.per_target ? n_pairs_ : agents_.size();
  const bool first_starts = StartRows(set, act, count);
  invalid_input_veto_ = false;
  if (tracing_) {
    CandidateTrace* trace = candidate_traces_.data() + row_offset_[action];
    std::fill_n(trace, count, CandidateTrace());
  }
  uint32_t* veto = veto_.data();
  const internal::FoldRule rule = RuleOf(set, act);
  const internal::RowAccumulators in_place{raw_acc_.data(),
                                           comp_acc_.data(),
                                           weight_sum_.data(),
                                           veto,
                                           raw_acc_.data(),
                                           comp_acc_.data(),
                                           veto};
  internal::RowAccumulators from_start = in_place;
  from_start.raw_from = from_start.comp_from = start_ones_.data();
  from_start.veto_from = start_no_veto_.data();
  for (int k = 0; k < static_cast<int>(act.consideration_count); ++k) {
    const uint32_t ci = act.first_consideration + k;
    const CompiledConsideration& c = set.considerations()[ci];
    const bool nonfinite =
        c.per_target ? target_nonfinite_[c.factor] : agent_nonfinite_[c.factor];
    const internal::RowAccumulators& acc =
        k == 0 && first_starts ? from_start : in_place;
    if (Fused(c)) {
      if (act.per_target && !c.per_target) {
        // An agent's factor: its curve once per agent, then folded into
        // each of the agent's pairs.
        const size_t n_agents = agents_.size();
        agent_outputs_.resize(n_agents + internal::kSelectPadding);
        internal::OutputColumn(c, agent_base_ + c.factor * n_agents, n_agents,
                               agent_outputs_.data());
        internal::FoldGathered(c, rule, agent_outputs_.data(),
                               pair_agent_.data(), count, targets_each_, acc);
      } else {
        internal::ConsiderColumn(c, rule, FactorColumn(c, act.per_target),
                                 count, acc);
      }
      MarkVetoedBy(action, k, count);
      continue;
    }
    const float* x = FactorColumn(c, act.per_target);
    if (nonfinite) {
      invalid_input_veto_ = true;
      // The first veto of a candidate is the one reported: a non-finite
      // input counts only when nothing vetoed before it.
      for (size_t m = 0; m < count; ++m) {
        if (veto[m] == 0 && !std::isfinite(x[m])) veto[m] = 1;
      }
    }
    float* norm = normalised_.data();
    const float lo = c.range_lo, span = c.range_span;
    for (size_t m = 0; m < count; ++m) {
      norm[m] = Normalise(x[m], lo, span);
    }
    EvaluateCurveColumn(c.curve, norm, curved_.data(), count,
                        set.curve_points());
    // The weight: one for all, unless personalities vary it per agent or a
    // non-finite input must count as nothing (weight 0 is neutral).
    const float* w = nullptr;
    if (any_personality_ || nonfinite) {
      for (size_t m = 0; m < count; ++m) {
        const int p = personality_[AgentOf(act.per_target, m)];
        weights_[m] = !std::isfinite(x[m]) ? 0.0f
                      : p >= 0 ? set.personality_consideration_weight(p, ci)
                               : c.weight;
      }
      w = weights_.data();
    }
    if (full_) TraceConsideration(set, action, k, count, x, w);
    Accumulate(set, action, k, count, w);
    MarkVetoedBy(action, k, count);
  }
}

// A trace names the first consideration that vetoed its candidate.
void BatchPass::MarkVetoedBy(int action, int k, size_t count) {
  if (!tracing_) return;
  CandidateTrace* trace = candidate_traces_.data() + row_offset_[action];
  const uint32_t* veto = veto_.data();
  for (size_t m = 0; m < count; ++m) {
    if (trace[m].vetoed_by < 0 && veto[m] != 0) trace[m].vetoed_by = k;
  }
}

// Folds consideration k of `action` (its curve outputs in curved_) into the
// row's accumulators; w is the per-element weight, or null for the
// consideration's own. Only the product and the minimum veto on a zero.
UTILITYD_VECTOR_CLONES
void BatchPass::Accumulate(const CompiledBehaviourSet& set, int action, int k,
                           size_t count, const float* w) {
  const CompiledAction& act = set.actions()[action];
  const CompiledConsideration& c =
      set.considerations()[act.first_consideration + k];
  const int n = static_cast<int>(act.compensated_count);  // gates aside
  const bool per_consideration =
      set.compensation() == Compensation::kPerConsideration && n > 1;
  const float mod = CompensationModifier(n);
  const float out_min = c.output_min, out_span = c.output_span, cw = c.weight;
  float* y = curved_.data();  // the curve's value, then the contribution
  float* raw_acc = raw_acc_.data();
  float* comp_acc = comp_acc_.data();
  switch (set.aggregation()) {
    case Aggregation::kProduct:
      // Three loops so that the common cases carry no per-element choice.
      if (w == nullptr && per_consideration) {
        for (size_t m = 0; m < count; ++m) {
          const float s = Contribution(Output(y[m], out_min, out_span), cw);
          raw_acc[m] *= s;
          comp_acc[m] *= Compensate(s, mod);
          y[m] = s;
        }
      } else if (w == nullptr) {
        for (size_t m = 0; m < count; ++m) {
          const float s = Contribution(Output(y[m], out_min, out_span), cw);
          raw_acc[m] *= s;
          comp_acc[m] *= s;
          y[m] = s;
        }
      } else {
        for (size_t m = 0; m < count; ++m) {
          const float s = Contribution(Output(y[m], out_min, out_span), w[m]);
          raw_acc[m] *= s;
          comp_acc[m] *= per_consideration ? Compensate(s, mod) : s;
          y[m] = s;
        }
      }
      break;
    case Aggregation::kMin:
      for (size_t m = 0; m < count; ++m) {
        const float s = Contribution(Output(y[m], out_min, out_span),
                                     w != nullptr ? w[m] : cw);
        raw_acc[m] = std::min(raw_acc[m], s);
        y[m] = s;
      }
      break;
    case Aggregation::kWeightedSum: {
      float* weight_sum = weight_sum_.data();
      for (size_t m = 0; m < count; ++m) {
        const float wm = w != nullptr ? w[m] : cw;
        raw_acc[m] += WeightedContribution(Output(y[m], out_min, out_span), wm);
        weight_sum[m] += wm;
      }
      return;
    }
  }
  uint32_t* veto = veto_.data();
  for (size_t m = 0; m < count; ++m) {
    veto[m] = veto[m] == 0 && y[m] == 0.0f ? 2u : veto[m];
  }
}

// score *= weight * cooldown * commitment, or 0 when vetoed. kVaried: the
// weight and cooldown may differ per agent (personalities, seconds since
// each action), and a trace may be wanted.
template <bool kVaried>
UTILITYD_VECTOR_CLONES void BatchPass::ApplyFactors(
    const CompiledBehaviourSet& set, int action, size_t count, float* score,
    CandidateTrace* trace) {
  const CompiledAction& act = set.actions()[action];
  const bool pt = act.per_target;
  const uint32_t* veto = veto_.data();
  const float commitment = CommitmentFactor(set.selection().commitment_bonus);
  if constexpr (!kVaried) {
    if (!pt) {
      // The agents' own row, in a loop that vectorises: weight * 1 (no
      // cooldown) * commitment when running.
      const float weight = act.weight;
      const int32_t* running = current_action_.data();
      for (size_t m = 0; m < count; ++m) {
        const float committed = running[m] == action ? commitment : 1.0f;
        score[m] = veto[m] != 0 ? 0.0f : score[m] * weight * committed;
      }
      return;
    }
  }
  for (size_t m = 0; m < count; ++m) {
    const size_t j = AgentOf(pt, m);
    float weight = act.weight, cooldown = 1.0f;
    if constexpr (kVaried) {
      const int p = personality_[j];
      if (p >= 0) weight *= set.personality_action_weight(p, action);
      if (act.cooldown_seconds > 0) {
        if (const float* clocks = Clocks(set, j); clocks != nullptr) {
          cooldown = CooldownFactor(clocks[action], act.cooldown_seconds);
        }
      }
    }
    const bool current =
        IsCurrent(current_action_[j], current_target_[j], action,
                  pt ? static_cast<int>(pair_target_[m]) : -1);
    const float committed = current ? commitment : 1.0f;
    score[m] = veto[m] != 0 ? 0.0f : score[m] * weight * cooldown * committed;
    if constexpr (kVaried) {
      if (trace == nullptr) continue;
      trace[m].weight = weight;
      trace[m].cooldown_factor = cooldown;
      trace[m].commitment_factor = committed;
      trace[m].score = score[m];
      trace[m].veto = veto[m] == 0   ? VetoReason::kNone
                      : veto[m] == 1 ? VetoReason::kInvalidInput
                                     : VetoReason::kConsideration;
    }
  }
}

// Explain full: every value of consideration k, as Accumulate computes it.
void BatchPass::TraceConsideration(const CompiledBehaviourSet& set, int action,
                                   int k, size_t count, const float* x,
                                   const float* w) {
  const CompiledAction& act = set.actions()[action];
  const CompiledConsideration& c =
      set.considerations()[act.first_consideration + k];
  const int n = static_cast<int>(act.compensated_count);  // gates aside
  const bool compensate =
      set.aggregation() == Aggregation::kProduct &&
      set.compensation() == Compensation::kPerConsideration && n > 1;
  ConsiderationTrace* trace =
      consideration_traces_.data() + consideration_offset_[action] + k * count;
  for (size_t m = 0; m < count; ++m) {
    ConsiderationTrace& t = trace[m];
    t = ConsiderationTrace();
    t.raw = x[m];
    if (!std::isfinite(x[m])) {
      t.invalid_input = true;
      continue;
    }
    const float wm = w != nullptr ? w[m] : c.weight;
    t.normalised = normalised_[m];
    t.curved = curved_[m];
    t.output = Output(t.curved, c.output_min, c.output_span);
    if (set.aggregation() == Aggregation::kWeightedSum) {
      t.contribution = WeightedContribution(t.output, wm);
    } else {
      t.contribution = Contribution(t.output, wm);
      if (compensate) t.contribution = CompensateFactor(t.contribution, n);
    }
  }
}

// The candidate's score from its aggregate: compensated * weight * cooldown
// * commitment, multiplied in that order; 0 when vetoed.
UTILITYD_VECTOR_CLONES
void BatchPass::Finish(const CompiledBehaviourSet& set, int action) {
  const CompiledAction& act = set.actions()[action];
  const bool pt = act.per_target;
  const size_t count = pt ? n_pairs_ : agents_.size();
  const int n = static_cast<int>(act.compensated_count);  // gates aside
  float* raw_acc = raw_acc_.data();
  float* score = scores_.data() + row_offset_[action];
  const uint32_t* veto = veto_.data();
  if (set.aggregation() == Aggregation::kWeightedSum) {
    for (size_t m = 0; m < count; ++m) {
      raw_acc[m] = WeightedAverage(raw_acc[m], weight_sum_[m]);
    }
  }
  switch (set.compensation()) {
    case Compensation::kOnProduct:
    case Compensation::kGeometricMean: {
      const Compensation comp = set.compensation();
      for (size_t m = 0; m < count; ++m) {
        score[m] = CompensateAggregate(comp, raw_acc[m], n);
      }
      break;
    }
    default:
      // Compensation per consideration lives in comp_acc (the product's);
      // the other aggregations are what they combined.
      std::copy_n(set.aggregation() == Aggregation::kProduct ? comp_acc_.data()
                                                             : raw_acc,
                  count, score);
      break;
  }
  CandidateTrace* trace =
      tracing_ ? candidate_traces_.data() + row_offset_[action] : nullptr;
  if (trace != nullptr) {
    for (size_t m = 0; m < count; ++m) {
      trace[m].aggregate = raw_acc[m];
      trace[m].compensated = score[m];
    }
  }
  const bool cooling = act.cooldown_seconds > 0 && any_cooldown_input_;
  // The common case (one weight for all, nothing cooling, no trace) gets a
  // loop without per-agent lookups.
  if (any_personality_ || cooling || trace != nullptr) {
    ApplyFactors<true>(set, action, count, score, trace);
  } else {
    ApplyFactors<false>(set, action, count, score, nullptr);
  }
  uint32_t vetoed = 0;
  for (size_t m = 0; m < count; ++m) vetoed += veto[m] != 0;
  if (invalid_input_veto_) {  // only then can a veto be 1
    for (size_t m = 0; m < count; ++m) {
      agent_invalid_[AgentOf(pt, m)] |= veto[m] == 1;
    }
  }
  if (keep_) {
    const uint64_t bit = uint64_t{1} << (action % 64);
    uint64_t* open = open_.data() + action / 64;
    for (size_t m = 0; m < count; ++m) {
      if (veto[m] == 0) open[AgentOf(pt, m) * open_words_] |= bit;
    }
  }
  // An agent without targets has its per-target actions vetoed.
  vetoes_[action] += vetoed + (pt ? agents_without_targets_ : 0);
}

void BatchPass::Select(const CompiledBehaviourSet& set,
                       absl::Span<BatchDecision> out,
                       absl::Span<Decision> traces) {
  // Random strategies and traces need every candidate of an agent listed;
  // the highest score alone needs only the best two: one agent at a time
  // for a few agents (a tree's utility node decides one), else for all
  // agents at once, a candidate column at a time.
  if (tracing_ || set.selection().strategy != Strategy::kHighest) {
    for (size_t j = 0; j < agents_.size(); ++j) {
      const uint32_t i = agents_[j];
      SelectOne<true>(set, Seed(j), j, &out[i]);
      if (tracing_) WriteTrace(set, j, out[i], &traces[i]);
    }
    return;
  }
  if (agents_.size() < internal::kSelectPadding) {
    for (size_t j = 0; j < agents_.size(); ++j) {
      const uint32_t i = agents_[j];
      SelectOne<false>(set, /*seed=*/0, j, &out[i]);  // highest
    }
    return;
  }
  TopTwoColumns(set);
  // Conclude for the highest strategy, from the columns: the first is
  // chosen when it is eligible (held scores are positive), and the agent
  // switched unless it is the running one (Switched is !IsCurrent).
  // Nothing eligible goes to Conclude for the fallback.
  const float min_score = static_cast<float>(set.selection().min_score);
  // The columns' data held in locals: the stores to `out` could otherwise
  // alias them and force a reload of each.
  const TopArrays& f = top_[0];
  const TopArrays& g = top_[1];
  const float *fs = f.score.data(), *gs = g.score.data();
  const int32_t *fa = f.action.data(), *ft = f.target.data(),
                *fr = f.rank.data(), *fc = f.current.data();
  const int32_t *ga = g.action.data(), *gt = g.target.data(),
                *gr = g.rank.data();
  const uint32_t* agents = agents_.data();
  BatchDecision* decisions = out.data();
  for (size_t j = 0, n = agents_.size(); j < n; ++j) {
    BatchDecision* d = decisions + agents[j];
    if (fa[j] < 0 || !(fs[j] >= min_score)) {
      Conclude(set, /*seed=*/0, j, Candidate{fa[j], ft[j], fs[j], fr[j]},
               Candidate{ga[j], gt[j], gs[j], gr[j]}, d);
      continue;
    }
    d->rank = fr[j];
    WriteChosen(Candidate{fa[j], ft[j], fs[j], fr[j]},
                Candidate{ga[j], gt[j], gs[j], gr[j]},
                /*switched=*/fc[j] == 0, d);
  }
}

// Every agent's best two candidates (internal::TopTwo), offered in the
// order SelectOne offers them. The per-agent arrays it reads are padded in
// place: the padding has no pairs and no running action, so it offers
// nothing.
void BatchPass::TopTwoColumns(const CompiledBehaviourSet& set) {
  const size_t n = agents_.size();
  const size_t padded = (n + internal::kSelectPadding - 1) /
                        internal::kSelectPadding * internal::kSelectPadding;
  for (TopArrays& top : top_) {
    top.score.resize(padded);
    top.rank.resize(padded);
    top.action.resize(padded);
    top.target.resize(padded);
    top.current.resize(padded);
  }
  auto view = [](TopArrays& a) {
    return internal::TopTwoView{a.score.data(), a.rank.data(), a.action.data(),
                                a.target.data(), a.current.data()};
  };
  // EndAdmit cut these to n (and n + 1): what grows is filled.
  current_action_.resize(padded, -1);
  current_target_.resize(padded, -1);
  const uint32_t pairs_end = pair_begin_[n];
  pair_begin_.resize(padded + 1, pairs_end);
  action_per_target_.resize(set.action_count());
  action_rank_.resize(set.action_count());
  for (int a = 0; a < set.action_count(); ++a) {
    action_per_target_[a] = set.actions()[a].per_target;
    action_rank_[a] = set.actions()[a].rank;
  }
  internal::CandidateRows rows;
  rows.agents = n;
  rows.scores = scores_.data();
  rows.row_offset = row_offset_.data();
  rows.per_target = action_per_target_.data();
  rows.rank = action_rank_.data();
  rows.actions = set.action_count();
  rows.current_action = current_action_.data();
  rows.current_target = current_target_.data();
  rows.pair_begin = pair_begin_.data();
  rows.each = targets_each_;
  rows.min_score = static_cast<float>(set.selection().min_score);
  rows.check_eligible = rows.min_score > 0.0f;
  internal::TopTwo(rows, view(top_[0]), view(top_[1]));
}

// One agent: the best two in one pass, as internal::TopTwo does for
// all agents at once, then the strategy's choice. kCollect: every
// candidate listed too (random strategies, traces).
template <bool kCollect>
void BatchPass::SelectOne(const CompiledBehaviourSet& set, uint64_t seed,
                          size_t j, BatchDecision* d) {
  const SelectionDefinition& sel = set.selection();
  const float min_score = static_cast<float>(sel.min_score);
  // Without a min_score every positive score is eligible.
  const bool check_eligible = min_score > 0.0f;
  const int cur_a = current_action_[j], cur_t = current_target_[j];
  auto ahead = [&](const Candidate& c, const Candidate& o) {
    if (check_eligible) {
      const bool ce = Eligible(c.score, min_score),
                 oe = Eligible(o.score, min_score);
      if (ce != oe) return ce;
    }
    if (c.rank != o.rank) return c.rank > o.rank;
    if (c.score != o.score) return c.score > o.score;
    return IsCurrent(cur_a, cur_t, c.action, c.target) &&
           !IsCurrent(cur_a, cur_t, o.action, o.target);
  };
  Candidate first{-1, -1, 0.0f, 0}, second{-1, -1, 0.0f, 0};
  auto offer = [&](const Candidate& c) {
    if constexpr (kCollect) candidates_.push_back(c);
    if (!(c.score > 0.0f)) return;  // only positive scores compete
    if (first.action < 0 || ahead(c, first)) {
      second = first;
      first = c;
    } else if (second.action < 0 || ahead(c, second)) {
      second = c;
    }
  };
  if constexpr (kCollect) candidates_.clear();
  const uint32_t pair_first = pair_begin_[j], pair_last = pair_begin_[j + 1];
  const CompiledAction* actions = set.actions().data();
  const float* scores = scores_.data();
  for (int a = 0, n = set.action_count(); a < n; ++a) {
    const float* row = scores + row_offset_[a];
    if (!actions[a].per_target) {
      offer(Candidate{a, -1, row[j], actions[a].rank});
      continue;
    }
    for (uint32_t p = pair_first; p < pair_last; ++p) {
      offer(Candidate{a, static_cast<int>(p - pair_first), row[p],
                      actions[a].rank});
    }
  }
  if constexpr (kCollect) probabilities_.assign(candidates_.size(), 0.0);
  Conclude(set, seed, j, first, second, d);
}

// From an agent's best two: the chosen candidate (the first, or a random
// strategy's draw among the listed candidates, or the fallback when
// nothing is eligible), the runner-up and whether the agent switched.
inline void BatchPass::Conclude(const CompiledBehaviourSet& set, uint64_t seed,
                                size_t j, const Candidate& first,
                                const Candidate& second, BatchDecision* d) {
  const SelectionDefinition& sel = set.selection();
  const float min_score = static_cast<float>(sel.min_score);
  const CompiledAction* actions = set.actions().data();
  const uint32_t pair_first = pair_begin_[j], pair_last = pair_begin_[j + 1];
  Candidate chosen{-1, -1, 0.0f, 0};
  if (first.action >= 0 && Eligible(first.score, min_score)) {
    d->rank = first.rank;
    chosen = first;
    if (sel.strategy != Strategy::kHighest) {
      d->draw = SplitMix64(seed).NextDouble();
      chosen = candidates_[Pick(set, j, first.rank, d->draw)];
    }
  } else if (const int fb = set.fallback_action(); fb >= 0) {
    // Nothing eligible: the fallback action's last candidate, as scored (0
    // when it has no targets).
    const float* row = scores_.data() + row_offset_[fb];
    chosen = {fb, -1, 0.0f, actions[fb].rank};
    if (!actions[fb].per_target) {
      chosen.score = row[j];
    } else if (pair_last > pair_first) {
      chosen.target = static_cast<int>(pair_last - 1 - pair_first);
      chosen.score = row[pair_last - 1];
    }
    d->rank = chosen.rank;
    d->fallback = true;
  }
  const bool first_chosen =
      first.action == chosen.action && first.target == chosen.target;
  // The running action and target as Admit read them: no input is read
  // again here.
  WriteChosen(chosen, first_chosen ? second : first,
              Switched(current_action_[j], current_target_[j], chosen.action,
                       chosen.target),
              d);
}

// The chosen candidate, the runner-up (when there is one) and whether the
// agent switched, into `d`.
inline void BatchPass::WriteChosen(const Candidate& chosen,
                                   const Candidate& runner, bool switched,
                                   BatchDecision* d) {
  d->action = chosen.action;
  d->target = chosen.target;
  d->score = chosen.score;
  if (runner.action >= 0) {
    d->runner_up_action = runner.action;
    d->runner_up_target = runner.target;
    d->runner_up_score = runner.score;
  }
  d->switched = switched;
}

// The random strategies over the eligible candidates of the top rank, in
// candidate order: weighted_random in proportion to the score, top_k the
// same among the best k, softmax in proportion to exp((s - max) / T). Walks
// the cumulative weights to `draw`; records each one's probability. Returns
// the index into candidates_.
int BatchPass::Pick(const CompiledBehaviourSet& set, size_t j, int32_t top_rank,
                    double draw) {
  const SelectionDefinition& sel = set.selection();
  const float min_score = static_cast<float>(sel.min_score);
  pool_.clear();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    const Candidate& c = candidates_[i];
    if (Eligible(c.score, min_score) && c.rank == top_rank) {
      pool_.push_back(static_cast<uint32_t>(i));
    }
  }
  if (sel.strategy == Strategy::kTopK) {
    // The best first: higher score, then the current action, then the
    // earlier candidate (a stable sort keeps candidate order).
    const int cur_a = current_action_[j], cur_t = current_target_[j];
    auto better = [&](uint32_t x, uint32_t y) {
      const Candidate& a = candidates_[x];
      const Candidate& b = candidates_[y];
      if (a.score != b.score) return a.score > b.score;
      return IsCurrent(cur_a, cur_t, a.action, a.target) &&
             !IsCurrent(cur_a, cur_t, b.action, b.target);
    };
    std::stable_sort(pool_.begin(), pool_.end(), better);
    if (pool_.size() > static_cast<size_t>(sel.top_k)) pool_.resize(sel.top_k);
  }
  float max_score = 0;
  for (uint32_t i : pool_)
    max_score = std::max(max_score, candidates_[i].score);
  pick_weights_.clear();
  double total = 0;
  for (uint32_t i : pool_) {
    const float s = candidates_[i].score;
    pick_weights_.push_back(
        sel.strategy == Strategy::kSoftmax
            ? internal::OwnExp((s - max_score) / sel.temperature)
            : s);
    total += pick_weights_.back();
  }
  uint32_t chosen = pool_.back();
  double cumulative = 0;
  bool picked = false;
  for (size_t i = 0; i < pool_.size(); ++i) {
    probabilities_[pool_[i]] = total > 0 ? pick_weights_[i] / total : 0;
    cumulative += pick_weights_[i];
    if (!picked && draw * total < cumulative) {
      chosen = pool_[i];
      picked = true;
    }
  }
  return static_cast<int>(chosen);
}

// The trace of agent j: its candidates in action then target order (an
// agent without targets gets one vetoed candidate per per-target action),
// and at kFull their considerations.
void BatchPass::WriteTrace(const CompiledBehaviourSet& set, size_t j,
                           const BatchDecision& d, Decision* trace) const {
  static_cast<BatchDecision&>(*trace) = d;
  trace->candidates.clear();
  trace->considerations.clear();
  const float min_score = static_cast<float>(set.selection().min_score);
  const uint32_t pair_first = pair_begin_[j], pair_last = pair_begin_[j + 1];
  size_t slot = 0;  // into candidates_ and probabilities_
  for (int a = 0; a < set.action_count(); ++a) {
    const CompiledAction& act = set.actions()[a];
    const bool pt = act.per_target;
    if (pt && pair_last == pair_first) {
      trace->candidates.push_back(
          {.action = a, .veto = VetoReason::kNoTargets});
      continue;
    }
    const size_t count = pt ? n_pairs_ : agents_.size();
    for (uint32_t m = pt ? pair_first : j; m < (pt ? pair_last : j + 1); ++m) {
      CandidateTrace c = candidate_traces_[row_offset_[a] + m];
      c.action = a;
      c.target = pt ? static_cast<int>(m - pair_first) : -1;
      c.eligible = Eligible(c.score, min_score);
      c.probability = probabilities_[slot++];
      if (full_) {
        c.first_trace = static_cast<uint32_t>(trace->considerations.size());
        for (uint32_t k = 0; k < act.consideration_count; ++k) {
          trace->considerations.push_back(
              consideration_traces_[consideration_offset_[a] + k * count + m]);
        }
      }
      trace->candidates.push_back(c);
    }
  }
}

}  // namespace internal
}  // namespace utilityd::engine
