#include "bench/baseline_engine.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace utilityd::baseline {
namespace {

float Clamp01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

class Linear : public ResponseCurve {
 public:
  Linear(float slope, float intercept) : m_(slope), b_(intercept) {}
  float Evaluate(float x) const override { return m_ * x + b_; }

 private:
  float m_, b_;
};

class Polynomial : public ResponseCurve {
 public:
  explicit Polynomial(float exponent) : k_(exponent) {}
  float Evaluate(float x) const override {
    // As the engine documents: common exponents without a pow call.
    if (k_ == 2.0f) return x * x;
    if (k_ == 3.0f) return x * x * x;
    if (k_ == 0.5f) return std::sqrt(x);
    if (k_ == 1.0f) return x;
    return std::pow(x, k_);
  }

 private:
  float k_;
};

class InverseQuadratic : public ResponseCurve {
 public:
  float Evaluate(float x) const override {
    return 1.0f - (1.0f - x) * (1.0f - x);
  }
};

class Exponential : public ResponseCurve {
 public:
  explicit Exponential(double k)
      : k_(static_cast<float>(k)),
        scale_(static_cast<float>(1.0 / std::expm1(k))) {}
  float Evaluate(float x) const override { return std::expm1(k_ * x) * scale_; }

 private:
  float k_, scale_;
};

double LogisticAt(double x, double steepness, double midpoint) {
  return 1.0 / (1.0 + std::exp(-steepness * (x - midpoint)));
}

class Logistic : public ResponseCurve {
 public:
  Logistic(double steepness, double midpoint, bool rescale)
      : k_(static_cast<float>(steepness)),
        m_(static_cast<float>(midpoint)),
        rescale_(rescale) {
    if (rescale) {
      const double l0 = LogisticAt(0.0, steepness, midpoint);
      const double l1 = LogisticAt(1.0, steepness, midpoint);
      lo_ = static_cast<float>(l0);
      scale_ = static_cast<float>(1.0 / (l1 - l0));
    }
  }
  float Evaluate(float x) const override {
    if (rescale_ && x <= 0.0f) return 0.0f;
    if (rescale_ && x >= 1.0f) return 1.0f;
    return (1.0f / (1.0f + std::exp(-k_ * (x - m_))) - lo_) * scale_;
  }

 private:
  float k_, m_;
  bool rescale_;
  float lo_ = 0, scale_ = 1;
};

class Logit : public ResponseCurve {
 public:
  Logit(double steepness, double midpoint)
      : inv_k_(static_cast<float>(1.0 / steepness)),
        m_(static_cast<float>(midpoint)) {}
  float Evaluate(float x) const override {
    return m_ + std::log(x / (1.0f - x)) * inv_k_;
  }

 private:
  float inv_k_, m_;
};

class Normal : public ResponseCurve {
 public:
  Normal(double mean, double stddev)
      : mean_(static_cast<float>(mean)),
        k_(static_cast<float>(-1.0 / (2.0 * stddev * stddev))) {}
  float Evaluate(float x) const override {
    const float dx = x - mean_;
    return std::exp(dx * dx * k_);
  }

 private:
  float mean_, k_;
};

class Sine : public ResponseCurve {
 public:
  Sine(double frequency, double phase)
      : w_(static_cast<float>(2.0 * std::numbers::pi * frequency)),
        p_(static_cast<float>(2.0 * std::numbers::pi * phase)) {}
  float Evaluate(float x) const override { return std::sin(w_ * x + p_); }

 private:
  float w_, p_;
};

class Smoothstep : public ResponseCurve {
 public:
  float Evaluate(float x) const override { return x * x * (3.0f - 2.0f * x); }
};

class Step : public ResponseCurve {
 public:
  explicit Step(double threshold) : t_(static_cast<float>(threshold)) {}
  float Evaluate(float x) const override { return x >= t_ ? 1.0f : 0.0f; }

 private:
  float t_;
};

class Piecewise : public ResponseCurve {
 public:
  explicit Piecewise(std::vector<engine::CurvePoint> points)
      : p_(std::move(points)) {}
  float Evaluate(float x) const override {
    if (x <= p_.front().x) return static_cast<float>(p_.front().y);
    if (x >= p_.back().x) return static_cast<float>(p_.back().y);
    size_t i = 1;
    while (x > p_[i].x) ++i;
    const double t = (x - p_[i - 1].x) / (p_[i].x - p_[i - 1].x);
    return static_cast<float>(p_[i - 1].y + t * (p_[i].y - p_[i - 1].y));
  }

 private:
  std::vector<engine::CurvePoint> p_;
};

std::unique_ptr<ResponseCurve> MakeCurve(const engine::CurveDefinition& d) {
  using engine::CurveKind;
  switch (d.kind) {
    case CurveKind::kLinear:
      return std::make_unique<Linear>(static_cast<float>(d.slope),
                                      static_cast<float>(d.intercept));
    case CurveKind::kPolynomial:
      return std::make_unique<Polynomial>(static_cast<float>(d.exponent));
    case CurveKind::kInverseQuadratic:
      return std::make_unique<InverseQuadratic>();
    case CurveKind::kExponential:
      return std::make_unique<Exponential>(d.k);
    case CurveKind::kLogistic:
      return std::make_unique<Logistic>(d.steepness, d.midpoint, d.rescale);
    case CurveKind::kLogit:
      return std::make_unique<Logit>(d.steepness, d.midpoint);
    case CurveKind::kNormal:
      return std::make_unique<Normal>(d.mean, d.stddev);
    case CurveKind::kSine:
      return std::make_unique<Sine>(d.frequency, d.phase);
    case CurveKind::kSmoothstep:
      return std::make_unique<Smoothstep>();
    case CurveKind::kStep:
      return std::make_unique<Step>(d.threshold);
    case CurveKind::kPiecewiseLinear:
      return std::make_unique<Piecewise>(d.points);
  }
  return nullptr;
}

float Compensate(float s, int n) {
  const float mod = 1.0f - 1.0f / static_cast<float>(n);
  return s + (1.0f - s) * mod * s;
}

}  // namespace

struct Reasoner::Consideration {
  std::string factor;
  bool per_target = false;
  float lo = 0, span = 1;
  std::unique_ptr<ResponseCurve> curve;
  bool invert = false;
  float out_min = 0, out_span = 1, weight = 1;
};

struct Reasoner::Action {
  std::string name;
  float weight = 1;
  int rank = 0;
  float cooldown = 0;
  bool per_target = false;
  std::vector<Consideration> considerations;
};

Reasoner::Reasoner(const engine::SetDefinition& set)
    : aggregation_(set.aggregation),
      compensation_(set.compensation == engine::Compensation::kDefault
                        ? engine::Compensation::kPerConsideration
                        : set.compensation),
      commitment_bonus_(static_cast<float>(set.selection.commitment_bonus)),
      min_score_(static_cast<float>(set.selection.min_score)),
      fallback_(set.selection.fallback_action) {
  auto factor = [&](const engine::ConsiderationDefinition& c) {
    for (const auto& f : c.per_target ? set.target_factors : set.factors)
      if (f.name == c.factor) return f;
    return engine::FactorDefinition{};
  };
  for (const engine::ActionDefinition& a : set.actions) {
    Action action{.name = a.name,
                  .weight = static_cast<float>(a.weight),
                  .rank = a.rank,
                  .cooldown = static_cast<float>(a.cooldown_seconds),
                  .per_target = a.per_target};
    for (const engine::ConsiderationDefinition& c : a.considerations) {
      const engine::FactorDefinition f = factor(c);
      const double lo = c.range_min.value_or(f.min);
      const double hi = c.range_max.value_or(f.max);
      action.considerations.push_back(
          {.factor = c.factor,
           .per_target = c.per_target,
           .lo = static_cast<float>(lo),
           .span = static_cast<float>(hi - lo),
           .curve = MakeCurve(c.curve),
           .invert = c.curve.invert,
           .out_min = static_cast<float>(c.output_min),
           .out_span = static_cast<float>(c.output_max - c.output_min),
           .weight = static_cast<float>(c.weight)});
    }
    actions_.push_back(std::move(action));
  }
  switch (aggregation_) {
    case engine::Aggregation::kProduct:
      aggregate_ = [](const std::vector<float>& v) {
        float p = 1.0f;
        for (float x : v) p *= x;
        return p;
      };
      break;
    case engine::Aggregation::kMin:
      aggregate_ = [](const std::vector<float>& v) {
        float m = 1.0f;
        for (float x : v) m = std::min(m, x);
        return m;
      };
      break;
    case engine::Aggregation::kWeightedSum:
      aggregate_ = [](const std::vector<float>& v) {
        float s = 0.0f;
        for (float x : v) s += x;
        return s;
      };
      break;
  }
}

Reasoner::~Reasoner() = default;

// Scores one action (for one target); 0 when vetoed.
float Reasoner::Score(const Action& action, const Snapshot& agent,
                      const Target* target) const {
  const int n = static_cast<int>(action.considerations.size());
  // Reused: the baseline is straightforward, not wasteful (it does not
  // allocate per candidate).
  thread_local std::vector<float> contributions;
  contributions.clear();
  float weight_sum = 0;
  for (const Consideration& c : action.considerations) {
    const FactorMap& source = c.per_target ? target->factors : agent.factors;
    const float raw = source.at(c.factor);  // looked up by name, every time
    if (!std::isfinite(raw)) return 0.0f;
    const float x = Clamp01((raw - c.lo) / c.span);
    float y = Clamp01(c.curve->Evaluate(Clamp01(x)));
    if (c.invert) y = 1.0f - y;
    const float output = c.out_min + c.out_span * y;
    float contribution;
    if (aggregation_ == engine::Aggregation::kWeightedSum) {
      contribution = output * c.weight;
      weight_sum += c.weight;
    } else {
      contribution = output * c.weight + (1.0f - c.weight);
      if (compensation_ == engine::Compensation::kPerConsideration && n > 1 &&
          aggregation_ == engine::Aggregation::kProduct) {
        contribution = Compensate(contribution, n);
      }
      if (contribution == 0.0f) return 0.0f;  // veto
    }
    contributions.push_back(contribution);
  }
  float combined = aggregate_(contributions);
  if (aggregation_ == engine::Aggregation::kWeightedSum) {
    combined = weight_sum > 0 ? combined / weight_sum : 1.0f;
  } else if (compensation_ == engine::Compensation::kOnProduct && n > 0) {
    combined = Compensate(combined, n);
  } else if (compensation_ == engine::Compensation::kGeometricMean) {
    combined =
        std::pow(combined, 1.0f / std::max(1.0f, static_cast<float>(n) * 0.5f));
  }
  float score = combined * action.weight;
  if (action.cooldown > 0) {
    const auto it = agent.seconds_since_action.find(action.name);
    if (it != agent.seconds_since_action.end() && it->second < action.cooldown)
      score *= std::max(0.0f, it->second) / action.cooldown;
  }
  if (action.name == agent.current_action) score *= 1.0f + commitment_bonus_;
  return score;
}

Choice Reasoner::Decide(const Snapshot& agent) const {
  struct Scored {
    const Action* action;
    const Target* target;
    float score;
  };
  thread_local std::vector<Scored> scored;  // reused, as above
  scored.clear();
  for (const Action& a : actions_) {
    if (!a.per_target) {
      scored.push_back({&a, nullptr, Score(a, agent, nullptr)});
      continue;
    }
    for (const Target& t : agent.targets)
      scored.push_back({&a, &t, Score(a, agent, &t)});
  }
  const Scored* best = nullptr;
  for (const Scored& s : scored) {
    if (!(s.score > 0.0f) || s.score < min_score_) continue;
    if (best == nullptr || s.action->rank > best->action->rank) {
      best = &s;
      continue;
    }
    if (s.action->rank < best->action->rank) continue;
    if (s.score > best->score ||
        (s.score == best->score && s.action->name == agent.current_action &&
         best->action->name != agent.current_action)) {
      best = &s;
    }
  }
  if (best == nullptr) return {fallback_, "", 0.0f};
  return {best->action->name, best->target ? best->target->id : "",
          best->score};
}

}  // namespace utilityd::baseline
