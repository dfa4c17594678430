// Arithmetic helpers of the curve kinds (curve_kinds.h) and the column
// loops: the clamp, common powers without pow, and function
// multi-versioning. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_CURVES_CURVE_KERNELS_H_
#define UTILITYD_ENGINE_SRC_CURVES_CURVE_KERNELS_H_

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

// EvaluateCurveColumn for curves of plain arithmetic (not own maths).
void ArithmeticColumn(const CompiledCurve& curve, const float* x, float* y,
                      size_t n, absl::Span<const CurvePoint> points);

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
// Case 4, any other exponent, is own maths (curve_math.h), called by the
// polynomial's Shape.
template <int kCase>
inline float Power(float x, float) {
  static_assert(kCase < 4);
  if constexpr (kCase == 0) return x * x;
  if constexpr (kCase == 1) return x * x * x;
  if constexpr (kCase == 2) return std::sqrt(x);
  return x;
}

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_CURVES_CURVE_KERNELS_H_
