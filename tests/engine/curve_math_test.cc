// utilityd's own maths (engine/src/curves/curve_math.h):
// - every SIMD target Highway offers on this machine, forced one by one,
//   computes the same bits as the one-value path, over random inputs with
//   bookends, out-of-range values, NaN and infinities, for every curve kind
//   and parameter edges;
// - each curve kind stays within its documented error bound against a
//   long-double reference over a dense sweep (docs/PERFORMANCE.md,
//   "Own maths");
// - the functions themselves (e^x, e^x - 1, ln x, sin x, x^a, and e^x in
//   float) stay within their relative error bound over their domains.
// The logistic is computed in float where its bound allows (the same
// bits on every target too, through both the curve columns and the fused
// consideration pass), else in double.
#include "engine/src/curves/curve_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/src/scoring/consider_column.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "utilityd/engine/curve.h"

namespace utilityd::engine {
namespace {

using internal::OwnExp;
using internal::OwnExpF;
using internal::OwnExpm1;
using internal::OwnLog;
using internal::OwnPow;
using internal::OwnSin;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Case {
  std::string name;
  CurveDefinition def;
};

CurveDefinition Def(CurveKind kind) {
  CurveDefinition d;
  d.kind = kind;
  return d;
}

// Every own-maths kind with ordinary and edge parameters, plain and
// inverted.
std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, CurveDefinition d) {
    cases.push_back({name, d});
    d.invert = true;
    cases.push_back({name + "_inverted", d});
  };
  for (double e : {0.001, 0.25, 1.5, 2.5, 7.0, 100.0, 1000.0}) {
    CurveDefinition d = Def(CurveKind::kPolynomial);
    d.exponent = e;
    add("polynomial_" + std::to_string(e), d);
  }
  for (double k : {-80.0, -5.0, -1e-3, 1e-3, 0.5, 3.0, 80.0}) {
    CurveDefinition d = Def(CurveKind::kExponential);
    d.k = k;
    add("exponential_" + std::to_string(k), d);
  }
  for (double s : {1e-3, 1.0, 10.0, 1000.0}) {
    for (double m : {-3.0, 0.0, 0.5, 1.0, 1e6}) {
      for (bool rescale : {false, true}) {
        CurveDefinition d = Def(CurveKind::kLogistic);
        d.steepness = s;
        d.midpoint = m;
        d.rescale = rescale;
        add("logistic_" + std::to_string(s) + "_" + std::to_string(m) +
                (rescale ? "_rescaled" : ""),
            d);
      }
      CurveDefinition d = Def(CurveKind::kLogit);
      d.steepness = s;
      d.midpoint = m;
      add("logit_" + std::to_string(s) + "_" + std::to_string(m), d);
    }
  }
  for (double mean : {-1.0, 0.0, 0.3, 1.0}) {
    for (double sd : {1e-20, 1e-3, 0.1, 1.0, 1e6}) {
      CurveDefinition d = Def(CurveKind::kNormal);
      d.mean = mean;
      d.stddev = sd;
      add("normal_" + std::to_string(mean) + "_" + std::to_string(sd), d);
    }
  }
  for (double f : {1e-3, 0.5, 1.0, 3.0, 10000.0}) {
    for (double ph : {-10000.0, -0.25, 0.0, 0.125, 10000.0}) {
      CurveDefinition d = Def(CurveKind::kSine);
      d.frequency = f;
      d.phase = ph;
      add("sine_" + std::to_string(f) + "_" + std::to_string(ph), d);
    }
  }
  return cases;
}

// Inputs: a dense grid over 0..1 with its bookends, values just inside and
// outside, random values far out of range, NaN and the infinities.
std::vector<float> Inputs() {
  std::vector<float> x;
  for (int i = 0; i <= 4096; ++i) x.push_back(static_cast<float>(i) / 4096);
  for (float v : {0.0f, -0.0f, 1.0f, 1e-30f, 1e-7f, 0.9999999f,
                  std::nextafter(1.0f, 2.0f), std::nextafter(0.0f, 1.0f),
                  -1e-7f, 1.5f, -3.0f, 1e30f, -1e30f, kInf, -kInf, kNaN}) {
    x.push_back(v);
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> in(0, 1), out(-1e3f, 1e3f);
  for (int i = 0; i < 2000; ++i) x.push_back(i % 4 == 0 ? out(rng) : in(rng));
  return x;  // 6,113 values: columns with a remainder on every width
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(OwnMaths, EveryTargetComputesTheSameBits) {
  const std::vector<float> x = Inputs();
  std::vector<CurvePoint> points;
  std::vector<std::vector<float>> scalar;  // per case: EvaluateCurve
  const std::vector<Case> cases = Cases();
  int in_float = 0;
  for (const Case& c : cases) {
    const CompiledCurve curve = CompileCurve(c.def, &points);
    // Every case is own maths, in double, but the logistics in float.
    ASSERT_EQ(
        internal::UsesOwnMaths(curve),
        c.def.kind != CurveKind::kLogistic || !(!curve.rescale || curve.d <= 3))
        << c.name;
    in_float += internal::UsesOwnMaths(curve) ? 0 : 1;
    std::vector<float> y;
    for (float v : x) y.push_back(EvaluateCurve(curve, v, points));
    scalar.push_back(std::move(y));
  }
  EXPECT_GT(in_float, 20);  // the float path is exercised
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  std::cout << "targets:";
  for (int64_t t : targets) std::cout << " " << hwy::TargetName(t);
  std::cout << " (best first)\n";
  std::set<size_t> dispatched;  // Highway's index of the code that ran
  for (int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    SCOPED_TRACE(hwy::TargetName(t));
    EXPECT_STREQ(internal::OwnMathsTarget(), hwy::TargetName(t));
    for (size_t k = 0; k < cases.size(); ++k) {
      const CompiledCurve curve = CompileCurve(cases[k].def, &points);
      std::vector<float> y(x.size(), -1.0f);
      EvaluateCurveColumn(curve, x.data(), y.data(), x.size(), points);
      // The fused pass: a consideration over 0..1 whose output is the
      // curve's (normalised, the finite values are themselves).
      CompiledConsideration identity;
      identity.curve = curve;
      std::vector<float> fused(x.size(), -1.0f);
      internal::OutputColumn(identity, x.data(), x.size(), fused.data());
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(Bits(y[i]), Bits(scalar[k][i]))
            << cases[k].name << " x=" << x[i] << ": column " << y[i]
            << ", one value " << scalar[k][i];
        if (std::isfinite(x[i])) {
          ASSERT_EQ(Bits(fused[i]), Bits(scalar[k][i]))
              << cases[k].name << " x=" << x[i] << ": fused " << fused[i]
              << ", one value " << scalar[k][i];
        }
      }
    }
    dispatched.insert(hwy::GetChosenTarget().GetIndex());
  }
  hwy::SetSupportedTargetsForTest(0);
  // Each target's code really ran: a different entry each time.
  EXPECT_EQ(dispatched.size(), targets.size());
}

// The curve's value computed in long double from the same float
// parameters, then clamped and inverted as the engine does.
float Reference(const CurveDefinition& def, const CompiledCurve& c, float x) {
  using L = long double;
  const L v = x > 0 ? (x < 1 ? x : 1) : 0;  // Clamp01
  const L a = c.a, b = c.b;
  L y = 0;
  switch (def.kind) {
    case CurveKind::kPolynomial:
      y = std::pow(v, a);
      break;
    case CurveKind::kExponential:
      y = std::expm1(a * v) * b;
      break;
    case CurveKind::kLogistic:
      y = (1 / (1 + std::exp(-a * (v - b))) - L{c.c}) * L{c.d};
      if (c.rescale && v <= 0) y = 0;
      if (c.rescale && v >= 1) y = 1;
      break;
    case CurveKind::kLogit:
      y = b + std::log(v / (1 - v)) * a;
      break;
    case CurveKind::kNormal:
      y = std::exp((v - a) * (v - a) * b);
      break;
    case CurveKind::kSine:
      y = std::sin(a * v + b);
      break;
    default:
      break;
  }
  const float f = static_cast<float>(y);
  const float clamped = f > 0 ? (f < 1 ? f : 1) : 0;
  return c.invert ? 1.0f - clamped : clamped;
}

// Within one unit in the last place of the float result, or an absolute
// floor from it where the result is so near 0 that a float's ulp is below
// what the double computation keeps: 1e-12, and for the sine 3e-11 (its
// argument 2 pi (frequency x + phase), up to 1.3e5, is rounded to double:
// 1.5e-11 at most).
float Floor(CurveKind kind) {
  return kind == CurveKind::kSine ? 3e-11f : 1e-12f;
}

// A logistic computed in float: within (1 + d) 2^-22 absolutely of the
// reference, d its rescaling multiplier (1 when not rescaled); at most 3,
// so within 2^-20 (docs/PERFORMANCE.md, "The logistic in float").
double FloatLogisticBound(const CompiledCurve& c) {
  return (1.0 + (c.rescale ? c.d : 1.0)) * std::ldexp(1.0, -22);
}

TEST(OwnMaths, EachCurveIsWithinItsBoundOfALongDoubleReference) {
  std::vector<CurvePoint> points;
  int worst_ulps = 0;
  double worst_float_share = 0;  // of the bound, for the float logistics
  for (const Case& c : Cases()) {
    // The invert is one float subtraction after the shape (the same on
    // every path, as the test above shows); measured before it, where a
    // unit in the last place is the shape's own.
    if (c.def.invert) continue;
    const CompiledCurve curve = CompileCurve(c.def, &points);
    // A rescaled logistic that does not change over 0..1 in double (its
    // midpoint far outside) has no rescaling (1 / 0); any answer is as
    // meaningless as another.
    if (!std::isfinite(curve.d)) continue;
    const bool in_float = !internal::UsesOwnMaths(curve);
    for (int i = 0; i <= 100000; ++i) {
      const float x = static_cast<float>(i) / 100000;
      const float got = EvaluateCurve(curve, x, points);
      const float want = Reference(c.def, curve, x);
      if (in_float) {
        const double error = std::abs(double{got} - double{want});
        worst_float_share =
            std::max(worst_float_share, error / FloatLogisticBound(curve));
        ASSERT_LE(error, FloatLogisticBound(curve))
            << c.name << " x=" << x << ": " << got << ", reference " << want;
        continue;
      }
      const int ulps =
          std::abs(static_cast<int>(Bits(got)) - static_cast<int>(Bits(want)));
      if (std::abs(got - want) > Floor(c.def.kind)) {
        worst_ulps = std::max(worst_ulps, ulps);
        ASSERT_LE(ulps, 1) << c.name << " x=" << x << ": " << got
                           << ", reference " << want;
      }
    }
  }
  std::cout << "worst distance beyond the floor: " << worst_ulps
            << " ulp; float logistics: " << worst_float_share
            << " of their bound at worst\n";
}

// e^x in float against the long-double e^x of the same float, over its
// whole domain (every 1/1000 over -87..88, and more finely near 0).
TEST(OwnMaths, ExpInFloatStaysWithinItsRelativeErrorBound) {
  double worst = 0;
  for (int i = -87000; i <= 88000; ++i) {
    for (float x : {i / 1000.0f, i / 1000.0f + 3.7e-4f, i * 1e-7f}) {
      if (x > 88.0f) continue;
      const long double want = std::exp(static_cast<long double>(x));
      worst = std::max(
          worst, static_cast<double>(std::abs((OwnExpF(x) - want) / want)));
    }
  }
  std::cout << "e^x in float: worst relative error " << worst << " ("
            << worst / std::ldexp(1.0, -24) << " half-ulps)\n";
  EXPECT_LE(worst, std::ldexp(1.0, -22));
  EXPECT_EQ(OwnExpF(0), 1.0f);
  EXPECT_EQ(OwnExpF(-88), 0.0f);
  EXPECT_EQ(OwnExpF(89), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(OwnExpF(kNaN)));
  EXPECT_EQ(OwnExpF(-kInf), 0.0f);
}

// Relative error of x against a long-double reference.
double Relative(double got, long double want) {
  if (want == 0) return std::abs(got);
  return static_cast<double>(std::abs((got - want) / want));
}

TEST(OwnMaths, FunctionsStayWithinTheirRelativeErrorBound) {
  // docs/PERFORMANCE.md: relative error (sin: absolute; ln: absolute near
  // x = 1). x^a = e^(a ln x) carries ln's error times |a ln x| <= 708.
  constexpr double kBound[5] = {1e-13, 1e-13, 1e-13, 1e-13, 2e-11};
  double worst[5] = {};
  for (int i = -700000; i <= 700000; ++i) {
    const double x = i / 1000.0 + 1e-7;
    worst[0] =
        std::max(worst[0], Relative(OwnExp(x), std::exp((long double)x)));
    if (std::abs(x) < 50) {
      worst[1] =
          std::max(worst[1], Relative(OwnExpm1(x), std::expm1((long double)x)));
    }
  }
  for (int i = 1; i <= 1000000; ++i) {
    const double x = std::ldexp(1.0 + i / 1e6, i % 200 - 100);
    // ln: relative, or absolute near x = 1 where ln x passes 0.
    const long double ln = std::log((long double)x);
    worst[2] =
        std::max(worst[2], static_cast<double>(std::abs(OwnLog(x) - ln) /
                                               std::max(1.0L, std::abs(ln))));
    const double y = (i - 500000) * 0.25;  // |x| <= 1.25e5
    if (std::abs(y) > 1e-3) {
      // Absolute error for sin (its zeros make relative error meaningless).
      worst[3] = std::max(
          worst[3],
          static_cast<double>(std::abs(OwnSin(y) - std::sin((long double)y))));
    }
    const double base = i / 1e6, exponent = 1e-3 + (i % 997) * 1.003;
    const long double want = std::pow((long double)base, (long double)exponent);
    if (want > 1e-300L) {
      worst[4] = std::max(worst[4], Relative(OwnPow(base, exponent), want));
    }
  }
  std::cout << "worst relative error: exp " << worst[0] << ", expm1 "
            << worst[1] << ", ln " << worst[2] << ", sin (absolute) "
            << worst[3] << ", pow " << worst[4] << "\n";
  for (int f = 0; f < 5; ++f)
    EXPECT_LE(worst[f], kBound[f]) << "function " << f;
  // The edges.
  EXPECT_EQ(OwnExp(0), 1.0);
  EXPECT_EQ(OwnExp(-1000), 0.0);
  EXPECT_EQ(OwnExp(1000), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(OwnExp(std::nan(""))));
  EXPECT_EQ(OwnLog(1), 0.0);
  EXPECT_EQ(OwnLog(0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(OwnLog(std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(OwnLog(-1)));
  EXPECT_EQ(OwnSin(0), 0.0);
  EXPECT_TRUE(std::isnan(OwnSin(std::numeric_limits<double>::infinity())));
  EXPECT_EQ(OwnPow(0, 2.5), 0.0);
  EXPECT_EQ(OwnPow(1, 2.5), 1.0);
  EXPECT_EQ(OwnExpm1(0), 0.0);
}

}  // namespace
}  // namespace utilityd::engine
