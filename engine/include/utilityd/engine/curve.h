// Response curves in compiled form: a kind and a few precomputed constants,
// evaluated on a normalised input. Every output is clamped to 0..1.
//
//   CurveDefinition def{.kind = CurveKind::kLogistic, .rescale = true};
//   std::vector<CurvePoint> points;  // shared table for piecewise curves
//   CompiledCurve curve = CompileCurve(def, &points);
//   float y = EvaluateCurve(curve, 0.25f, points);   // in 0..1
//
// Formulas (x is the normalised input, clamped to 0..1 first):
//   linear            slope*x + intercept
//   polynomial        x^exponent
//   inverse_quadratic 1 - (1-x)^2
//   exponential       (e^(kx) - 1) / (e^k - 1)
//   logistic          1 / (1 + e^(-s(x-m))); rescaled: (L(x)-L(0))/(L(1)-L(0))
//   logit             m + ln(x/(1-x)) / s      (the logistic's inverse)
//   normal            e^(-(x-mean)^2 / (2 stddev^2))
//   sine              sin(2 pi (frequency x + phase))
//   smoothstep        3x^2 - 2x^3
//   step              x >= threshold ? 1 : 0
//   piecewise_linear  linear interpolation between points
// then `invert` gives 1 - f(x).
#ifndef UTILITYD_ENGINE_CURVE_H_
#define UTILITYD_ENGINE_CURVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/engine/definition.h"

namespace utilityd::engine {

// A curve ready to evaluate. Parameters a..d mean, by kind:
//   linear: a=slope b=intercept; polynomial: a=exponent;
//   exponential: a=k b=1/(e^k-1); logistic: a=steepness b=midpoint
//   c=L(0) d=1/(L(1)-L(0)) (c=0, d=1 unless rescaled); logit: a=1/steepness
//   b=midpoint; normal: a=mean b=-1/(2 stddev^2); sine: a=2pi*frequency
//   b=2pi*phase; step: a=threshold; piecewise_linear: first_point and
//   point_count index the shared point table.
struct CompiledCurve {
  CurveKind kind = CurveKind::kLinear;
  bool invert = false;
  bool rescale = false;
  float a = 1, b = 0, c = 0, d = 1;
  uint32_t first_point = 0;
  uint32_t point_count = 0;
};

// Returns the compiled form of a validated curve definition. Piecewise points
// are appended to `points`.
[[nodiscard]] CompiledCurve CompileCurve(const CurveDefinition& def,
                                         std::vector<CurvePoint>* points);

// Returns f(x) for a normalised input; clamps x and the result to 0..1. A NaN
// input yields 0. Pure and thread-safe.
[[nodiscard]] float EvaluateCurve(const CompiledCurve& curve, float x,
                                  absl::Span<const CurvePoint> points);

// y[i] = EvaluateCurve(curve, x[i], points) for i < n, bit for bit, with
// the curve kind decided once for the whole column.
void EvaluateCurveColumn(const CompiledCurve& curve, const float* x, float* y,
                         size_t n, absl::Span<const CurvePoint> points);

// Appends to `out` the normalised inputs in [lo, hi] (within 0..1) where
// the curve's shape changes: the bookends 0 and 1 when inside, a step's
// threshold, a peak or trough, a kink, where a shape meets 0 or 1. Between
// two consecutive ones (sorted) the curve is monotone and continuous, so
// the extremes of the curve over an interval are at its ends or at these
// (sensitivity's search and analysis's ranges rely on it). At most 256 of
// a sine's turns are listed per call: ask about a narrower window.
void CurveBreakpoints(const CompiledCurve& curve,
                      absl::Span<const CurvePoint> points, double lo, double hi,
                      std::vector<double>* out);

// The SIMD target curve columns run on: Highway's name of the best target
// this CPU supports among those built (e.g. "AVX3", "AVX2", "SSE4"), chosen
// once. Every target computes the same bits (curve_math.h).
[[nodiscard]] const char* SimdTarget();

// The SIMD targets this CPU supports among those built, best first.
[[nodiscard]] std::vector<std::string> AvailableSimdTargets();

// OK when `name` is "best" or one of AvailableSimdTargets (any case), else
// INVALID_ARGUMENT naming the available targets. Changes nothing.
[[nodiscard]] absl::Status CheckSimdTarget(absl::string_view name);

// Limits the SIMD columns to `name` (one of AvailableSimdTargets, any case;
// "best" undoes it), e.g. to keep a fleet off AVX-512 or to measure each
// target. Results do not change: every target computes the same bits.
// Call before deciding, not concurrently with it. INVALID_ARGUMENT naming
// the available targets for any other name.
[[nodiscard]] absl::Status UseSimdTarget(absl::string_view name);

// Appends an issue for each invalid parameter of `def`; paths are `path`
// followed by the parameter, e.g. "<path>.logistic.steepness".
void ValidateCurve(const CurveDefinition& def, const std::string& path,
                   std::vector<ValidationIssue>* issues);

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_CURVE_H_
