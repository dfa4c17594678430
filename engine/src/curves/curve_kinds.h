// The response curves, one block each, and the one list that registers
// them. A kind is a struct with
//   kKind     its CurveKind enumerator
//   kName     its name in the format (the field of utilityd.v1.Curve's
//             `kind` oneof; its proto message holds the parameters)
//   kParams   its parameters: names and the CurveDefinition members that
//             hold them (whose initial values are the defaults)
//   Validate  appends an issue per bad parameter
//   Compile   precomputes the CompiledCurve constants
//   Breakpoints  appends the normalised inputs where the shape changes (a
//             step's threshold, a peak, a kink, where it meets 0 or 1),
//             those in the Window at least: between two of them and the
//             bookends the shape is smooth and monotone, which the public
//             CurveBreakpoints (curve.h) promises sensitivity and analysis
// and its shape f(x), for a normalised x in 0..1 before the clamp and the
// invert, in one of three ways:
//   FloatShape   an expression (curve_shape.h) in plain float arithmetic,
//             or shape::Cases of several with FloatCase(curve) picking one
//             per curve; the scalar paths and the fused SIMD pass evaluate
//             the same expression
//   OwnShape     an expression that needs e^x, ln x, x^a or sin x: the own
//             maths (curve_math.h), evaluated in double per SIMD target so
//             that every machine gets the same bits. A kind with both uses
//             its own maths where FloatCase is past the last case
//   Shape(curve, x, points)  plain code, for a kind neither expression can
//             write (the piecewise curve's search through its points); the
//             fused pass leaves such a kind to the scalar column
//
// The loader (defaults, proto -> definition), validation, compilation, the
// scalar, column and fused evaluations and sensitivity all read from Kinds
// below; adding a kind means its enumerator, its struct, its entry in
// Kinds and its proto message; a kind without every member above, or
// without a shape, fails to compile (static_assert below). Internal to the
// engine.
#ifndef UTILITYD_ENGINE_SRC_CURVES_CURVE_KINDS_H_
#define UTILITYD_ENGINE_SRC_CURVES_CURVE_KINDS_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <numbers>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "curves/curve_kernels.h"
#include "curves/curve_math.h"
#include "curves/curve_shape.h"
#include "utilityd/engine/curve.h"

namespace utilityd::engine::internal {

// The normalised inputs a Breakpoints call is asked about (within 0..1).
struct Window {
  double lo = 0;
  double hi = 1;
};

// Collects a curve's validation issues under "<path>.<kind>.<param>".
class CurveIssues {
 public:
  CurveIssues(const std::string& path, const char* kind,
              std::vector<ValidationIssue>* issues)
      : prefix_(absl::StrCat(path, ".", kind, ".")), issues_(issues) {}

  void Bad(absl::string_view param, std::string message) {
    issues_->push_back({absl::StrCat(prefix_, param), std::move(message)});
  }
  // Returns whether `v` is usable as a float; reports it when not.
  bool Finite(absl::string_view param, double v) {
    if (!IsFiniteFloat(v)) {
      Bad(param,
          absl::StrCat("must be a finite number within ±3.4e38, got ", v));
    }
    return IsFiniteFloat(v);
  }
  // A parameter that must be finite and > 0.
  bool Positive(absl::string_view param, double v, absl::string_view hint) {
    if (!Finite(param, v)) return false;
    if (v <= 0) Bad(param, absl::StrCat("must be > 0, got ", v, hint));
    return v > 0;
  }

 private:
  std::string prefix_;
  std::vector<ValidationIssue>* issues_;
};

struct LinearCurve {
  static constexpr CurveKind kKind = CurveKind::kLinear;
  static constexpr const char* kName = "linear";
  static constexpr std::array<CurveParam, 2> kParams = {
      {{"slope", &CurveDefinition::slope},
       {"intercept", &CurveDefinition::intercept}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    issues.Finite("slope", d.slope);
    issues.Finite("intercept", d.intercept);
  }
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(d.slope);
    c.b = static_cast<float>(d.intercept);
  }
  using FloatShape = shape::Add<shape::Mul<shape::A, shape::X>, shape::B>;
  // Where slope*x + intercept meets 0 and 1.
  static void Breakpoints(const CompiledCurve& c, const CurvePoint*, Window,
                          std::vector<double>* t) {
    if (c.a == 0) return;
    t->push_back(-c.b / c.a);
    t->push_back((1.0 - c.b) / c.a);
  }
};

struct PolynomialCurve {
  static constexpr CurveKind kKind = CurveKind::kPolynomial;
  static constexpr const char* kName = "polynomial";
  static constexpr std::array<CurveParam, 1> kParams = {
      {{"exponent", &CurveDefinition::exponent}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    issues.Positive("exponent", d.exponent,
                    " (use invert for a falling curve)");
  }
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(d.exponent);
  }
  // x^a. The exponents PowerCase picks (2, 3, 0.5, 1) are x*x, x*x*x,
  // sqrt and x, exact everywhere; only any other is x^a in the own maths.
  using FloatShape = shape::Cases<shape::Square<shape::X>,
                                  shape::Mul<shape::Square<shape::X>, shape::X>,
                                  shape::Sqrt<shape::X>, shape::X>;
  static int FloatCase(const CompiledCurve& c) { return PowerCase(c.a); }
  using OwnShape = shape::Pow<shape::X, shape::A>;
  // Smooth and monotone over 0..1: the bookends are all.
  static void Breakpoints(const CompiledCurve&, const CurvePoint*, Window,
                          std::vector<double>*) {}
};

struct InverseQuadraticCurve {
  static constexpr CurveKind kKind = CurveKind::kInverseQuadratic;
  static constexpr const char* kName = "inverse_quadratic";
  static constexpr std::array<CurveParam, 0> kParams = {};
  static void Validate(const CurveDefinition&, CurveIssues&) {}
  static void Compile(const CurveDefinition&, CompiledCurve&) {}
  // 1 - (1 - x)^2.
  using FloatShape =
      shape::Sub<shape::Int<1>,
                 shape::Square<shape::Sub<shape::Int<1>, shape::X>>>;
  // Smooth and monotone over 0..1: the bookends are all.
  static void Breakpoints(const CompiledCurve&, const CurvePoint*, Window,
                          std::vector<double>*) {}
};

struct ExponentialCurve {
  static constexpr CurveKind kKind = CurveKind::kExponential;
  static constexpr const char* kName = "exponential";
  static constexpr std::array<CurveParam, 1> kParams = {
      {{"k", &CurveDefinition::k}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    if (!issues.Finite("k", d.k)) return;
    if (d.k == 0) {
      issues.Bad("k", "must not be 0 (use a linear curve)");
    } else if (std::abs(d.k) > 80) {
      issues.Bad("k", absl::StrCat("must be within -80..80, got ", d.k));
    }
  }
  // (e^(kx) - 1) / (e^k - 1): b is the constant divisor's inverse.
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(d.k);
    c.b = static_cast<float>(1.0 / OwnExpm1(static_cast<float>(d.k)));
  }
  using OwnShape =
      shape::Mul<shape::Expm1<shape::Mul<shape::A, shape::X>>, shape::B>;
  // Smooth and monotone over 0..1: the bookends are all.
  static void Breakpoints(const CompiledCurve&, const CurvePoint*, Window,
                          std::vector<double>*) {}
};

// Steepness and midpoint, shared by the logistic and its inverse.
inline void ValidateSigmoid(const CurveDefinition& d, CurveIssues& issues) {
  if (issues.Positive("steepness", d.steepness,
                      " (use invert for a falling curve)") &&
      d.steepness > 1000) {
    issues.Bad("steepness",
               absl::StrCat("must be at most 1000, got ", d.steepness,
                            " (use a step curve for a hard threshold)"));
  }
  issues.Finite("midpoint", d.midpoint);
}

struct LogisticCurve {
  static constexpr CurveKind kKind = CurveKind::kLogistic;
  static constexpr const char* kName = "logistic";
  static constexpr std::array<CurveParam, 3> kParams = {
      {{"steepness", &CurveDefinition::steepness},
       {"midpoint", &CurveDefinition::midpoint, nullptr, nullptr, true},
       {"rescale", nullptr, &CurveDefinition::rescale}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    ValidateSigmoid(d, issues);
  }
  // Rescaled (seed 004): (L(x) - L(0)) / (L(1) - L(0)), so that the ends are
  // exactly 0 and 1 and 0 can veto; c = L(0), d = 1 / (L(1) - L(0)).
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(d.steepness);
    c.b = static_cast<float>(d.midpoint);
    auto logistic = [&](double x) {  // with the compiled a and b
      return 1.0 / (1.0 + OwnExp(-double{c.a} * (x - double{c.b})));
    };
    c.rescale = d.rescale;
    c.c = d.rescale ? static_cast<float>(logistic(0.0)) : 0.0f;
    c.d = d.rescale ? static_cast<float>(1.0 / (logistic(1.0) - logistic(0.0)))
                    : 1.0f;
  }
  // (1 / (1 + e^(-a(x - b))) - c) * d, and exactly 0 and 1 at the ends when
  // rescaled. In float (e^x too) where its absolute error, at most
  // (1 + d) 2^-22, stays below 2^-20: unless a rescaling multiplies it by
  // more than kFloatRescaleAtMost (a gentle slope over 0..1). Else in
  // double, within one ulp (docs/PERFORMANCE.md, "The logistic in float").
  static constexpr float kFloatRescaleAtMost = 3;
  static int FloatCase(const CompiledCurve& c) {
    return !c.rescale || c.d <= kFloatRescaleAtMost ? 0 : 1;
  }
  using Expression = shape::ExactEnds<shape::Mul<
      shape::Sub<
          shape::Div<
              shape::Int<1>,
              shape::Add<shape::Int<1>,
                         shape::Exp<shape::Neg<shape::Mul<
                             shape::A, shape::Sub<shape::X, shape::B>>>>>>,
          shape::C>,
      shape::D>>;
  using FloatShape = Expression;
  using OwnShape = Expression;
  static void Breakpoints(const CompiledCurve& c, const CurvePoint*, Window,
                          std::vector<double>* t) {
    t->push_back(c.b);  // the midpoint
  }
};

struct LogitCurve {
  static constexpr CurveKind kKind = CurveKind::kLogit;
  static constexpr const char* kName = "logit";
  static constexpr std::array<CurveParam, 2> kParams = {
      {{"steepness", &CurveDefinition::steepness},
       {"midpoint", &CurveDefinition::midpoint, nullptr, nullptr, true}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    ValidateSigmoid(d, issues);
  }
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(1.0 / d.steepness);
    c.b = static_cast<float>(d.midpoint);
  }
  // b + ln(x / (1 - x)) * a; ln(0) = -inf and ln(inf) = +inf clamp to
  // exact 0 and 1.
  using OwnShape = shape::Add<
      shape::B,
      shape::Mul<
          shape::Log<shape::Div<shape::X, shape::Sub<shape::Int<1>, shape::X>>>,
          shape::A>>;
  static void Breakpoints(const CompiledCurve& c, const CurvePoint*, Window,
                          std::vector<double>* t) {
    t->push_back(c.b);  // the midpoint
  }
};

struct NormalCurve {
  static constexpr CurveKind kKind = CurveKind::kNormal;
  static constexpr const char* kName = "normal";
  static constexpr std::array<CurveParam, 2> kParams = {
      {{"mean", &CurveDefinition::mean, nullptr, nullptr, true},
       {"stddev", &CurveDefinition::stddev}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    issues.Finite("mean", d.mean);
    issues.Positive("stddev", d.stddev, "");
  }
  // e^(-(x - mean)^2 / (2 stddev^2)): b = -1 / (2 stddev^2).
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(d.mean);
    c.b = static_cast<float>(-1.0 / (2.0 * d.stddev * d.stddev));
  }
  using OwnShape = shape::Exp<
      shape::Mul<shape::Square<shape::Sub<shape::X, shape::A>>, shape::B>>;
  static void Breakpoints(const CompiledCurve& c, const CurvePoint*, Window,
                          std::vector<double>* t) {
    t->push_back(c.a);  // the mean, its peak
  }
};

struct SineCurve {
  static constexpr CurveKind kKind = CurveKind::kSine;
  static constexpr const char* kName = "sine";
  static constexpr std::array<CurveParam, 2> kParams = {
      {{"frequency", &CurveDefinition::frequency},
       {"phase", &CurveDefinition::phase}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    // Bounded so that the argument 2 pi (frequency x + phase) stays where
    // the own sine is exact (curve_math.h).
    if (issues.Positive("frequency", d.frequency, "") &&
        d.frequency > kMaxSineParam) {
      issues.Bad("frequency", absl::StrCat("must be at most ", kMaxSineParam,
                                           ", got ", d.frequency));
    }
    if (issues.Finite("phase", d.phase) && std::abs(d.phase) > kMaxSineParam) {
      issues.Bad("phase", absl::StrCat("must be within ±", kMaxSineParam,
                                       ", got ", d.phase));
    }
  }
  static constexpr double kMaxSineParam = 10000;
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(2.0 * std::numbers::pi * d.frequency);
    c.b = static_cast<float>(2.0 * std::numbers::pi * d.phase);
  }
  // sin(a x + b).
  using OwnShape =
      shape::Sin<shape::Add<shape::Mul<shape::A, shape::X>, shape::B>>;
  // Peaks, troughs and zeros: a x + b = k pi / 2 (at most 256 of them
  // in the window).
  static void Breakpoints(const CompiledCurve& c, const CurvePoint*, Window w,
                          std::vector<double>* t) {
    if (c.a == 0) return;
    const double quarter = std::numbers::pi / 2;
    const double u = c.a * w.lo + c.b, v = c.a * w.hi + c.b;
    const double k0 = std::ceil(std::min(u, v) / quarter);
    const double k1 = std::floor(std::max(u, v) / quarter);
    for (double k = k0; k <= k1 && k < k0 + 256; ++k) {
      t->push_back((k * quarter - c.b) / c.a);
    }
  }
};

struct SmoothstepCurve {
  static constexpr CurveKind kKind = CurveKind::kSmoothstep;
  static constexpr const char* kName = "smoothstep";
  static constexpr std::array<CurveParam, 0> kParams = {};
  static void Validate(const CurveDefinition&, CurveIssues&) {}
  static void Compile(const CurveDefinition&, CompiledCurve&) {}
  // x^2 (3 - 2 x).
  using FloatShape = shape::Mul<
      shape::Square<shape::X>,
      shape::Sub<shape::Int<3>, shape::Mul<shape::Int<2>, shape::X>>>;
  // Smooth and monotone over 0..1: the bookends are all.
  static void Breakpoints(const CompiledCurve&, const CurvePoint*, Window,
                          std::vector<double>*) {}
};

struct StepCurve {
  static constexpr CurveKind kKind = CurveKind::kStep;
  static constexpr const char* kName = "step";
  static constexpr std::array<CurveParam, 1> kParams = {
      {{"threshold", &CurveDefinition::threshold, nullptr, nullptr, true}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    if (issues.Finite("threshold", d.threshold) &&
        (d.threshold < 0 || d.threshold > 1)) {
      issues.Bad("threshold",
                 absl::StrCat("must be within 0..1 (a normalised input), got ",
                              d.threshold));
    }
  }
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.a = static_cast<float>(d.threshold);
  }
  // 1 from the threshold on.
  using FloatShape = shape::AtLeast<shape::X, shape::A>;
  static void Breakpoints(const CompiledCurve& c, const CurvePoint*, Window,
                          std::vector<double>* t) {
    t->push_back(c.a);  // the threshold
  }
};

struct PiecewiseLinearCurve {
  static constexpr CurveKind kKind = CurveKind::kPiecewiseLinear;
  static constexpr const char* kName = "piecewise_linear";
  static constexpr std::array<CurveParam, 1> kParams = {
      {{"points", nullptr, nullptr, &CurveDefinition::points}}};
  static void Validate(const CurveDefinition& d, CurveIssues& issues) {
    const auto& pts = d.points;
    if (pts.size() < 2) {
      issues.Bad("points",
                 absl::StrCat("needs at least 2 points, got ", pts.size()));
    } else if (pts.size() > static_cast<size_t>(kMaxCurvePoints)) {
      issues.Bad("points", absl::StrCat("at most ", kMaxCurvePoints,
                                        " points, got ", pts.size()));
    }
    for (size_t i = 0; i < pts.size(); ++i) {
      const std::string at = absl::StrCat("points[", i, "]");
      if (!(pts[i].x >= 0 && pts[i].x <= 1) ||
          !(pts[i].y >= 0 && pts[i].y <= 1)) {
        issues.Bad(at, absl::StrCat("x and y must be within 0..1, got (",
                                    pts[i].x, ", ", pts[i].y, ")"));
      }
      if (i > 0 && !(pts[i].x > pts[i - 1].x)) {
        issues.Bad(at, absl::StrCat("x must increase strictly: ", pts[i].x,
                                    " follows ", pts[i - 1].x));
      }
    }
  }
  // CompileCurve puts the points in the set's shared table.
  static void Compile(const CurveDefinition& d, CompiledCurve& c) {
    c.point_count = static_cast<uint32_t>(d.points.size());
  }
  static float Shape(const CompiledCurve& c, float x, const CurvePoint* p) {
    const uint32_t n = c.point_count;
    if (x <= p[0].x) return static_cast<float>(p[0].y);
    if (x >= p[n - 1].x) return static_cast<float>(p[n - 1].y);
    uint32_t i = 1;
    while (x > p[i].x) ++i;
    const double t = (x - p[i - 1].x) / (p[i].x - p[i - 1].x);
    return static_cast<float>(p[i - 1].y + t * (p[i].y - p[i - 1].y));
  }
  static void Breakpoints(const CompiledCurve& c, const CurvePoint* p, Window,
                          std::vector<double>* t) {
    for (uint32_t i = 0; i < c.point_count; ++i) t->push_back(p[i].x);
  }
};

// The registry: every kind, in the order of the CurveKind enumerators.
template <typename... K>
struct KindList {};
using Kinds =
    KindList<LinearCurve, PolynomialCurve, InverseQuadraticCurve,
             ExponentialCurve, LogisticCurve, LogitCurve, NormalCurve,
             SineCurve, SmoothstepCurve, StepCurve, PiecewiseLinearCurve>;

template <typename... K>
constexpr bool InEnumOrder(KindList<K...>) {
  int i = 0;
  return ((static_cast<int>(K::kKind) == i++) && ...);
}
static_assert(InEnumOrder(Kinds{}), "Kinds must follow the CurveKind order");

// A kind's shape members (the header's three ways).
template <typename K>
concept HasFloatShape = requires {
  typename K::FloatShape;
};
template <typename K>
concept HasOwnShape = requires {
  typename K::OwnShape;
};
template <typename K>
concept HasCodeShape = requires(const CompiledCurve& c, float x,
                                const CurvePoint* p) {
  { K::Shape(c, x, p) } -> std::same_as<float>;
};

// Every kind provides every member the header lists, and one shape.
template <typename K>
concept CurveKindBlock = requires(const CurveDefinition& d, CompiledCurve& c,
                                  CurveIssues& issues, const CurvePoint* p,
                                  Window w, std::vector<double>* t) {
  { K::kKind } -> std::convertible_to<CurveKind>;
  { K::kName } -> std::convertible_to<const char*>;
  K::kParams.size();
  K::Validate(d, issues);
  K::Compile(d, c);
  K::Breakpoints(c, p, w, t);
}
&&(HasFloatShape<K> || HasOwnShape<K> || HasCodeShape<K>);
template <typename... K>
constexpr bool AllBlocks(KindList<K...>) {
  return (CurveKindBlock<K> && ...);
}
static_assert(AllBlocks(Kinds{}),
              "every curve kind needs kKind, kName, kParams, Validate, "
              "Compile, Breakpoints and a FloatShape, OwnShape or Shape");

// Calls visit(K{}) for the kind K of `kind` and returns what it returns.
template <typename Visit, typename First, typename... Rest>
decltype(auto) VisitKind(KindList<First, Rest...>, CurveKind kind,
                         Visit&& visit) {
  if constexpr (sizeof...(Rest) == 0) {
    return visit(First{});
  } else {
    if (kind == First::kKind) return visit(First{});
    return VisitKind(KindList<Rest...>{}, kind, std::forward<Visit>(visit));
  }
}
template <typename Visit>
decltype(auto) VisitCurveKind(CurveKind kind, Visit&& visit) {
  return VisitKind(Kinds{}, kind, std::forward<Visit>(visit));
}

// The float case of K that `curve` uses; a value past the last case (or
// any value, for a kind without a FloatShape) means its own maths.
template <typename K>
int FloatCaseOf(const CompiledCurve& curve) {
  if constexpr (!HasFloatShape<K>) {
    return 0;
  } else if constexpr (requires { K::FloatCase(curve); }) {
    return K::FloatCase(curve);
  } else {
    return 0;
  }
}
template <typename E>
struct CaseCount;
template <typename... E>
struct CaseCount<shape::Cases<E...>> {
  static constexpr int value = sizeof...(E);
};
template <typename K>
constexpr int FloatCaseCount() {
  if constexpr (HasFloatShape<K>) {
    return CaseCount<
        typename shape::CasesOf<typename K::FloatShape>::type>::value;
  } else {
    return 0;
  }
}

// Whether `curve`, of kind K, is computed by the own maths.
template <typename K>
bool OwnMathsOf(const CompiledCurve& curve) {
  if constexpr (HasOwnShape<K>) {
    return FloatCaseOf<K>(curve) >= FloatCaseCount<K>();
  } else {
    return false;
  }
}

// Calls visit(E{}) with the float expression E that `curve` uses, when it
// has one (a kind with a FloatShape whose case is not its own maths);
// returns whether it called.
template <typename K, typename Visit>
bool VisitFloatShape(const CompiledCurve& curve, Visit&& visit) {
  if constexpr (HasFloatShape<K>) {
    const int at = FloatCaseOf<K>(curve);
    return [&]<typename... E>(shape::Cases<E...>) {
      int i = 0;
      return ((i++ == at ? (visit(E{}), true) : false) || ...);
    }(typename shape::CasesOf<typename K::FloatShape>::type{});
  } else {
    return false;
  }
}

// Every kind's float expressions numbered in one sequence (the kinds in
// Kinds order, each kind's cases in order), so that a loop can choose one
// per step by a number: kind K's case i is number kFloatShapeStart[K] + i.
template <typename... K>
constexpr std::array<int, sizeof...(K)> FloatShapeStarts(KindList<K...>) {
  std::array<int, sizeof...(K)> start{};
  int i = 0, next = 0;
  ((start[i++] = next, next += FloatCaseCount<K>()), ...);
  return start;
}
inline constexpr auto kFloatShapeStart = FloatShapeStarts(Kinds{});

// The number of the float expression `curve` uses, or -1 when it has none
// (its own maths, or code).
inline int FloatShapeNumber(const CompiledCurve& curve) {
  return VisitCurveKind(curve.kind, [&](auto kind) {
    using K = decltype(kind);
    const int at = FloatCaseOf<K>(curve);
    return HasFloatShape<K> && at < FloatCaseCount<K>()
               ? kFloatShapeStart[static_cast<int>(K::kKind)] + at
               : -1;
  });
}

// Calls visit(E{}) for the float expression E numbered `number`.
template <typename Visit>
inline void VisitFloatShapeNumber(int number, Visit&& visit) {
  [&]<typename... K>(KindList<K...>) {
    (
        [&] {
          if constexpr (HasFloatShape<K>) {
            [&]<typename... E>(shape::Cases<E...>) {
              int i = kFloatShapeStart[static_cast<int>(K::kKind)];
              ((number == i++ ? visit(E{}) : void()), ...);
            }(typename shape::CasesOf<typename K::FloatShape>::type{});
          }
        }(),
        ...);
  }(Kinds{});
}

// K's shape at a normalised x, before the clamp and the invert.
template <typename K>
float ShapeOf(const CompiledCurve& curve, float x, const CurvePoint* points) {
  if constexpr (HasCodeShape<K>) {
    return K::Shape(curve, x, points);
  } else {
    float y = 0;
    if (VisitFloatShape<K>(curve, [&](auto e) {
          y = shape::Scalar<decltype(e)>::Run(curve, x);
        })) {
      return y;
    }
    return OwnMathsShape(curve, x);
  }
}

// f(x) of one kind: the clamp, the shape, the clamp, the invert.
template <typename K>
inline float Evaluate(const CompiledCurve& curve, float x,
                      const CurvePoint* points) {
  const float y = Clamp01(ShapeOf<K>(curve, Clamp01(x), points));
  return curve.invert ? 1.0f - y : y;
}

// Calls visit(shape) with a callable float -> float such that
// Clamp01(shape(Clamp01(x))), inverted when curve.invert, equals
// EvaluateCurve(curve, x) bit for bit, with every per-curve choice made
// here, once, so that a loop over a column calls shape without dispatch.
template <typename Visit>
void DispatchShape(const CompiledCurve& curve, const CurvePoint* p,
                   Visit&& visit) {
  VisitCurveKind(curve.kind, [&](auto kind) {
    using K = decltype(kind);
    // A local copy: the loops may then keep its parameters in registers
    // (a reference could alias the column they write).
    const CompiledCurve c = curve;
    if (VisitFloatShape<K>(c, [&](auto e) {
          visit([c](float v) { return shape::Scalar<decltype(e)>::Run(c, v); });
        })) {
      return;
    }
    visit([c, p](float v) { return ShapeOf<K>(c, v, p); });
  });
}

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_CURVES_CURVE_KINDS_H_
