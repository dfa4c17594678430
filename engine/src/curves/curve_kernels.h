// Arithmetic helpers of the curve kinds (curve_kinds.h) and the column
// loops: the clamp, the polynomial's common powers, and function
// multi-versioning. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_CURVES_CURVE_KERNELS_H_
#define UTILITYD_ENGINE_SRC_CURVES_CURVE_KERNELS_H_

#include <cmath>
#include <cstdint>

#include "utilityd/engine/curve.h"
#include "utilityd/engine/scoring_rules.h"

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

// Polynomial exponents designers use most, computed without a pow call
// (the polynomial's float cases, curve_kinds.h): 0 for 2, 1 for 3, 2 for
// 0.5, 3 for 1 and 4, own maths, for any other.
inline int PowerCase(float exponent) {
  return exponent == 2.0f   ? 0
         : exponent == 3.0f ? 1
         : exponent == 0.5f ? 2
         : exponent == 1.0f ? 3
                            : 4;
}

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_CURVES_CURVE_KERNELS_H_
