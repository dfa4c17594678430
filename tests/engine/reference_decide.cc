#include "tests/engine/reference_decide.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/src/curves/curve_math.h"
#include "utilityd/engine/random.h"

namespace utilityd::reference {
namespace {

using engine::CandidateTrace;
using engine::ConsiderationTrace;
using engine::VetoReason;

float Clamp(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

// s + (1 - s)(1 - 1/n)s, seed 004.
float Compensate(float s, int n) {
  const float mod = 1.0f - 1.0f / static_cast<float>(n);
  return s + (1.0f - s) * mod * s;
}

bool IsCurrent(const engine::AgentInput& in, int action, int target) {
  return action == in.current_action &&
         (target < 0 || in.current_target == engine::kAnyTarget ||
          target == in.current_target);
}

// Scores one candidate, appending its consideration traces to `out`.
void Score(const engine::CompiledBehaviourSet& set,
           const engine::AgentInput& in, engine::Decision* out,
           CandidateTrace* cand) {
  const engine::CompiledAction& act = set.actions()[cand->action];
  const int count = static_cast<int>(act.consideration_count);
  int n = 0;  // the compensation's n: gates are not counted
  for (int k = 0; k < count; ++k) {
    n += set.considerations()[act.first_consideration + k].gate ? 0 : 1;
  }
  const engine::Aggregation aggregation = set.aggregation();
  const bool per_consideration =
      set.compensation() == engine::Compensation::kPerConsideration && n > 1;
  cand->first_trace = static_cast<uint32_t>(out->considerations.size());
  float product = 1, compensated_product = 1, minimum = 1, sum = 0,
        weight_sum = 0;
  for (int k = 0; k < count; ++k) {
    const uint32_t ci = act.first_consideration + k;
    const engine::CompiledConsideration& c = set.considerations()[ci];
    ConsiderationTrace tr;
    tr.raw = c.per_target ? in.targets[cand->target].factors[c.factor]
                          : in.factors[c.factor];
    if (!std::isfinite(tr.raw)) {
      // Counts as nothing, and vetoes the candidate.
      tr.invalid_input = true;
      if (cand->veto == VetoReason::kNone) {
        cand->veto = VetoReason::kInvalidInput;
        cand->vetoed_by = k;
      }
      out->considerations.push_back(tr);
      continue;
    }
    const float w = in.personality >= 0 ? set.personality_consideration_weight(
                                              in.personality, ci)
                                        : c.weight;
    tr.normalised = Clamp((tr.raw - c.range_lo) / c.range_span);
    tr.curved =
        engine::EvaluateCurve(c.curve, tr.normalised, set.curve_points());
    tr.output = c.output_min + c.output_span * tr.curved;
    if (aggregation == engine::Aggregation::kWeightedSum) {
      tr.contribution = tr.output * w;
      sum += tr.contribution;
      weight_sum += w;
    } else {
      const float s = tr.output * w + (1.0f - w);
      tr.contribution = per_consideration ? Compensate(s, n) : s;
      product *= s;
      compensated_product *= tr.contribution;
      minimum = std::min(minimum, s);
      if (s == 0.0f && cand->veto == VetoReason::kNone) {
        cand->veto = VetoReason::kConsideration;
        cand->vetoed_by = k;
      }
    }
    out->considerations.push_back(tr);
  }
  switch (aggregation) {
    case engine::Aggregation::kProduct:
      cand->aggregate = product;
      cand->compensated = compensated_product;
      break;
    case engine::Aggregation::kMin:
      cand->aggregate = cand->compensated = minimum;
      break;
    case engine::Aggregation::kWeightedSum:
      cand->aggregate = cand->compensated =
          weight_sum > 0 ? sum / weight_sum : 1.0f;
      break;
  }
  if (set.compensation() == engine::Compensation::kOnProduct && n > 0) {
    cand->compensated = Compensate(cand->aggregate, n);
  } else if (set.compensation() == engine::Compensation::kGeometricMean) {
    // The engine's own x^a (the maths is not what this reference checks).
    cand->compensated = static_cast<float>(engine::internal::OwnPow(
        cand->aggregate, 1.0f / std::max(1.0f, static_cast<float>(n) * 0.5f)));
  }
  cand->weight = act.weight;
  if (in.personality >= 0) {
    cand->weight *= set.personality_action_weight(in.personality, cand->action);
  }
  if (act.cooldown_seconds > 0 && !in.seconds_since_action.empty()) {
    const float since = in.seconds_since_action[cand->action];
    if (since < act.cooldown_seconds) {
      cand->cooldown_factor = std::max(0.0f, since) / act.cooldown_seconds;
    }
  }
  if (IsCurrent(in, cand->action, cand->target)) {
    cand->commitment_factor =
        1.0f + static_cast<float>(set.selection().commitment_bonus);
  }
  cand->score = cand->veto != VetoReason::kNone
                    ? 0.0f
                    : cand->compensated * cand->weight * cand->cooldown_factor *
                          cand->commitment_factor;
}

// Candidate i ranks before j: higher score, then the current action, then
// the lower index.
bool Better(const std::vector<CandidateTrace>& c, const engine::AgentInput& in,
            size_t i, size_t j) {
  if (c[i].score != c[j].score) return c[i].score > c[j].score;
  const bool ci = IsCurrent(in, c[i].action, c[i].target);
  const bool cj = IsCurrent(in, c[j].action, c[j].target);
  if (ci != cj) return ci;
  return i < j;
}

// Picks from `pool` in proportion to `weights`, walking in pool order.
size_t WeightedPick(const std::vector<uint32_t>& pool,
                    const std::vector<double>& weights, double draw,
                    std::vector<CandidateTrace>* cands) {
  double total = 0;
  for (double w : weights) total += w;
  size_t chosen = pool.back();
  double cumulative = 0;
  bool picked = false;
  for (size_t i = 0; i < pool.size(); ++i) {
    (*cands)[pool[i]].probability = total > 0 ? weights[i] / total : 0;
    cumulative += weights[i];
    if (!picked && draw * total < cumulative) {
      chosen = pool[i];
      picked = true;
    }
  }
  return chosen;
}

// Chooses among the eligible candidates of `top_rank`; returns the index.
int Choose(const engine::CompiledBehaviourSet& set,
           const engine::AgentInput& in, int top_rank, engine::Decision* out) {
  auto& cands = out->candidates;
  const engine::SelectionDefinition& sel = set.selection();
  std::vector<uint32_t> pool;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].eligible && set.actions()[cands[i].action].rank == top_rank) {
      pool.push_back(static_cast<uint32_t>(i));
    }
  }
  if (sel.strategy == engine::Strategy::kHighest) {
    size_t best = pool[0];
    for (uint32_t i : pool) {
      if (Better(cands, in, i, best)) best = i;
    }
    return static_cast<int>(best);
  }
  out->draw = engine::SplitMix64(in.seed).NextDouble();
  if (sel.strategy == engine::Strategy::kTopK) {
    std::stable_sort(pool.begin(), pool.end(), [&](uint32_t i, uint32_t j) {
      return Better(cands, in, i, j);
    });
    if (pool.size() > static_cast<size_t>(sel.top_k)) pool.resize(sel.top_k);
  }
  std::vector<double> weights;
  float max_score = 0;
  for (uint32_t i : pool) max_score = std::max(max_score, cands[i].score);
  for (uint32_t i : pool) {
    weights.push_back(sel.strategy == engine::Strategy::kSoftmax
                          ? engine::internal::OwnExp(
                                (cands[i].score - max_score) / sel.temperature)
                          : cands[i].score);
  }
  return static_cast<int>(WeightedPick(pool, weights, out->draw, &cands));
}

// The candidate that would have won without the winner.
int RunnerUp(const engine::CompiledBehaviourSet& set,
             const engine::AgentInput& in, int chosen,
             const std::vector<CandidateTrace>& cands) {
  auto ahead = [&](size_t i, size_t j) {
    if (cands[i].eligible != cands[j].eligible) return cands[i].eligible;
    const int ri = set.actions()[cands[i].action].rank;
    const int rj = set.actions()[cands[j].action].rank;
    if (ri != rj) return ri > rj;
    return Better(cands, in, i, j);
  };
  int runner = -1;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (static_cast<int>(i) == chosen || !(cands[i].score > 0.0f)) continue;
    if (runner < 0 || ahead(i, runner)) runner = static_cast<int>(i);
  }
  return runner;
}

}  // namespace

absl::Status Decide(const engine::CompiledBehaviourSet& set,
                    const engine::AgentInput& input, engine::Decision* out) {
  if (absl::Status s = engine::CheckAgentInput(set, input); !s.ok()) return s;
  *out = engine::Decision();
  auto& cands = out->candidates;
  for (int a = 0; a < set.action_count(); ++a) {
    if (!set.actions()[a].per_target) {
      cands.push_back({.action = a});
      Score(set, input, out, &cands.back());
    } else if (input.targets.empty()) {
      cands.push_back({.action = a, .veto = VetoReason::kNoTargets});
    } else {
      for (int t = 0; t < static_cast<int>(input.targets.size()); ++t) {
        cands.push_back({.action = a, .target = t});
        Score(set, input, out, &cands.back());
      }
    }
  }
  const float min_score = static_cast<float>(set.selection().min_score);
  bool any_eligible = false;
  int top_rank = 0;
  for (CandidateTrace& c : cands) {
    c.eligible = c.score > 0.0f && c.score >= min_score;
    if (!c.eligible) continue;
    const int rank = set.actions()[c.action].rank;
    if (!any_eligible || rank > top_rank) top_rank = rank;
    any_eligible = true;
  }
  int chosen = -1;
  if (any_eligible) {
    chosen = Choose(set, input, top_rank, out);
    out->rank = top_rank;
  } else if (set.fallback_action() >= 0) {
    for (size_t i = 0; i < cands.size(); ++i) {
      if (cands[i].action == set.fallback_action())
        chosen = static_cast<int>(i);
    }
    out->fallback = true;
    out->rank = set.actions()[set.fallback_action()].rank;
  }
  if (chosen >= 0) {
    out->action = cands[chosen].action;
    out->target = cands[chosen].target;
    out->score = cands[chosen].score;
  }
  out->switched =
      out->action != input.current_action ||
      (out->target >= 0 && input.current_target != engine::kAnyTarget &&
       out->target != input.current_target);
  if (const int r = RunnerUp(set, input, chosen, cands); r >= 0) {
    out->runner_up_action = cands[r].action;
    out->runner_up_target = cands[r].target;
    out->runner_up_score = cands[r].score;
  }
  return absl::OkStatus();
}

}  // namespace utilityd::reference
