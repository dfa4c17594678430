#include "model.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "utilityd/engine/curve.h"

namespace utilityd::analysis::internal {
namespace {

namespace e = engine;

float Clamp01(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

// Seed 003's per-consideration compensation, s + (1 - s)(1 - 1/n)s:
// increasing in s on 0..1.
double Compensate(double s, int n) {
  if (n <= 1) return s;
  return s + (1.0 - s) * (1.0 - 1.0 / n) * s;
}

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

Model::Model(const e::CompiledBehaviourSet& set) : set_(set) {
  for (int f = 0; f < set.factor_count(); ++f) {
    const e::FactorDefinition& d = set.factors()[f];
    dims_.push_back({d.name, d.min, d.max, false, f});
  }
  agent_dims_ = static_cast<int>(dims_.size());
  if (set.has_per_target_actions()) {
    for (int f = 0; f < set.target_factor_count(); ++f) {
      const e::FactorDefinition& d = set.target_factors()[f];
      dims_.push_back({"target." + d.name, d.min, d.max, true, f});
    }
  }
  // Once, not per evaluation: each consideration's action's count, and
  // which dimensions anything reads.
  siblings_.resize(set.considerations().size());
  for (const e::CompiledAction& a : set.actions()) {
    for (uint32_t k = 0; k < a.consideration_count; ++k) {
      siblings_[a.first_consideration + k] =
          static_cast<int>(a.consideration_count);
    }
  }
  read_.assign(dims_.size(), false);
  for (int c = 0; c < static_cast<int>(set.considerations().size()); ++c) {
    const int d = DimOf(c);
    if (d < static_cast<int>(read_.size())) read_[d] = true;
  }
}

int Model::DimOf(int c) const {
  const e::CompiledConsideration& cc = set_.considerations()[c];
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

double Model::Term(int c, double raw) const {
  const e::CompiledConsideration& cc = set_.considerations()[c];
  const float n =
      Clamp01((static_cast<float>(raw) - cc.range_lo) / cc.range_span);
  const float y = e::EvaluateCurve(cc.curve, n, set_.curve_points());
  const float out = cc.output_min + cc.output_span * y;
  if (set_.aggregation() == e::Aggregation::kWeightedSum) return out;
  const float s = out * cc.weight + (1.0f - cc.weight);
  if (set_.compensation() != e::Compensation::kPerConsideration) return s;
  return Compensate(s, siblings_[c]);
}

void CurveBreakpoints(const e::CompiledConsideration& cc,
                      absl::Span<const e::CurvePoint> points, double a,
                      double b, std::vector<double>* out) {
  const double lo_raw = std::min(a, b), hi_raw = std::max(a, b);
  auto add_normalised = [&](double x) {
    if (!(x >= 0 && x <= 1)) return;
    const double raw = cc.range_lo + x * static_cast<double>(cc.range_span);
    if (raw > lo_raw && raw < hi_raw) out->push_back(raw);
  };
  add_normalised(0);  // the bookends: the curve is flat beyond them
  add_normalised(1);
  const e::CompiledCurve& k = cc.curve;
  switch (k.kind) {
    case e::CurveKind::kNormal:
      add_normalised(k.a);
      break;
    case e::CurveKind::kStep:
      add_normalised(k.a);
      break;
    case e::CurveKind::kPiecewiseLinear:
      for (uint32_t p = 0; p < k.point_count; ++p) {
        add_normalised(points[k.first_point + p].x);
      }
      break;
    case e::CurveKind::kSine: {
      // sin(a x + b) turns where a x + b = pi/2 + j pi; two consecutive
      // turns inside give both a peak and a trough.
      const double pi = std::numbers::pi;
      const double n0 =
          Clamp01((static_cast<float>(lo_raw) - cc.range_lo) / cc.range_span);
      const double n1 =
          Clamp01((static_cast<float>(hi_raw) - cc.range_lo) / cc.range_span);
      const double u = std::min(n0, n1), v = std::max(n0, n1);
      if (k.a == 0) break;
      double j = std::ceil((k.a * std::min(u, v) + k.b - pi / 2) / pi);
      for (int taken = 0; taken < 2; ++taken, j += 1) {
        const double x = (pi / 2 + j * pi - k.b) / k.a;
        if (x > v || x < u) break;
        add_normalised(x);
      }
      break;
    }
    default:
      break;  // monotone on 0..1
  }
}

void Model::Breakpoints(int c, double a, double b,
                        std::vector<double>* out) const {
  CurveBreakpoints(set_.considerations()[c], set_.curve_points(), a, b, out);
}

float PathCondition::Output(double raw) const {
  const float n =
      Clamp01((static_cast<float>(raw) - cc->range_lo) / cc->range_span);
  return e::EvaluateCurve(cc->curve, n, points);
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
  const e::CompiledAction& act = set_.actions()[a];
  const int n = static_cast<int>(act.consideration_count);
  Range r{1, 1};
  double weights = 0;
  if (set_.aggregation() == e::Aggregation::kWeightedSum) r = {0, 0};
  for (int k = 0; k < n; ++k) {
    const int c = static_cast<int>(act.first_consideration) + k;
    const int d = DimOf(c);
    const Range t = TermRange(c, box.lo[d], box.hi[d]);
    switch (set_.aggregation()) {
      case e::Aggregation::kProduct:
        r.lo *= t.lo;
        r.hi *= t.hi;
        break;
      case e::Aggregation::kMin:
        r.lo = k == 0 ? t.lo : std::min(r.lo, t.lo);
        r.hi = k == 0 ? t.hi : std::min(r.hi, t.hi);
        break;
      case e::Aggregation::kWeightedSum: {
        const double w = set_.considerations()[c].weight;
        r.lo += w * t.lo;
        r.hi += w * t.hi;
        weights += w;
        break;
      }
    }
  }
  if (set_.aggregation() == e::Aggregation::kWeightedSum) {
    r = weights > 0 ? Range{r.lo / weights, r.hi / weights} : Range{1, 1};
  }
  if (set_.compensation() == e::Compensation::kOnProduct) {
    r = {Compensate(r.lo, n), Compensate(r.hi, n)};
  } else if (set_.compensation() == e::Compensation::kGeometricMean) {
    const double exponent = 1.0 / std::max(1.0, n * 0.5);
    r = {std::pow(r.lo, exponent), std::pow(r.hi, exponent)};
  }
  double factor = act.weight;
  if (current) factor *= 1.0 + set_.selection().commitment_bonus;
  return {r.lo * factor, r.hi * factor};
}

int Model::Winner(const std::vector<double>& point, bool with_target,
                  int current, int of, bool* alive) const {
  factors_.assign(agent_dims_, 0.0f);
  for (int d = 0; d < agent_dims_; ++d)
    factors_[d] = static_cast<float>(point[d]);
  e::AgentInput input;
  input.factors = factors_;
  input.current_action = current;
  input.current_target = e::kAnyTarget;
  targets_.clear();
  if (with_target) {
    target_factors_.assign(set_.target_factor_count(), 0.0f);
    for (int f = 0; f < set_.target_factor_count(); ++f) {
      target_factors_[f] = static_cast<float>(point[agent_dims_ + f]);
    }
    targets_.push_back({target_factors_});
    input.targets = targets_;
  }
  const bool random = set_.selection().strategy != e::Strategy::kHighest;
  if (!e::Decide(set_, input,
                 random ? e::ExplainLevel::kFull : e::ExplainLevel::kNone,
                 &decision_)
           .ok()) {
    if (alive != nullptr) *alive = false;
    return -1;
  }
  if (alive != nullptr) {
    *alive = decision_.action == of;
    if (random) {
      for (const e::CandidateTrace& c : decision_.candidates) {
        *alive |= c.action == of && c.probability > 0;
      }
    }
  }
  return decision_.action;
}

}  // namespace utilityd::analysis::internal
