#include "utilityd/engine/batch.h"

#include <algorithm>
#include <cmath>

namespace utilityd::engine {
namespace {

inline float Clamp01(float x) {
  return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
}

inline bool IsCurrent(const AgentInput& in, int action, int target) {
  return action == in.current_action &&
         (target < 0 || in.current_target == kAnyTarget ||
          target == in.current_target);
}

// One candidate as selection sees it.
struct Candidate {
  int action;
  int target;
  float score;
  int rank;
};

}  // namespace

void BatchDecider::Decide(const CompiledBehaviourSet& set,
                          absl::Span<const AgentInput> inputs,
                          ExplainLevel level, absl::Span<BatchDecision> out,
                          std::vector<absl::Status>* errors) {
  if (errors != nullptr) errors->assign(inputs.size(), absl::OkStatus());
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
      BatchDecision& d = out[i];
      d.action = scalar_.action;
      d.target = scalar_.target;
      d.score = scalar_.score;
      d.switched = scalar_.switched;
      d.fallback = scalar_.fallback;
      d.rank = scalar_.rank;
      d.runner_up_action = scalar_.runner_up_action;
      d.runner_up_target = scalar_.runner_up_target;
      d.runner_up_score = scalar_.runner_up_score;
      d.draw = scalar_.draw;
    }
    return;
  }
  ScoreColumns(set, inputs);
  Select(set, inputs, out);
}

void BatchDecider::ScoreColumns(const CompiledBehaviourSet& set,
                                absl::Span<const AgentInput> inputs) {
  const size_t n_agents = agents_.size();
  pair_agent_.clear();
  pair_target_.clear();
  pair_begin_.assign(n_agents + 1, 0);
  bool any_personality = false;
  for (size_t j = 0; j < n_agents; ++j) {
    const AgentInput& in = inputs[agents_[j]];
    any_personality |= in.personality >= 0;
    pair_begin_[j] = static_cast<uint32_t>(pair_agent_.size());
    if (!set.has_per_target_actions()) continue;
    for (size_t t = 0; t < in.targets.size(); ++t) {
      pair_agent_.push_back(static_cast<uint32_t>(j));
      pair_target_.push_back(static_cast<uint32_t>(t));
    }
  }
  pair_begin_[n_agents] = static_cast<uint32_t>(pair_agent_.size());
  const size_t n_pairs = pair_agent_.size();

  row_offset_.resize(set.action_count());
  size_t total = 0;
  for (int a = 0; a < set.action_count(); ++a) {
    row_offset_[a] = total;
    total += set.actions()[a].per_target ? n_pairs : n_agents;
  }
  scores_.resize(total);
  const size_t widest = std::max(n_agents, n_pairs);
  column_.resize(widest);
  curved_.resize(widest);
  raw_acc_.resize(widest);
  comp_acc_.resize(widest);
  weight_sum_.resize(widest);
  invalid_.resize(widest);

  const Aggregation aggregation = set.aggregation();
  const Compensation compensation = set.compensation();
  const float commitment =
      1.0f + static_cast<float>(set.selection().commitment_bonus);
  for (int a = 0; a < set.action_count(); ++a) {
    const CompiledAction& act = set.actions()[a];
    const bool pt = act.per_target;
    const size_t m_count = pt ? n_pairs : n_agents;
    const int n = static_cast<int>(act.consideration_count);
    const bool per_consideration =
        compensation == Compensation::kPerConsideration && n > 1;
    // The input behind row m.
    auto agent_of = [&](size_t m) -> const AgentInput& {
      return inputs[agents_[pt ? pair_agent_[m] : m]];
    };
    const float start = aggregation == Aggregation::kWeightedSum ? 0.0f : 1.0f;
    std::fill_n(raw_acc_.begin(), m_count, start);
    std::fill_n(comp_acc_.begin(), m_count, start);
    std::fill_n(weight_sum_.begin(), m_count, 0.0f);
    std::fill_n(invalid_.begin(), m_count, uint8_t{0});

    for (int k = 0; k < n; ++k) {
      const uint32_t ci = act.first_consideration + k;
      const CompiledConsideration& c = set.considerations()[ci];
      float* x = column_.data();
      // Gather the factor, flag non-finite values, normalise.
      if (c.per_target) {
        for (size_t m = 0; m < m_count; ++m) {
          x[m] = agent_of(m).targets[pair_target_[m]].factors[c.factor];
        }
      } else {
        for (size_t m = 0; m < m_count; ++m) {
          x[m] = agent_of(m).factors[c.factor];
        }
      }
      for (size_t m = 0; m < m_count; ++m) {
        invalid_[m] |= !std::isfinite(x[m]);
        x[m] = Clamp01((x[m] - c.range_lo) * c.range_inv_span);
      }
      EvaluateCurveColumn(c.curve, x, curved_.data(), m_count,
                          set.curve_points());
      const float* y = curved_.data();
      auto weight_of = [&](size_t m) {
        if (!any_personality) return c.weight;
        const int p = agent_of(m).personality;
        return p >= 0 ? set.personality_consideration_weight(p, ci) : c.weight;
      };
      switch (aggregation) {
        case Aggregation::kProduct:
          for (size_t m = 0; m < m_count; ++m) {
            const float w = weight_of(m);
            const float output = c.output_min + c.output_span * y[m];
            const float contribution = output * w + (1.0f - w);
            raw_acc_[m] *= contribution;
            comp_acc_[m] *= per_consideration
                                ? CompensateFactor(contribution, n)
                                : contribution;
          }
          break;
        case Aggregation::kMin:
          for (size_t m = 0; m < m_count; ++m) {
            const float w = weight_of(m);
            const float output = c.output_min + c.output_span * y[m];
            raw_acc_[m] = std::min(raw_acc_[m], output * w + (1.0f - w));
            comp_acc_[m] = raw_acc_[m];
          }
          break;
        case Aggregation::kWeightedSum:
          for (size_t m = 0; m < m_count; ++m) {
            const float w = weight_of(m);
            const float output = c.output_min + c.output_span * y[m];
            raw_acc_[m] += output * w;
            comp_acc_[m] = raw_acc_[m];
            weight_sum_[m] += w;
          }
          break;
      }
    }

    float* score = scores_.data() + row_offset_[a];
    for (size_t m = 0; m < m_count; ++m) {
      const AgentInput& in = agent_of(m);
      float raw = raw_acc_[m];
      float comp = comp_acc_[m];
      if (aggregation == Aggregation::kWeightedSum) {
        raw = weight_sum_[m] > 0 ? raw / weight_sum_[m] : 1.0f;
        comp = raw;
      }
      float compensated = comp;
      if (compensation == Compensation::kOnProduct) {
        compensated = n > 0 ? CompensateFactor(raw, n) : raw;
      } else if (compensation == Compensation::kGeometricMean) {
        compensated =
            std::pow(raw, 1.0f / std::max(1.0f, static_cast<float>(n) * 0.5f));
      }
      float weight = act.weight;
      if (in.personality >= 0) {
        weight *= set.personality_action_weight(in.personality, a);
      }
      float cooldown = 1.0f;
      if (act.cooldown_seconds > 0 && !in.seconds_since_action.empty()) {
        const float since = in.seconds_since_action[a];
        if (since < act.cooldown_seconds) {
          cooldown = std::max(0.0f, since) / act.cooldown_seconds;
        }
      }
      const int target = pt ? static_cast<int>(pair_target_[m]) : -1;
      const float commit = IsCurrent(in, a, target) ? commitment : 1.0f;
      // A zero contribution already made the product or minimum 0, which
      // is what Decide's veto yields; a non-finite input vetoes outright.
      score[m] = invalid_[m] ? 0.0f : compensated * weight * cooldown * commit;
    }
  }
}

void BatchDecider::Select(const CompiledBehaviourSet& set,
                          absl::Span<const AgentInput> inputs,
                          absl::Span<BatchDecision> out) {
  const float min_score = static_cast<float>(set.selection().min_score);
  const int fallback = set.fallback_action();
  for (size_t j = 0; j < agents_.size(); ++j) {
    const AgentInput& in = inputs[agents_[j]];
    BatchDecision& d = out[agents_[j]];
    // Visits the candidates in Decide's order: actions, then targets.
    auto each = [&](auto&& visit) {
      for (int a = 0; a < set.action_count(); ++a) {
        const CompiledAction& act = set.actions()[a];
        const float* row = scores_.data() + row_offset_[a];
        if (!act.per_target) {
          visit(Candidate{a, -1, row[j], act.rank});
          continue;
        }
        const uint32_t first = pair_begin_[j], last = pair_begin_[j + 1];
        if (first == last) {
          visit(Candidate{a, -1, 0.0f, act.rank});  // no targets: vetoed
          continue;
        }
        for (uint32_t p = first; p < last; ++p) {
          visit(Candidate{a, static_cast<int>(p - first), row[p], act.rank});
        }
      }
    };
    auto eligible = [&](const Candidate& c) {
      return c.score > 0.0f && c.score >= min_score;
    };
    // Better: higher score, then the current action; earlier on ties.
    auto better = [&](const Candidate& c, const Candidate& best) {
      if (c.score != best.score) return c.score > best.score;
      return IsCurrent(in, c.action, c.target) &&
             !IsCurrent(in, best.action, best.target);
    };
    int index = 0, chosen = -1;
    Candidate best{};
    each([&](const Candidate& c) {
      if (eligible(c) && (chosen < 0 || c.rank > best.rank ||
                          (c.rank == best.rank && better(c, best)))) {
        best = c;
        chosen = index;
      }
      ++index;
    });
    if (chosen < 0 && fallback >= 0) {
      // Decide takes the fallback action's last candidate.
      index = 0;
      each([&](const Candidate& c) {
        if (c.action == fallback) {
          best = c;
          chosen = index;
        }
        ++index;
      });
      d.fallback = true;
      d.rank = set.actions()[fallback].rank;
    } else if (chosen >= 0) {
      d.rank = best.rank;
    }
    if (chosen >= 0) {
      d.action = best.action;
      d.target = best.target;
      d.score = best.score;
    }
    d.switched = d.action != in.current_action ||
                 (d.target >= 0 && in.current_target != kAnyTarget &&
                  d.target != in.current_target);
    // Runner-up: eligible before not, then rank, then better.
    index = 0;
    int runner = -1;
    Candidate second{};
    each([&](const Candidate& c) {
      const int i = index++;
      if (i == chosen || !(c.score > 0.0f)) return;
      if (runner >= 0) {
        const bool ce = eligible(c), se = eligible(second);
        if (ce != se) {
          if (!ce) return;
        } else if (c.rank != second.rank) {
          if (c.rank < second.rank) return;
        } else if (!better(c, second)) {
          return;
        }
      }
      second = c;
      runner = i;
    });
    if (runner >= 0) {
      d.runner_up_action = second.action;
      d.runner_up_target = second.target;
      d.runner_up_score = second.score;
    }
  }
}

}  // namespace utilityd::engine
