#include "utilityd/engine/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "curves/curve_kinds.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {
namespace {

// Floats in value order as integers: adjacent floats are adjacent integers
// (both zeros are 0), so bisection can halve the floats between two values.
int64_t Ordinal(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if (bits & 0x80000000u) return -static_cast<int64_t>(bits & 0x7fffffffu);
  return bits;
}

float FromOrdinal(int64_t o) {
  const uint32_t bits = o < 0 ? (0x80000000u | static_cast<uint32_t>(-o))
                              : static_cast<uint32_t>(o);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

absl::Status SensitivityAnalyser::Analyse(const CompiledBehaviourSet& set,
                                          const AgentInput& input,
                                          std::vector<FactorSensitivity>* out) {
  out->clear();
  if (set.tree() != nullptr) {
    return absl::FailedPreconditionError(
        "sensitivity is for sets without a behaviour tree");
  }
  inputs_.assign(1, input);
  out_.resize(1);
  std::vector<absl::Status> errors;
  decider_.Decide(set, inputs_, ExplainLevel::kNone, absl::MakeSpan(out_),
                  &errors);
  if (!errors[0].ok()) return errors[0];
  const Winner now{out_[0].action, out_[0].target};

  auto analyse = [&](const Varied& varied, float current,
                     const FactorDefinition& def) {
    FactorSensitivity& s = out->emplace_back();
    s.factor = varied.factor;
    s.target_factor = varied.target_factor;
    s.target = varied.target;
    s.current = current;
    // The scanned range and the breakpoints, in the factor's unit.
    double lo = std::min(def.min, def.max), hi = std::max(def.min, def.max);
    std::vector<double>& t = curve_breakpoints_;
    breakpoints_.clear();
    bool read = false;
    for (const CompiledConsideration& c : set.considerations()) {
      if (c.per_target != varied.target_factor || c.factor != varied.factor ||
          c.range_span == 0 || !std::isfinite(c.range_span)) {
        continue;
      }
      read = true;
      t.clear();
      CurveBreakpoints(c.curve, set.curve_points(), 0, 1, &t);
      const double span = c.range_span;
      for (double x : t) {
        if (!(x >= 0 && x <= 1)) continue;
        const double raw = c.range_lo + x * span;
        const float at = static_cast<float>(raw);
        breakpoints_.push_back(at);
        // Bookends beyond the declared range widen it; ones that are the
        // declared bounds as floats leave them exactly as declared.
        if (x == 0 || x == 1) {
          if (at < static_cast<float>(lo)) lo = raw;
          if (at > static_cast<float>(hi)) hi = raw;
        }
      }
    }
    s.range_min = static_cast<float>(lo);
    s.range_max = static_cast<float>(hi);
    if (!read || !std::isfinite(current)) return;
    s.below =
        Search(set, input, varied, current, s.range_min, -1, now, breakpoints_);
    s.above =
        Search(set, input, varied, current, s.range_max, +1, now, breakpoints_);
  };

  for (int f = 0; f < set.factor_count(); ++f) {
    analyse(Varied{false, f, -1}, input.factors[f], set.factors()[f]);
  }
  if (now.target >= 0) {
    const TargetInput& target = input.targets[now.target];
    for (int f = 0; f < set.target_factor_count(); ++f) {
      analyse(Varied{true, f, now.target}, target.factors[f],
              set.target_factors()[f]);
    }
  }
  return absl::OkStatus();
}

void SensitivityAnalyser::Winners(const CompiledBehaviourSet& set,
                                  const AgentInput& input, const Varied& varied,
                                  absl::Span<const float> values,
                                  std::vector<Winner>* winners) {
  const size_t n = values.size();
  inputs_.assign(n, input);
  if (!varied.target_factor) {
    const size_t width = input.factors.size();
    agent_values_.resize(n * width);
    for (size_t k = 0; k < n; ++k) {
      float* row = agent_values_.data() + k * width;
      std::copy(input.factors.begin(), input.factors.end(), row);
      row[varied.factor] = values[k];
      inputs_[k].factors = absl::MakeConstSpan(row, width);
    }
  } else {
    // Each value gets its own copy of the targets; only the varied target's
    // factors are copied, the others still point into the input.
    const size_t count = input.targets.size();
    const absl::Span<const float> base = input.targets[varied.target].factors;
    targets_.resize(n * count);
    target_values_.resize(n * base.size());
    for (size_t k = 0; k < n; ++k) {
      float* row = target_values_.data() + k * base.size();
      std::copy(base.begin(), base.end(), row);
      row[varied.factor] = values[k];
      TargetInput* targets = targets_.data() + k * count;
      std::copy(input.targets.begin(), input.targets.end(), targets);
      targets[varied.target].factors = absl::MakeConstSpan(row, base.size());
      inputs_[k].targets = absl::MakeConstSpan(targets, count);
    }
  }
  out_.resize(n);
  decider_.DecideChecked(set, inputs_, ExplainLevel::kNone,
                         absl::MakeSpan(out_));
  winners->resize(n);
  for (size_t k = 0; k < n; ++k) {
    (*winners)[k] = Winner{out_[k].action, out_[k].target};
  }
}

Crossing SensitivityAnalyser::Search(const CompiledBehaviourSet& set,
                                     const AgentInput& input,
                                     const Varied& varied, float from,
                                     float edge, int direction, Winner now,
                                     absl::Span<const float> breakpoints) {
  Crossing crossing;
  const bool up = edge > from;
  if (up != (direction > 0) || edge == from) return crossing;  // nothing there
  auto between = [&](float v) {
    return up ? (v > from && v <= edge) : (v < from && v >= edge);
  };
  // The scan: evenly spaced values, the breakpoints and the float just past
  // each, nearest first.
  samples_.clear();
  for (int k = 1; k <= kScanSteps; ++k) {
    const double v =
        k == kScanSteps
            ? edge
            : from + (static_cast<double>(edge) - from) * k / kScanSteps;
    samples_.push_back(static_cast<float>(v));
  }
  for (float b : breakpoints) {
    samples_.push_back(b);
    samples_.push_back(std::nextafter(b, edge));
  }
  std::erase_if(samples_, [&](float v) { return !between(v); });
  if (up) {
    std::sort(samples_.begin(), samples_.end());
  } else {
    std::sort(samples_.begin(), samples_.end(), std::greater<float>());
  }
  samples_.erase(std::unique(samples_.begin(), samples_.end()), samples_.end());
  Winners(set, input, varied, samples_, &winners_);
  size_t first = 0;
  while (first < samples_.size() && winners_[first] == now) ++first;
  if (first == samples_.size()) return crossing;

  // Bisection: `same` keeps the winner, `changed` does not; they end as
  // adjacent floats.
  int64_t same = Ordinal(first == 0 ? from : samples_[first - 1]);
  int64_t changed = Ordinal(samples_[first]);
  Winner there = winners_[first];
  float probe[1];
  while (changed - same > 1 || same - changed > 1) {
    const int64_t mid = same + (changed - same) / 2;
    probe[0] = FromOrdinal(mid);
    Winners(set, input, varied, probe, &winners_);
    if (winners_[0] == now) {
      same = mid;
    } else {
      changed = mid;
      there = winners_[0];
    }
  }
  crossing.found = true;
  crossing.value = FromOrdinal(changed);
  crossing.action = there.action;
  crossing.target = there.target;
  return crossing;
}

}  // namespace utilityd::engine
