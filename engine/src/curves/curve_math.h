// utilityd's own maths for the curves that need e^x, ln x, x^a or sin x
// (exponential, logistic, logit, normal, sine, and polynomial with an
// exponent other than 1, 2, 3 or 0.5), so that every machine and every SIMD
// target computes the same bits (docs/PERFORMANCE.md, "Own maths").
//
// Each such shape is computed in double precision with polynomials written
// as plain multiplies and adds in a fixed order (no FMA, no library call),
// then rounded to float once. One source, curve_math.cc, is compiled for
// every SIMD target Google Highway offers on the machine; a column runs on
// the best target the CPU has (chosen once, at the first call), and a single
// value runs the same operations on one lane of the baseline target. Since
// IEEE-754 add, subtract, multiply, divide, rounding and conversions are
// exact-rounded on every target, all give identical results.
//
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_CURVES_CURVE_MATH_H_
#define UTILITYD_ENGINE_SRC_CURVES_CURVE_MATH_H_

#include <cstddef>
#include <string>
#include <vector>

#include "utilityd/engine/curve.h"

namespace utilityd::engine::internal {

// Whether `curve` is computed by the functions below.
bool UsesOwnMaths(const CompiledCurve& curve);

// The curve's shape at x (already clamped to 0..1), before the output
// clamp and the invert: what the kind's Shape returns.
float OwnMathsShape(const CompiledCurve& curve, float x);

// y[i] = the curve at x[i] in full: clamp, shape, clamp, invert; equal bit
// for bit to EvaluateCurve on each element.
void OwnMathsColumn(const CompiledCurve& curve, const float* x, float* y,
                    size_t n);

// The SIMD target columns run on, e.g. "AVX2" (Highway's name).
const char* OwnMathsTarget();
// Every target available here, best first; and limiting the columns to one
// ("best": all). False for an unknown name.
std::vector<std::string> OwnMathsTargets();
bool LimitOwnMathsTarget(absl::string_view name);

// The maths functions themselves on one double, for the error-bound tests:
// e^x, e^x - 1, ln x, sin x, x^a (x >= 0).
double OwnExp(double x);
double OwnExpm1(double x);
double OwnLog(double x);
double OwnSin(double x);
double OwnPow(double x, double a);
// e^x in float, for the shapes a kind computes in float (the logistic
// where its bound allows): one lane of the vector code, so a single value
// and a column round alike. Relative error below 2^-22.
float OwnExpF(float x);

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_CURVES_CURVE_MATH_H_
