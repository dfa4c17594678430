#include "utilityd/engine/batch.h"

#include <algorithm>
#include <cmath>

#include "curve_kernels.h"

namespace utilityd::engine {
namespace {

using internal::Clamp01;

// One candidate as selection sees it.
struct Candidate {
  int action;
  int target;
  float score;
  int rank;
};

}  // namespace

BatchDecision Summarise(const Decision& d) {
  BatchDecision b;
  b.action = d.action;
  b.target = d.target;
  b.score = d.score;
  b.switched = d.switched;
  b.fallback = d.fallback;
  b.rank = d.rank;
  b.runner_up_action = d.runner_up_action;
  b.runner_up_target = d.runner_up_target;
  b.runner_up_score = d.runner_up_score;
  b.draw = d.draw;
  return b;
}

bool CountVetoes(const Decision& d, absl::Span<uint32_t> vetoes_by_action) {
  bool invalid = false;
  for (const CandidateTrace& c : d.candidates) {
    if (c.veto == VetoReason::kNone) continue;
    ++vetoes_by_action[c.action];
    invalid |= c.veto == VetoReason::kInvalidInput;
  }
  return invalid;
}

void BatchDecider::Decide(const CompiledBehaviourSet& set,
                          absl::Span<const AgentInput> inputs,
                          ExplainLevel level, absl::Span<BatchDecision> out,
                          std::vector<absl::Status>* errors) {
  if (errors != nullptr) errors->assign(inputs.size(), absl::OkStatus());
  vetoes_.assign(set.action_count(), 0);
  invalid_agents_ = 0;
  agents_.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    out[i] = BatchDecision();
    absl::Status s = CheckAgentInput(set, inputs[i]);
    if (!s.ok()) {
      if (errors != nullptr) (*errors)[i] = std::move(s);
      continue;
    }
    agents_.push_back(static_cast<uint32_t>(i));
  }
  if (level == ExplainLevel::kFull ||
      set.selection().strategy != Strategy::kHighest) {
    // Random strategies draw per agent; full explanations need traces.
    for (uint32_t i : agents_) {
      (void)engine::Decide(set, inputs[i], level, &scalar_);
      out[i] = Summarise(scalar_);
      invalid_agents_ += CountVetoes(scalar_, absl::MakeSpan(vetoes_));
    }
    return;
  }
  ScoreColumns(set, inputs);
  Select(set, inputs, out);
}

UTILITYD_VECTOR_CLONES
void BatchDecider::ScoreColumns(const CompiledBehaviourSet& set,
                                absl::Span<const AgentInput> inputs) {
  const size_t n_agents = agents_.size();
  const int nf = set.factor_count(), ntf = set.target_factor_count();
  // Per agent: what selection and the score's last factors need.
  current_action_.resize(n_agents);
  current_target_.resize(n_agents);
  bool any_personality = false, any_cooldown_input = false;
  uint32_t agents_without_targets = 0;
  pair_agent_.clear();
  pair_target_.clear();
  pair_begin_.assign(n_agents + 1, 0);
  for (size_t j = 0; j < n_agents; ++j) {
    const AgentInput& in = inputs[agents_[j]];
    current_action_[j] = in.current_action;
    current_target_[j] = in.current_target;
    any_personality |= in.personality >= 0;
    any_cooldown_input |= !in.seconds_since_action.empty();
    agents_without_targets += in.targets.empty();
    pair_begin_[j] = static_cast<uint32_t>(pair_agent_.size());
    if (!set.has_per_target_actions()) continue;
    for (size_t t = 0; t < in.targets.size(); ++t) {
      pair_agent_.push_back(static_cast<uint32_t>(j));
      pair_target_.push_back(static_cast<uint32_t>(t));
    }
  }
  pair_begin_[n_agents] = static_cast<uint32_t>(pair_agent_.size());
  const size_t n_pairs = pair_agent_.size();

  // Transpose once: one contiguous column per factor, for agents and for
  // (agent, target) pairs. Agent factors are copied to the pair columns only
  // when a per-target action reads them.
  agent_columns_.resize(static_cast<size_t>(nf) * n_agents);
  for (size_t j = 0; j < n_agents; ++j) {
    const float* f = inputs[agents_[j]].factors.data();
    for (int k = 0; k < nf; ++k) agent_columns_[k * n_agents + j] = f[k];
  }
  target_columns_.resize(static_cast<size_t>(ntf) * n_pairs);
  for (size_t p = 0; p < n_pairs; ++p) {
    const float* f =
        inputs[agents_[pair_agent_[p]]].targets[pair_target_[p]].factors.data();
    for (int k = 0; k < ntf; ++k) target_columns_[k * n_pairs + p] = f[k];
  }
  // Which columns hold a NaN or an infinity (rare): only those are checked
  // per element.
  auto any_nonfinite = [](const float* col, size_t count) {
    bool bad = false;
    for (size_t m = 0; m < count; ++m) bad |= !std::isfinite(col[m]);
    return bad;
  };
  agent_nonfinite_.resize(nf);
  for (int k = 0; k < nf; ++k) {
    agent_nonfinite_[k] =
        any_nonfinite(agent_columns_.data() + k * n_agents, n_agents);
  }
  target_nonfinite_.resize(ntf);
  for (int k = 0; k < ntf; ++k) {
    target_nonfinite_[k] =
        any_nonfinite(target_columns_.data() + k * n_pairs, n_pairs);
  }
  pair_columns_.resize(static_cast<size_t>(nf) * n_pairs);
  pair_column_ready_.assign(nf, 0);
  auto pair_column = [&](int k) {
    float* col = pair_columns_.data() + static_cast<size_t>(k) * n_pairs;
    if (!pair_column_ready_[k]) {
      const float* src = agent_columns_.data() + k * n_agents;
      for (size_t p = 0; p < n_pairs; ++p) col[p] = src[pair_agent_[p]];
      pair_column_ready_[k] = 1;
    }
    return col;
  };

  row_offset_.resize(set.action_count());
  size_t total = 0;
  for (int a = 0; a < set.action_count(); ++a) {
    row_offset_[a] = total;
    total += set.actions()[a].per_target ? n_pairs : n_agents;
  }
  scores_.resize(total);
  const size_t widest = std::max(n_agents, n_pairs);
  normalised_.resize(widest);
  curved_.resize(widest);
  raw_acc_.resize(widest);
  comp_acc_.resize(widest);
  weight_sum_.resize(widest);
  weights_.resize(widest);
  veto_.resize(widest);
  agent_invalid_.assign(n_agents, 0);

  const Aggregation aggregation = set.aggregation();
  const Compensation compensation = set.compensation();
  const float commitment =
      1.0f + static_cast<float>(set.selection().commitment_bonus);
  for (int a = 0; a < set.action_count(); ++a) {
    const CompiledAction& act = set.actions()[a];
    const bool pt = act.per_target;
    const size_t count = pt ? n_pairs : n_agents;
    const int n = static_cast<int>(act.consideration_count);
    const bool per_consideration =
        compensation == Compensation::kPerConsideration && n > 1;
    // CompensateFactor's modifier, computed as it computes it.
    const float mod = 1.0f - 1.0f / static_cast<float>(n);
    auto agent_index = [&](size_t m) { return pt ? pair_agent_[m] : m; };
    const float start = aggregation == Aggregation::kWeightedSum ? 0.0f : 1.0f;
    float* raw_acc = raw_acc_.data();
    float* comp_acc = comp_acc_.data();
    float* weight_sum = weight_sum_.data();
    uint8_t* veto = veto_.data();
    std::fill_n(raw_acc, count, start);
    std::fill_n(comp_acc, count, start);  // the product only
    std::fill_n(weight_sum, count, 0.0f);
    std::fill_n(veto, count, uint8_t{0});
    // Only the product and the minimum veto on a zero contribution.
    const bool zero_vetoes = aggregation != Aggregation::kWeightedSum;

    for (int k = 0; k < n; ++k) {
      const uint32_t ci = act.first_consideration + k;
      const CompiledConsideration& c = set.considerations()[ci];
      const float* x =
          c.per_target
              ? target_columns_.data() + static_cast<size_t>(c.factor) * n_pairs
          : pt ? pair_column(c.factor)
               : agent_columns_.data() +
                     static_cast<size_t>(c.factor) * n_agents;
      if (c.per_target ? target_nonfinite_[c.factor]
                       : agent_nonfinite_[c.factor]) {
        for (size_t m = 0; m < count; ++m) {
          // Decide stops at an action's first veto: a non-finite input
          // counts only when nothing vetoed before it.
          if (veto[m] == 0 && !std::isfinite(x[m])) veto[m] = 1;
        }
      }
      float* norm = normalised_.data();
      const float lo = c.range_lo, inv = c.range_inv_span;
      for (size_t m = 0; m < count; ++m) {
        norm[m] = Clamp01((x[m] - lo) * inv);
      }
      EvaluateCurveColumn(c.curve, norm, curved_.data(), count,
                          set.curve_points());
      // Each element's curve output, then (overwritten) its contribution.
      float* y = curved_.data();
      const float out_min = c.output_min, out_span = c.output_span;
      // The consideration's weight: one for all, unless personalities vary
      // it per agent.
      const float* w = nullptr;
      if (any_personality) {
        for (size_t m = 0; m < count; ++m) {
          const int p = inputs[agents_[agent_index(m)]].personality;
          weights_[m] =
              p >= 0 ? set.personality_consideration_weight(p, ci) : c.weight;
        }
        w = weights_.data();
      }
      const float cw = c.weight;
      switch (aggregation) {
        case Aggregation::kProduct:
          if (w == nullptr && per_consideration) {
            for (size_t m = 0; m < count; ++m) {
              const float s = (out_min + out_span * y[m]) * cw + (1.0f - cw);
              raw_acc[m] *= s;
              comp_acc[m] *= s + (1.0f - s) * mod * s;
              y[m] = s;
            }
          } else if (w == nullptr) {
            for (size_t m = 0; m < count; ++m) {
              const float s = (out_min + out_span * y[m]) * cw + (1.0f - cw);
              raw_acc[m] *= s;
              comp_acc[m] *= s;
              y[m] = s;
            }
          } else {
            for (size_t m = 0; m < count; ++m) {
              const float s =
                  (out_min + out_span * y[m]) * w[m] + (1.0f - w[m]);
              raw_acc[m] *= s;
              comp_acc[m] *= per_consideration ? s + (1.0f - s) * mod * s : s;
              y[m] = s;
            }
          }
          break;
        case Aggregation::kMin:
          for (size_t m = 0; m < count; ++m) {
            const float wm = w != nullptr ? w[m] : cw;
            const float s = (out_min + out_span * y[m]) * wm + (1.0f - wm);
            raw_acc[m] = std::min(raw_acc[m], s);
            y[m] = s;
          }
          break;
        case Aggregation::kWeightedSum:
          for (size_t m = 0; m < count; ++m) {
            const float wm = w != nullptr ? w[m] : cw;
            raw_acc[m] += (out_min + out_span * y[m]) * wm;
            weight_sum[m] += wm;
          }
          break;
      }
      if (zero_vetoes) {
        for (size_t m = 0; m < count; ++m) {
          veto[m] = veto[m] == 0 && y[m] == 0.0f ? uint8_t{2} : veto[m];
        }
      }
    }

    // The candidate's score: compensated * weight * cooldown * commitment,
    // multiplied in Decide's order.
    float* score = scores_.data() + row_offset_[a];
    if (aggregation == Aggregation::kWeightedSum) {
      for (size_t m = 0; m < count; ++m) {
        raw_acc[m] = weight_sum[m] > 0 ? raw_acc[m] / weight_sum[m] : 1.0f;
      }
    }
    if (compensation == Compensation::kOnProduct) {
      for (size_t m = 0; m < count; ++m)
        score[m] = n > 0 ? CompensateFactor(raw_acc[m], n) : raw_acc[m];
    } else if (compensation == Compensation::kGeometricMean) {
      const float e = 1.0f / std::max(1.0f, static_cast<float>(n) * 0.5f);
      for (size_t m = 0; m < count; ++m) score[m] = std::pow(raw_acc[m], e);
    } else {
      // Compensation per consideration lives in comp_acc (the product's);
      // the other aggregations are what they combined.
      std::copy_n(aggregation == Aggregation::kProduct ? comp_acc : raw_acc,
                  count, score);
    }
    const float aw = act.weight;
    if (any_personality) {
      for (size_t m = 0; m < count; ++m) {
        const int p = inputs[agents_[agent_index(m)]].personality;
        score[m] *= p >= 0 ? aw * set.personality_action_weight(p, a) : aw;
      }
    } else {
      for (size_t m = 0; m < count; ++m) score[m] *= aw;
    }
    if (act.cooldown_seconds > 0 && any_cooldown_input) {
      for (size_t m = 0; m < count; ++m) {
        const AgentInput& in = inputs[agents_[agent_index(m)]];
        if (in.seconds_since_action.empty()) continue;
        const float since = in.seconds_since_action[a];
        if (since < act.cooldown_seconds) {
          score[m] *= std::max(0.0f, since) / act.cooldown_seconds;
        }
      }
    }
    for (size_t m = 0; m < count; ++m) {
      const size_t j = agent_index(m);
      const bool current =
          current_action_[j] == a &&
          (!pt || current_target_[j] == kAnyTarget ||
           static_cast<int>(pair_target_[m]) == current_target_[j]);
      score[m] = veto[m] != 0 ? 0.0f
                 : current    ? score[m] * commitment
                              : score[m];
    }
    uint32_t vetoed = 0;
    for (size_t m = 0; m < count; ++m) {
      vetoed += veto[m] != 0;
      agent_invalid_[agent_index(m)] |= veto[m] == 1;
    }
    // An agent without targets has its per-target actions vetoed.
    vetoes_[a] += vetoed + (pt ? agents_without_targets : 0);
  }
  for (uint8_t invalid : agent_invalid_) invalid_agents_ += invalid;
}

void BatchDecider::Select(const CompiledBehaviourSet& set,
                          absl::Span<const AgentInput> inputs,
                          absl::Span<BatchDecision> out) {
  const float min_score = static_cast<float>(set.selection().min_score);
  const bool positive_is_eligible = !(min_score > 0.0f);
  const int fallback = set.fallback_action();
  const int n_actions = set.action_count();
  const auto& actions = set.actions();
  for (size_t j = 0; j < agents_.size(); ++j) {
    const AgentInput& in = inputs[agents_[j]];
    BatchDecision& d = out[agents_[j]];
    const int current_action = current_action_[j];
    const int current_target = current_target_[j];
    auto is_current = [&](const Candidate& c) {
      return c.action == current_action &&
             (c.target < 0 || current_target == kAnyTarget ||
              c.target == current_target);
    };
    auto eligible = [&](const Candidate& c) {
      return c.score > 0.0f && c.score >= min_score;
    };
    // Decide's order of candidates: eligible first, then the higher rank,
    // then the higher score, then the current action; earlier wins ties
    // (the visit is in index order and only a strictly better one moves).
    auto ahead = [&](const Candidate& c, const Candidate& o) {
      // Only positive scores are offered: without a min_score all are
      // eligible.
      if (!positive_is_eligible) {
        const bool ce = eligible(c), oe = eligible(o);
        if (ce != oe) return ce;
      }
      if (c.rank != o.rank) return c.rank > o.rank;
      if (c.score != o.score) return c.score > o.score;
      return is_current(c) && !is_current(o);
    };
    // The best two candidates with a positive score, in one pass.
    Candidate first{-1, -1, 0.0f, 0}, second{-1, -1, 0.0f, 0};
    auto offer = [&](const Candidate& c) {
      if (!(c.score > 0.0f)) return;
      if (first.action < 0 || ahead(c, first)) {
        second = first;
        first = c;
      } else if (second.action < 0 || ahead(c, second)) {
        second = c;
      }
    };
    const uint32_t pair_first = pair_begin_[j], pair_last = pair_begin_[j + 1];
    for (int a = 0; a < n_actions; ++a) {
      const float* row = scores_.data() + row_offset_[a];
      if (!actions[a].per_target) {
        offer(Candidate{a, -1, row[j], actions[a].rank});
        continue;
      }
      for (uint32_t p = pair_first; p < pair_last; ++p) {
        offer(Candidate{a, static_cast<int>(p - pair_first), row[p],
                        actions[a].rank});
      }
    }
    if (first.action >= 0 && eligible(first)) {
      d.action = first.action;
      d.target = first.target;
      d.score = first.score;
      d.rank = first.rank;
      if (second.action >= 0) {
        d.runner_up_action = second.action;
        d.runner_up_target = second.target;
        d.runner_up_score = second.score;
      }
    } else if (fallback >= 0) {
      // Nothing eligible: Decide takes the fallback action's last candidate
      // (score as scored, 0 with no targets), and the runner-up is the best
      // positive candidate other than that one.
      const CompiledAction& act = actions[fallback];
      const float* row = scores_.data() + row_offset_[fallback];
      Candidate chosen{fallback, -1, 0.0f, act.rank};
      if (!act.per_target) {
        chosen.score = row[j];
      } else if (pair_last > pair_first) {
        chosen.target = static_cast<int>(pair_last - 1 - pair_first);
        chosen.score = row[pair_last - 1];
      }
      d.action = chosen.action;
      d.target = chosen.target;
      d.score = chosen.score;
      d.rank = act.rank;
      d.fallback = true;
      const bool first_is_chosen =
          first.action == chosen.action && first.target == chosen.target;
      const Candidate& runner = first_is_chosen ? second : first;
      if (runner.action >= 0) {
        d.runner_up_action = runner.action;
        d.runner_up_target = runner.target;
        d.runner_up_score = runner.score;
      }
    } else if (first.action >= 0) {
      d.runner_up_action = first.action;
      d.runner_up_target = first.target;
      d.runner_up_score = first.score;
    }
    d.switched = d.action != in.current_action ||
                 (d.target >= 0 && in.current_target != kAnyTarget &&
                  d.target != in.current_target);
  }
}

}  // namespace utilityd::engine
