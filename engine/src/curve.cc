#include "utilityd/engine/curve.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "curve_kernels.h"

namespace utilityd::engine {
namespace {

double Logistic(double x, double steepness, double midpoint) {
  return 1.0 / (1.0 + std::exp(-steepness * (x - midpoint)));
}

}  // namespace

const char* CurveKindName(CurveKind kind) {
  switch (kind) {
    case CurveKind::kLinear:
      return "linear";
    case CurveKind::kPolynomial:
      return "polynomial";
    case CurveKind::kInverseQuadratic:
      return "inverse_quadratic";
    case CurveKind::kExponential:
      return "exponential";
    case CurveKind::kLogistic:
      return "logistic";
    case CurveKind::kLogit:
      return "logit";
    case CurveKind::kNormal:
      return "normal";
    case CurveKind::kSine:
      return "sine";
    case CurveKind::kSmoothstep:
      return "smoothstep";
    case CurveKind::kStep:
      return "step";
    case CurveKind::kPiecewiseLinear:
      return "piecewise_linear";
  }
  return "unknown";
}

CompiledCurve CompileCurve(const CurveDefinition& def,
                           std::vector<CurvePoint>* points) {
  CompiledCurve c;
  c.kind = def.kind;
  c.invert = def.invert;
  switch (def.kind) {
    case CurveKind::kLinear:
      c.a = static_cast<float>(def.slope);
      c.b = static_cast<float>(def.intercept);
      break;
    case CurveKind::kPolynomial:
      c.a = static_cast<float>(def.exponent);
      break;
    case CurveKind::kExponential:
      c.a = static_cast<float>(def.k);
      c.b = static_cast<float>(1.0 / std::expm1(def.k));
      break;
    case CurveKind::kLogistic: {
      c.a = static_cast<float>(def.steepness);
      c.b = static_cast<float>(def.midpoint);
      c.rescale = def.rescale;
      if (def.rescale) {
        const double l0 = Logistic(0.0, def.steepness, def.midpoint);
        const double l1 = Logistic(1.0, def.steepness, def.midpoint);
        c.c = static_cast<float>(l0);
        c.d = static_cast<float>(1.0 / (l1 - l0));
      } else {
        c.c = 0;
        c.d = 1;
      }
      break;
    }
    case CurveKind::kLogit:
      c.a = static_cast<float>(1.0 / def.steepness);
      c.b = static_cast<float>(def.midpoint);
      break;
    case CurveKind::kNormal:
      c.a = static_cast<float>(def.mean);
      c.b = static_cast<float>(-1.0 / (2.0 * def.stddev * def.stddev));
      break;
    case CurveKind::kSine:
      c.a = static_cast<float>(2.0 * std::numbers::pi * def.frequency);
      c.b = static_cast<float>(2.0 * std::numbers::pi * def.phase);
      break;
    case CurveKind::kStep:
      c.a = static_cast<float>(def.threshold);
      break;
    case CurveKind::kPiecewiseLinear:
      c.first_point = static_cast<uint32_t>(points->size());
      c.point_count = static_cast<uint32_t>(def.points.size());
      points->insert(points->end(), def.points.begin(), def.points.end());
      break;
    case CurveKind::kInverseQuadratic:
    case CurveKind::kSmoothstep:
      break;
  }
  return c;
}

#define UTILITYD_CURVE_KINDS(X) \
  X(kLinear)                    \
  X(kPolynomial)                \
  X(kInverseQuadratic)          \
  X(kExponential)               \
  X(kLogistic)                  \
  X(kLogit) X(kNormal) X(kSine) X(kSmoothstep) X(kStep) X(kPiecewiseLinear)

float EvaluateCurve(const CompiledCurve& curve, float x,
                    absl::Span<const CurvePoint> points) {
  const CurvePoint* p = points.data() + curve.first_point;
  switch (curve.kind) {
#define UTILITYD_CASE(k) \
  case CurveKind::k:     \
    return internal::Evaluate<CurveKind::k>(curve, x, p);
    UTILITYD_CURVE_KINDS(UTILITYD_CASE)
#undef UTILITYD_CASE
  }
  return 0.0f;
}

// Built twice: for AVX2 (8 floats a step) and for any x86-64; the loader
// picks at start-up. Neither uses FMA, so both round alike.
UTILITYD_VECTOR_CLONES
void EvaluateCurveColumn(const CompiledCurve& curve, const float* x, float* y,
                         size_t n, absl::Span<const CurvePoint> points) {
  const CurvePoint* p = points.data() + curve.first_point;
  internal::DispatchShape(curve, p, [&](auto shape) {
    if (curve.invert) {
      for (size_t i = 0; i < n; ++i)
        y[i] = 1.0f - internal::Clamp01(shape(internal::Clamp01(x[i])));
    } else {
      for (size_t i = 0; i < n; ++i)
        y[i] = internal::Clamp01(shape(internal::Clamp01(x[i])));
    }
  });
}

#undef UTILITYD_CURVE_KINDS

void ValidateCurve(const CurveDefinition& def, const std::string& path,
                   std::vector<ValidationIssue>* issues) {
  const std::string kind = CurveKindName(def.kind);
  auto bad = [&](const std::string& field, std::string message) {
    issues->push_back(
        {absl::StrCat(path, ".", kind, ".", field), std::move(message)});
  };
  auto finite = [&](const char* field, double v) {
    if (!IsFiniteFloat(v)) {
      bad(field,
          absl::StrCat("must be a finite number within ±3.4e38, got ", v));
    }
    return IsFiniteFloat(v);
  };
  switch (def.kind) {
    case CurveKind::kLinear:
      finite("slope", def.slope);
      finite("intercept", def.intercept);
      break;
    case CurveKind::kPolynomial:
      if (finite("exponent", def.exponent) && def.exponent <= 0) {
        bad("exponent", absl::StrCat("must be > 0, got ", def.exponent,
                                     " (use invert for a falling curve)"));
      }
      break;
    case CurveKind::kExponential:
      if (finite("k", def.k)) {
        if (def.k == 0) {
          bad("k", "must not be 0 (use a linear curve)");
        } else if (std::abs(def.k) > 80) {
          bad("k", absl::StrCat("must be within -80..80, got ", def.k));
        }
      }
      break;
    case CurveKind::kLogistic:
    case CurveKind::kLogit:
      if (finite("steepness", def.steepness)) {
        if (def.steepness <= 0) {
          bad("steepness", absl::StrCat("must be > 0, got ", def.steepness,
                                        " (use invert for a falling curve)"));
        } else if (def.steepness > 1000) {
          bad("steepness",
              absl::StrCat("must be at most 1000, got ", def.steepness,
                           " (use a step curve for a hard threshold)"));
        }
      }
      finite("midpoint", def.midpoint);
      break;
    case CurveKind::kNormal:
      finite("mean", def.mean);
      if (finite("stddev", def.stddev) && def.stddev <= 0) {
        bad("stddev", absl::StrCat("must be > 0, got ", def.stddev));
      }
      break;
    case CurveKind::kSine:
      if (finite("frequency", def.frequency) && def.frequency <= 0) {
        bad("frequency", absl::StrCat("must be > 0, got ", def.frequency));
      }
      finite("phase", def.phase);
      break;
    case CurveKind::kStep:
      if (finite("threshold", def.threshold) &&
          (def.threshold < 0 || def.threshold > 1)) {
        bad("threshold",
            absl::StrCat("must be within 0..1 (a normalised input), got ",
                         def.threshold));
      }
      break;
    case CurveKind::kPiecewiseLinear: {
      const auto& pts = def.points;
      if (pts.size() < 2) {
        bad("points",
            absl::StrCat("needs at least 2 points, got ", pts.size()));
      } else if (pts.size() > static_cast<size_t>(kMaxCurvePoints)) {
        bad("points", absl::StrCat("at most ", kMaxCurvePoints, " points, got ",
                                   pts.size()));
      }
      for (size_t i = 0; i < pts.size(); ++i) {
        const std::string at = absl::StrCat("points[", i, "]");
        if (!(pts[i].x >= 0 && pts[i].x <= 1) ||
            !(pts[i].y >= 0 && pts[i].y <= 1)) {
          bad(at, absl::StrCat("x and y must be within 0..1, got (", pts[i].x,
                               ", ", pts[i].y, ")"));
        }
        if (i > 0 && !(pts[i].x > pts[i - 1].x)) {
          bad(at, absl::StrCat("x must increase strictly: ", pts[i].x,
                               " follows ", pts[i - 1].x));
        }
      }
      break;
    }
    case CurveKind::kInverseQuadratic:
    case CurveKind::kSmoothstep:
      break;
  }
}

}  // namespace utilityd::engine
