// utilityd's own maths (curve_math.h), compiled once per SIMD target by
// Highway's foreach_target.h. Build flags: -ffp-contract=off, so that no
// multiply and add are fused on targets that have FMA and not on others.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "curves/curve_math.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
//
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/match.h"
#include "curves/curve_kernels.h"
#include "curves/curve_kinds.h"
#include "curves/curve_math-inl.h"
#include "curves/curve_math.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace utilityd::engine::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One step over Lanes(d) elements: clamp, shape in double, round to float,
// clamp, invert.
template <class E, class D>
HWY_INLINE void Step(D d, const Params<double>& p, bool invert, const float* x,
                     float* y) {
  const hn::Rebind<float, D> df;
  const Vec<decltype(df)> in = Clamp01(df, hn::LoadU(df, x));
  Vec<decltype(df)> out = Clamp01(
      df, hn::DemoteTo(df, VectorShape<E>::Run(d, p, hn::PromoteTo(d, in))));
  if (invert) out = hn::Sub(hn::Set(df, 1.0f), out);
  hn::StoreU(out, df, y);
}

template <class E>
void ColumnOf(const Params<double>& p, bool invert, const float* x, float* y,
              size_t n) {
  const hn::ScalableTag<double> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) Step<E>(d, p, invert, x + i, y + i);
  const hn::CappedTag<double, 1> d1;  // the rest one at a time, same ops
  for (; i < n; ++i) Step<E>(d1, p, invert, x + i, y + i);
}

template <class E>
float OneOf(const Params<double>& p, float x) {
  const hn::CappedTag<double, 1> d1;
  const hn::Rebind<float, decltype(d1)> df1;
  return hn::GetLane(hn::DemoteTo(
      df1, VectorShape<E>::Run(d1, p, hn::PromoteTo(d1, hn::Set(df1, x)))));
}

void Column(const CompiledCurve& c, const float* x, float* y, size_t n) {
  const Params<double> p = ParamsOf<double>(c);
  VisitOwnShape(c.kind, 0, [&](auto e) {
    ColumnOf<decltype(e)>(p, c.invert, x, y, n);
    return 0;
  });
}

float One(const CompiledCurve& c, float x) {
  const Params<double> p = ParamsOf<double>(c);
  return VisitOwnShape(c.kind, 0.0f,
                       [&](auto e) { return OneOf<decltype(e)>(p, x); });
}

// The functions on one double, for the error-bound tests: 0 e^x, 1 e^x - 1,
// 2 ln x, 3 sin x, 4 x^a.
double Apply(int fn, double x, double a) {
  const hn::CappedTag<double, 1> d1;
  const Vec<decltype(d1)> v = hn::Set(d1, x);
  switch (fn) {
    case 0:
      return hn::GetLane(Exp(d1, v));
    case 1:
      return hn::GetLane(Expm1(d1, v));
    case 2:
      return hn::GetLane(Log(d1, v));
    case 3:
      return hn::GetLane(Sin(d1, v));
    default:
      return hn::GetLane(Pow(d1, v, hn::Set(d1, a)));
  }
}

float ApplyF(float x) {
  const hn::CappedTag<float, 1> d1;
  return hn::GetLane(ExpF(d1, hn::Set(d1, x)));
}

}  // namespace HWY_NAMESPACE
}  // namespace utilityd::engine::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace utilityd::engine::internal {

HWY_EXPORT(Column);

bool UsesOwnMaths(const CompiledCurve& curve) {
  return VisitCurveKind(curve.kind,
                        [&](auto k) { return OwnMathsOf<decltype(k)>(curve); });
}

// One value: the baseline target, always compiled.
float OwnMathsShape(const CompiledCurve& curve, float x) {
  return HWY_STATIC_DISPATCH(One)(curve, x);
}

void OwnMathsColumn(const CompiledCurve& curve, const float* x, float* y,
                    size_t n) {
  HWY_DYNAMIC_DISPATCH(Column)(curve, x, y, n);
}

const char* OwnMathsTarget() {
  const int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(targets & -targets);  // the best is the lowest bit
}

// The machine's targets, listed once before any limit applies.
const std::vector<int64_t>& MachineTargets() {
  static const std::vector<int64_t>* const targets =
      new std::vector<int64_t>(hwy::SupportedAndGeneratedTargets());
  return *targets;
}

std::vector<std::string> OwnMathsTargets() {
  std::vector<std::string> names;
  for (int64_t t : MachineTargets()) names.push_back(hwy::TargetName(t));
  return names;
}

bool LimitOwnMathsTarget(absl::string_view name) {
  int64_t chosen = 0;  // "best": no limit
  if (!absl::EqualsIgnoreCase(name, "best")) {
    for (int64_t t : MachineTargets()) {
      if (absl::EqualsIgnoreCase(name, hwy::TargetName(t))) chosen = t;
    }
    if (chosen == 0) return false;
  }
  hwy::SetSupportedTargetsForTest(chosen);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return true;
}

double OwnExp(double x) { return HWY_STATIC_DISPATCH(Apply)(0, x, 0); }
double OwnExpm1(double x) { return HWY_STATIC_DISPATCH(Apply)(1, x, 0); }
double OwnLog(double x) { return HWY_STATIC_DISPATCH(Apply)(2, x, 0); }
double OwnSin(double x) { return HWY_STATIC_DISPATCH(Apply)(3, x, 0); }
double OwnPow(double x, double a) {
  return HWY_STATIC_DISPATCH(Apply)(4, x, a);
}
float OwnExpF(float x) { return HWY_STATIC_DISPATCH(ApplyF)(x); }

}  // namespace utilityd::engine::internal
#endif  // HWY_ONCE
