#include "utilityd/engine/decide.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "utilityd/engine/random.h"

namespace utilityd::engine {
namespace {

inline float Clamp01(float x) {
  return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
}

bool IsCurrent(const AgentInput& in, int action, int target) {
  return action == in.current_action &&
         (target < 0 || in.current_target == kAnyTarget ||
          target == in.current_target);
}

// Scores one candidate into `cand`; appends consideration traces when `full`.
void ScoreCandidate(const CompiledBehaviourSet& set, const AgentInput& in,
                    bool full, Decision* out, CandidateTrace* cand) {
  const CompiledAction& act = set.actions()[cand->action];
  const int n = static_cast<int>(act.consideration_count);
  const Aggregation aggregation = set.aggregation();
  const Compensation compensation = set.compensation();
  const bool per_consideration =
      compensation == Compensation::kPerConsideration && n > 1;
  const float* agent = in.factors.data();
  const float* target =
      cand->target >= 0 ? in.targets[cand->target].factors.data() : nullptr;
  const int personality = in.personality;

  cand->first_trace = static_cast<uint32_t>(out->considerations.size());
  float raw_acc = aggregation == Aggregation::kWeightedSum ? 0.0f : 1.0f;
  float comp_acc = raw_acc;
  float weight_sum = 0;
  for (int k = 0; k < n; ++k) {
    const uint32_t ci = act.first_consideration + k;
    const CompiledConsideration& c = set.considerations()[ci];
    ConsiderationTrace tr;
    tr.raw = c.per_target ? target[c.factor] : agent[c.factor];
    if (!std::isfinite(tr.raw)) {
      tr.invalid_input = true;
      if (cand->veto == VetoReason::kNone) {
        cand->veto = VetoReason::kInvalidInput;
        cand->vetoed_by = k;
      }
      if (full) {
        out->considerations.push_back(tr);
        continue;
      }
      break;
    }
    const float w = personality >= 0
                        ? set.personality_consideration_weight(personality, ci)
                        : c.weight;
    tr.normalised = Clamp01((tr.raw - c.range_lo) * c.range_inv_span);
    tr.curved = EvaluateCurve(c.curve, tr.normalised, set.curve_points());
    tr.output = c.output_min + c.output_span * tr.curved;
    switch (aggregation) {
      case Aggregation::kProduct: {
        const float contribution = tr.output * w + (1.0f - w);
        tr.contribution = per_consideration ? CompensateFactor(contribution, n)
                                            : contribution;
        raw_acc *= contribution;
        comp_acc *= tr.contribution;
        break;
      }
      case Aggregation::kMin:
        tr.contribution = tr.output * w + (1.0f - w);
        raw_acc = std::min(raw_acc, tr.contribution);
        comp_acc = raw_acc;
        break;
      case Aggregation::kWeightedSum:
        tr.contribution = tr.output * w;
        raw_acc += tr.contribution;
        comp_acc = raw_acc;
        weight_sum += w;
        break;
    }
    const bool zero =
        tr.contribution == 0.0f && aggregation != Aggregation::kWeightedSum;
    if (full) out->considerations.push_back(tr);
    if (zero && cand->veto == VetoReason::kNone) {
      cand->veto = VetoReason::kConsideration;
      cand->vetoed_by = k;
      if (!full) break;
    }
  }
  if (aggregation == Aggregation::kWeightedSum) {
    raw_acc = weight_sum > 0 ? raw_acc / weight_sum : 1.0f;
    comp_acc = raw_acc;
  }
  cand->aggregate = raw_acc;
  switch (compensation) {
    case Compensation::kOnProduct:
      cand->compensated = n > 0 ? CompensateFactor(raw_acc, n) : raw_acc;
      break;
    case Compensation::kGeometricMean:
      cand->compensated = std::pow(
          raw_acc, 1.0f / std::max(1.0f, static_cast<float>(n) * 0.5f));
      break;
    default:
      cand->compensated = comp_acc;
      break;
  }
  cand->weight = act.weight;
  if (personality >= 0) {
    cand->weight *= set.personality_action_weight(personality, cand->action);
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
  if (cand->veto != VetoReason::kNone) {
    cand->score = 0;
    return;
  }
  cand->score = cand->compensated * cand->weight * cand->cooldown_factor *
                cand->commitment_factor;
}

// Returns whether candidate i ranks before candidate j: higher score, then
// the current action, then the lower (action, target) index.
bool Better(const std::vector<CandidateTrace>& c, const AgentInput& in,
            size_t i, size_t j) {
  if (c[i].score != c[j].score) return c[i].score > c[j].score;
  const bool ci = IsCurrent(in, c[i].action, c[i].target);
  const bool cj = IsCurrent(in, c[j].action, c[j].target);
  if (ci != cj) return ci;
  return i < j;
}

// Picks from `pool` with probability proportional to `weights`, walking in
// pool order; records probabilities. Returns the candidate index.
size_t WeightedPick(const std::vector<uint32_t>& pool,
                    const std::vector<double>& weights, double draw,
                    std::vector<CandidateTrace>* cands) {
  double total = 0;
  for (double w : weights) total += w;
  size_t chosen = pool.back();
  double cumulative = 0;
  const double threshold = draw * total;
  bool picked = false;
  for (size_t i = 0; i < pool.size(); ++i) {
    (*cands)[pool[i]].probability = total > 0 ? weights[i] / total : 0;
    cumulative += weights[i];
    if (!picked && threshold < cumulative) {
      chosen = pool[i];
      picked = true;
    }
  }
  return chosen;
}

}  // namespace

absl::Status CheckAgentInput(const CompiledBehaviourSet& set,
                             const AgentInput& in) {
  if (static_cast<int>(in.factors.size()) != set.factor_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("factors: expected ", set.factor_count(), " values (",
                     set.name(), "), got ", in.factors.size()));
  }
  if (in.current_action < -1 || in.current_action >= set.action_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "current_action: index ", in.current_action, " is out of range"));
  }
  if (!in.seconds_since_action.empty() &&
      static_cast<int>(in.seconds_since_action.size()) != set.action_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("seconds_since_action: expected ", set.action_count(),
                     " values, got ", in.seconds_since_action.size()));
  }
  if (in.personality < -1 || in.personality >= set.personality_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "personality: index ", in.personality, " is out of range"));
  }
  if (in.current_target < kTargetGone ||
      in.current_target >= static_cast<int>(in.targets.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "current_target: index ", in.current_target, " is out of range"));
  }
  for (size_t t = 0; t < in.targets.size(); ++t) {
    if (static_cast<int>(in.targets[t].factors.size()) !=
        set.target_factor_count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "targets[", t, "].factors: expected ", set.target_factor_count(),
          " values, got ", in.targets[t].factors.size()));
    }
  }
  return absl::OkStatus();
}

absl::Status Decide(const CompiledBehaviourSet& set, const AgentInput& input,
                    ExplainLevel level, Decision* out) {
  if (absl::Status s = CheckAgentInput(set, input); !s.ok()) return s;
  const bool full = level == ExplainLevel::kFull;
  out->action = -1;
  out->target = -1;
  out->score = 0;
  out->switched = false;
  out->fallback = false;
  out->rank = 0;
  out->runner_up_action = -1;
  out->runner_up_target = -1;
  out->runner_up_score = 0;
  out->draw = -1;
  out->candidates.clear();
  out->considerations.clear();

  // Score every candidate.
  auto& cands = out->candidates;
  for (int a = 0; a < set.action_count(); ++a) {
    if (!set.actions()[a].per_target) {
      cands.push_back({.action = a});
      ScoreCandidate(set, input, full, out, &cands.back());
      continue;
    }
    if (input.targets.empty()) {
      cands.push_back({.action = a, .veto = VetoReason::kNoTargets});
      continue;
    }
    for (int t = 0; t < static_cast<int>(input.targets.size()); ++t) {
      cands.push_back({.action = a, .target = t});
      ScoreCandidate(set, input, full, out, &cands.back());
    }
  }

  // Eligibility and the competing rank.
  const SelectionDefinition& sel = set.selection();
  const float min_score = static_cast<float>(sel.min_score);
  bool any_eligible = false;
  int top_rank = 0;
  for (CandidateTrace& c : cands) {
    c.eligible =
        c.veto == VetoReason::kNone && c.score > 0.0f && c.score >= min_score;
    if (!c.eligible) continue;
    const int rank = set.actions()[c.action].rank;
    if (!any_eligible || rank > top_rank) top_rank = rank;
    any_eligible = true;
  }

  int chosen = -1;
  if (any_eligible) {
    std::vector<uint32_t>& pool = out->scratch_pool;
    pool.clear();
    for (size_t i = 0; i < cands.size(); ++i) {
      if (cands[i].eligible &&
          set.actions()[cands[i].action].rank == top_rank) {
        pool.push_back(static_cast<uint32_t>(i));
      }
    }
    out->rank = top_rank;
    if (sel.strategy == Strategy::kHighest) {
      size_t best = pool[0];
      for (uint32_t i : pool) {
        if (Better(cands, input, i, best)) best = i;
      }
      chosen = static_cast<int>(best);
    } else {
      out->draw = SplitMix64(input.seed).NextDouble();
      std::vector<double>& weights = out->scratch_weights;
      weights.clear();
      if (sel.strategy == Strategy::kTopK) {
        std::stable_sort(pool.begin(), pool.end(), [&](uint32_t i, uint32_t j) {
          return Better(cands, input, i, j);
        });
        if (pool.size() > static_cast<size_t>(sel.top_k))
          pool.resize(sel.top_k);
      }
      if (sel.strategy == Strategy::kSoftmax) {
        float max_score = 0;
        for (uint32_t i : pool) max_score = std::max(max_score, cands[i].score);
        for (uint32_t i : pool) {
          weights.push_back(
              std::exp((cands[i].score - max_score) / sel.temperature));
        }
      } else {
        for (uint32_t i : pool) weights.push_back(cands[i].score);
      }
      chosen = static_cast<int>(WeightedPick(pool, weights, out->draw, &cands));
    }
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
  out->switched = out->action != input.current_action ||
                  (out->target >= 0 && input.current_target != kAnyTarget &&
                   out->target != input.current_target);

  {
    // The runner-up is the candidate that would have won without the
    // winner: eligible before not, then the higher rank, then Better. Its
    // score can exceed the winner's when a higher rank preempted it.
    auto ahead = [&](size_t i, size_t j) {
      if (cands[i].eligible != cands[j].eligible) return cands[i].eligible;
      const int ri = set.actions()[cands[i].action].rank;
      const int rj = set.actions()[cands[j].action].rank;
      if (ri != rj) return ri > rj;
      return Better(cands, input, i, j);
    };
    int runner = -1;
    for (size_t i = 0; i < cands.size(); ++i) {
      if (static_cast<int>(i) == chosen || cands[i].veto != VetoReason::kNone ||
          cands[i].score <= 0.0f) {
        continue;
      }
      if (runner < 0 || ahead(i, runner)) runner = static_cast<int>(i);
    }
    if (runner >= 0) {
      out->runner_up_action = cands[runner].action;
      out->runner_up_target = cands[runner].target;
      out->runner_up_score = cands[runner].score;
    }
  }
  return absl::OkStatus();
}

}  // namespace utilityd::engine
