#include "model.h"

#include <algorithm>
#include <cmath>

#include "utilityd/engine/curve.h"
#include "utilityd/engine/scoring_rules.h"

namespace utilityd::analysis::internal {
namespace {

// The lowest and highest of `value` over raw values [a, b]: at the ends and
// at each interior breakpoint and the floats beside it (a jump or a peak
// sits on one of them).
template <typename F>
Range RangeOver(const F& value, double a, double b,
                const std::vector<double>& inside) {
  Range r{value(a), value(a)};
  auto see = [&](double raw) {
    const double t = value(raw);
    r.lo = std::min(r.lo, t);
    r.hi = std::max(r.hi, t);
  };
  see(b);
  for (double p : inside) {
    const float f = static_cast<float>(p);
    see(f);
    see(std::nextafter(f, -INFINITY));
    see(std::nextafter(f, INFINITY));
  }
  return r;
}

}  // namespace

Model::Model(const engine::CompiledBehaviourSet& set) : set_(set) {
  for (int f = 0; f < set.factor_count(); ++f) {
    const engine::FactorDefinition& d = set.factors()[f];
    dims_.push_back({d.name, d.min, d.max, false, f});
  }
  agent_dims_ = static_cast<int>(dims_.size());
  if (set.has_per_target_actions()) {
    for (int f = 0; f < set.target_factor_count(); ++f) {
      const engine::FactorDefinition& d = set.target_factors()[f];
      dims_.push_back({"target." + d.name, d.min, d.max, true, f});
    }
  }
  // Once, not per evaluation: each consideration's action's count (the
  // compensation's n, gates aside), and which dimensions anything reads.
  siblings_.resize(set.considerations().size());
  for (const engine::CompiledAction& a : set.actions()) {
    for (uint32_t k = 0; k < a.consideration_count; ++k) {
      siblings_[a.first_consideration + k] =
          static_cast<int>(a.compensated_count);
    }
  }
  read_.assign(dims_.size(), false);
  for (int c = 0; c < static_cast<int>(set.considerations().size()); ++c) {
    const int d = DimOf(c);
    if (d < static_cast<int>(read_.size())) read_[d] = true;
  }
}

int Model::DimOf(int c) const {
  const engine::CompiledConsideration& cc = set_.considerations()[c];
  return cc.per_target ? agent_dims_ + cc.factor : cc.factor;
}

Box Model::FullBox(bool with_target) const {
  Box box;
  const size_t n = with_target ? dims_.size() : agent_dims_;
  for (size_t d = 0; d < n; ++d) {
    box.lo.push_back(dims_[d].lo);
    box.hi.push_back(dims_[d].hi);
  }
  return box;
}

// A consideration's term in its action's aggregate, by the engine's rules
// (scoring_rules.h): its output for the weighted sum (weighted there), its
// contribution for the product and the minimum, compensated per
// consideration when the set says so.
double Model::Term(int c, double raw) const {
  const engine::CompiledConsideration& cc = set_.considerations()[c];
  const float out = engine::ConsiderationOutput(cc, static_cast<float>(raw),
                                                set_.curve_points());
  if (set_.aggregation() == engine::Aggregation::kWeightedSum) return out;
  const float s = engine::Contribution(out, cc.weight);
  if (set_.compensation() != engine::Compensation::kPerConsideration ||
      siblings_[c] <= 1) {
    return s;
  }
  return engine::CompensateFactor(s, siblings_[c]);
}

void CurveBreakpoints(const engine::CompiledConsideration& cc,
                      absl::Span<const engine::CurvePoint> points, double a,
                      double b, std::vector<double>* out) {
  const double lo_raw = std::min(a, b), hi_raw = std::max(a, b);
  // The window of normalised inputs [a, b] maps onto (the range may be
  // inverted); the engine lists the curve's breakpoints there.
  const double span = cc.range_span;
  const double u = (lo_raw - cc.range_lo) / span;
  const double v = (hi_raw - cc.range_lo) / span;
  std::vector<double> at;
  engine::CurveBreakpoints(cc.curve, points, std::min(u, v), std::max(u, v),
                           &at);
  for (double x : at) {
    const double raw = cc.range_lo + x * span;
    if (raw > lo_raw && raw < hi_raw) out->push_back(raw);
  }
}

void Model::Breakpoints(int c, double a, double b,
                        std::vector<double>* out) const {
  CurveBreakpoints(set_.considerations()[c], set_.curve_points(), a, b, out);
}

float PathCondition::Output(double raw) const {
  return engine::EvaluateCurve(
      cc->curve,
      engine::Normalise(static_cast<float>(raw), cc->range_lo, cc->range_span),
      points);
}

bool PathCondition::Met(double raw) const {
  return (Output(raw) >= threshold) == holds;
}

Range PathCondition::OutputRange(double a, double b) const {
  std::vector<double> inside;
  CurveBreakpoints(*cc, points, a, b, &inside);
  return RangeOver([this](double raw) { return double{Output(raw)}; }, a, b,
                   inside);
}

void PathCondition::Over(double a, double b, bool* can, bool* must) const {
  const Range r = OutputRange(a, b);
  const bool some_hold = r.hi >= threshold, all_hold = r.lo >= threshold;
  *can = holds ? some_hold : !all_hold;
  *must = holds ? all_hold : !some_hold;
}

Range Model::TermRange(int c, double a, double b) const {
  std::vector<double> inside;
  Breakpoints(c, a, b, &inside);
  return RangeOver([this, c](double raw) { return Term(c, raw); }, a, b,
                   inside);
}

Range Model::ScoreRange(int a, const Box& box, bool current) const {
  const engine::CompiledAction& act = set_.actions()[a];
  const int n = static_cast<int>(act.consideration_count);
  Range r{1, 1};
  double weights = 0;
  if (set_.aggregation() == engine::Aggregation::kWeightedSum) r = {0, 0};
  for (int k = 0; k < n; ++k) {
    const int c = static_cast<int>(act.first_consideration) + k;
    const int d = DimOf(c);
    const Range t = TermRange(c, box.lo[d], box.hi[d]);
    switch (set_.aggregation()) {
      case engine::Aggregation::kProduct:
        r.lo *= t.lo;
        r.hi *= t.hi;
        break;
      case engine::Aggregation::kMin:
        r.lo = k == 0 ? t.lo : std::min(r.lo, t.lo);
        r.hi = k == 0 ? t.hi : std::min(r.hi, t.hi);
        break;
      case engine::Aggregation::kWeightedSum: {
        const double w = set_.considerations()[c].weight;
        r.lo += w * t.lo;
        r.hi += w * t.hi;
        weights += w;
        break;
      }
    }
  }
  if (set_.aggregation() == engine::Aggregation::kWeightedSum) {
    r = {engine::WeightedAverage(static_cast<float>(r.lo), weights),
         engine::WeightedAverage(static_cast<float>(r.hi), weights)};
  }
  // Compensation after the combination is increasing in the aggregate: the
  // bounds map to bounds.
  r = {engine::CompensateAggregate(set_.compensation(),
                                   static_cast<float>(r.lo), n),
       engine::CompensateAggregate(set_.compensation(),
                                   static_cast<float>(r.hi), n)};
  double factor = act.weight;
  if (current) {
    factor *= engine::CommitmentFactor(set_.selection().commitment_bonus);
  }
  return {r.lo * factor, r.hi * factor};
}

int Model::Winner(const std::vector<double>& point, bool with_target,
                  int current, int of, bool* alive) const {
  factors_.assign(agent_dims_, 0.0f);
  for (int d = 0; d < agent_dims_; ++d)
    factors_[d] = static_cast<float>(point[d]);
  engine::AgentInput input;
  input.factors = factors_;
  input.current_action = current;
  input.current_target = engine::kAnyTarget;
  targets_.clear();
  if (with_target) {
    target_factors_.assign(set_.target_factor_count(), 0.0f);
    for (int f = 0; f < set_.target_factor_count(); ++f) {
      target_factors_[f] = static_cast<float>(point[agent_dims_ + f]);
    }
    targets_.push_back({target_factors_});
    input.targets = targets_;
  }
  const bool random = set_.selection().strategy != engine::Strategy::kHighest;
  if (!engine::Decide(
           set_, input,
           random ? engine::ExplainLevel::kFull : engine::ExplainLevel::kNone,
           &decision_)
           .ok()) {
    if (alive != nullptr) *alive = false;
    return -1;
  }
  if (alive != nullptr) {
    *alive = decision_.action == of;
    if (random) {
      for (const engine::CandidateTrace& c : decision_.candidates) {
        *alive |= c.action == of && c.probability > 0;
      }
    }
  }
  return decision_.action;
}

}  // namespace utilityd::analysis::internal
