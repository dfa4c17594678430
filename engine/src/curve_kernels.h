// Curve evaluation shared by the scalar path (EvaluateCurve, Decide) and
// the column paths (EvaluateCurveColumn, BatchDecider): one definition of
// each curve's arithmetic, so every path scores bit for bit alike.
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_CURVE_KERNELS_H_
#define UTILITYD_ENGINE_SRC_CURVE_KERNELS_H_

#include <cmath>
#include <cstdint>

#include "utilityd/engine/curve.h"

// Function multi-versioning for the column loops (GCC on x86-64; not under
// the sanitizers, whose runtimes start after ifunc resolvers run).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define UTILITYD_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define UTILITYD_VECTOR_CLONES
#endif

namespace utilityd::engine::internal {

inline float Clamp01(float x) {
  // Written so that NaN maps to 0.
  return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
}

// Polynomial exponents designers use most, computed without a pow call:
// PowerCase picks one, Power<case> computes it.
inline int PowerCase(float exponent) {
  return exponent == 2.0f   ? 0
         : exponent == 3.0f ? 1
         : exponent == 0.5f ? 2
         : exponent == 1.0f ? 3
                            : 4;
}
template <int kCase>
inline float Power(float x, float exponent) {
  if constexpr (kCase == 0) return x * x;
  if constexpr (kCase == 1) return x * x * x;
  if constexpr (kCase == 2) return std::sqrt(x);
  if constexpr (kCase == 3) return x;
  return std::pow(x, exponent);
}

// One curve kind at one point, before the final clamp and invert. The
// scalar and the column evaluations below both use exactly these, so a
// batch scores bit for bit as one agent at a time does.
template <CurveKind kKind>
inline float Shape(const CompiledCurve& curve, float x, const CurvePoint* p) {
  if constexpr (kKind == CurveKind::kLinear) {
    return curve.a * x + curve.b;
  } else if constexpr (kKind == CurveKind::kPolynomial) {
    switch (PowerCase(curve.a)) {
      case 0:
        return Power<0>(x, curve.a);
      case 1:
        return Power<1>(x, curve.a);
      case 2:
        return Power<2>(x, curve.a);
      case 3:
        return Power<3>(x, curve.a);
      default:
        return Power<4>(x, curve.a);
    }
  } else if constexpr (kKind == CurveKind::kInverseQuadratic) {
    return 1.0f - (1.0f - x) * (1.0f - x);
  } else if constexpr (kKind == CurveKind::kExponential) {
    return std::expm1(curve.a * x) * curve.b;
  } else if constexpr (kKind == CurveKind::kLogistic) {
    return (1.0f / (1.0f + std::exp(-curve.a * (x - curve.b))) - curve.c) *
           curve.d;
  } else if constexpr (kKind == CurveKind::kLogit) {
    // ln(0) = -inf and ln(inf) = +inf clamp to exact 0 and 1.
    return curve.b + std::log(x / (1.0f - x)) * curve.a;
  } else if constexpr (kKind == CurveKind::kNormal) {
    const float dx = x - curve.a;
    return std::exp(dx * dx * curve.b);
  } else if constexpr (kKind == CurveKind::kSine) {
    return std::sin(curve.a * x + curve.b);
  } else if constexpr (kKind == CurveKind::kSmoothstep) {
    return x * x * (3.0f - 2.0f * x);
  } else if constexpr (kKind == CurveKind::kStep) {
    return x >= curve.a ? 1.0f : 0.0f;
  } else {
    const uint32_t n = curve.point_count;
    if (x <= p[0].x) return static_cast<float>(p[0].y);
    if (x >= p[n - 1].x) return static_cast<float>(p[n - 1].y);
    uint32_t i = 1;
    while (x > p[i].x) ++i;
    const double t = (x - p[i - 1].x) / (p[i].x - p[i - 1].x);
    return static_cast<float>(p[i - 1].y + t * (p[i].y - p[i - 1].y));
  }
}

template <CurveKind kKind>
inline float Evaluate(const CompiledCurve& curve, float x,
                      const CurvePoint* points) {
  x = Clamp01(x);
  if constexpr (kKind == CurveKind::kLogistic) {
    if (curve.rescale) {
      // Exact ends, so that a rescaled logistic can veto at 0.
      if (x <= 0.0f) return curve.invert ? 1.0f : 0.0f;
      if (x >= 1.0f) return curve.invert ? 0.0f : 1.0f;
    }
  }
  const float y = Clamp01(Shape<kKind>(curve, x, points));
  return curve.invert ? 1.0f - y : y;
}

// Calls visit(shape) with a callable float -> float for `curve` such that
// Clamp01(shape(Clamp01(x))), inverted when curve.invert, equals
// EvaluateCurve(curve, x) bit for bit. Choices that are per curve (the
// kind, common exponents, the rescaled logistic's exact ends) are made here,
// once, so a loop over a column can call shape without dispatch.
template <typename Visit>
void DispatchShape(const CompiledCurve& curve, const CurvePoint* p,
                   Visit&& visit) {
  // A local copy: the loops may then keep its parameters in registers (a
  // reference could alias the column they write).
  const CompiledCurve c = curve;
  switch (c.kind) {
    case CurveKind::kPolynomial: {
      const float a = c.a;
      switch (PowerCase(a)) {
        case 0:
          return visit([a](float v) { return Power<0>(v, a); });
        case 1:
          return visit([a](float v) { return Power<1>(v, a); });
        case 2:
          return visit([a](float v) { return Power<2>(v, a); });
        case 3:
          return visit([a](float v) { return Power<3>(v, a); });
        default:
          return visit([a](float v) { return Power<4>(v, a); });
      }
    }
    case CurveKind::kLogistic:
      if (c.rescale) {
        // Evaluate's exact ends: 0 and 1 before the clamp and invert.
        return visit([c, p](float v) {
          return v <= 0.0f   ? 0.0f
                 : v >= 1.0f ? 1.0f
                             : Shape<CurveKind::kLogistic>(c, v, p);
        });
      }
      return visit(
          [c, p](float v) { return Shape<CurveKind::kLogistic>(c, v, p); });
#define UTILITYD_SHAPE(k) \
  case CurveKind::k:      \
    return visit([c, p](float v) { return Shape<CurveKind::k>(c, v, p); });
      UTILITYD_SHAPE(kLinear)
      UTILITYD_SHAPE(kInverseQuadratic)
      UTILITYD_SHAPE(kExponential)
      UTILITYD_SHAPE(kLogit)
      UTILITYD_SHAPE(kNormal)
      UTILITYD_SHAPE(kSine)
      UTILITYD_SHAPE(kSmoothstep)
      UTILITYD_SHAPE(kStep)
      UTILITYD_SHAPE(kPiecewiseLinear)
#undef UTILITYD_SHAPE
  }
}

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_CURVE_KERNELS_H_
