#include "utilityd/engine/curve.h"

#include <algorithm>
#include <array>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "curves/curve_kinds.h"
#include "curves/curve_math.h"

namespace utilityd::engine {

using internal::VisitCurveKind;

const char* CurveKindName(CurveKind kind) {
  return VisitCurveKind(kind, [](auto k) { return decltype(k)::kName; });
}

std::optional<CurveKind> FindCurveKind(absl::string_view name) {
  for (CurveKind kind : AllCurveKinds()) {
    if (name == CurveKindName(kind)) return kind;
  }
  return std::nullopt;
}

absl::Span<const CurveParam> CurveParams(CurveKind kind) {
  return VisitCurveKind(kind, [](auto k) {
    return absl::Span<const CurveParam>(decltype(k)::kParams);
  });
}

absl::Span<const CurveKind> AllCurveKinds() {
  static constexpr auto kAll = []<typename... K>(internal::KindList<K...>) {
    return std::array<CurveKind, sizeof...(K)>{K::kKind...};
  }(internal::Kinds{});
  return kAll;
}

CompiledCurve CompileCurve(const CurveDefinition& def,
                           std::vector<CurvePoint>* points) {
  CompiledCurve c;
  c.kind = def.kind;
  c.invert = def.invert;
  VisitCurveKind(def.kind, [&](auto k) { decltype(k)::Compile(def, c); });
  // Point lists go to the set's shared table.
  for (const CurveParam& param : CurveParams(def.kind)) {
    if (param.points == nullptr) continue;
    const std::vector<CurvePoint>& list = def.*param.points;
    c.first_point = static_cast<uint32_t>(points->size());
    points->insert(points->end(), list.begin(), list.end());
  }
  return c;
}

float EvaluateCurve(const CompiledCurve& curve, float x,
                    absl::Span<const CurvePoint> points) {
  const CurvePoint* p = points.data() + curve.first_point;
  return VisitCurveKind(curve.kind, [&](auto k) {
    return internal::Evaluate<decltype(k)>(curve, x, p);
  });
}

// Curves that need e^x, ln x, x^a or sin x: own maths on the best SIMD
// target (curve_math.h). The others (plain arithmetic) are built twice: for
// AVX2 (8 floats a step) and for any x86-64; the loader picks at start-up.
// Neither uses FMA, so both round alike.
void EvaluateCurveColumn(const CompiledCurve& curve, const float* x, float* y,
                         size_t n, absl::Span<const CurvePoint> points) {
  if (internal::UsesOwnMaths(curve)) {
    return internal::OwnMathsColumn(curve, x, y, n);
  }
  internal::ArithmeticColumn(curve, x, y, n, points);
}

namespace internal {

UTILITYD_VECTOR_CLONES
void ArithmeticColumn(const CompiledCurve& curve, const float* x, float* y,
                      size_t n, absl::Span<const CurvePoint> points) {
  const CurvePoint* p = points.data() + curve.first_point;
  internal::DispatchShape(curve, p, [&](auto shape) {
    if (curve.invert) {
      for (size_t i = 0; i < n; ++i)
        y[i] = 1.0f - Clamp01(shape(Clamp01(x[i])));
    } else {
      for (size_t i = 0; i < n; ++i) y[i] = Clamp01(shape(Clamp01(x[i])));
    }
  });
}

}  // namespace internal

const char* SimdTarget() { return internal::OwnMathsTarget(); }

std::vector<std::string> AvailableSimdTargets() {
  return internal::OwnMathsTargets();
}

absl::Status CheckSimdTarget(absl::string_view name) {
  bool known = absl::EqualsIgnoreCase(name, "best");
  const std::vector<std::string> available = AvailableSimdTargets();
  for (const std::string& t : available) {
    known = known || absl::EqualsIgnoreCase(name, t);
  }
  if (known) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("SIMD target \"", name,
                   "\" is not available here; choose best or one of ",
                   absl::StrJoin(available, ", ")));
}

absl::Status UseSimdTarget(absl::string_view name) {
  if (absl::Status s = CheckSimdTarget(name); !s.ok()) return s;
  if (internal::LimitOwnMathsTarget(name)) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("SIMD target \"", name, "\" could not be set"));
}

void CurveBreakpoints(const CompiledCurve& curve,
                      absl::Span<const CurvePoint> points, double lo, double hi,
                      std::vector<double>* out) {
  lo = std::max(lo, 0.0);
  hi = std::min(hi, 1.0);
  if (!(lo <= hi)) return;
  std::vector<double> all = {0, 1};
  const CurvePoint* p =
      points.data() + (curve.point_count > 0 ? curve.first_point : 0);
  VisitCurveKind(curve.kind, [&](auto k) {
    decltype(k)::Breakpoints(curve, p, internal::Window{lo, hi}, &all);
  });
  for (double x : all) {
    if (x >= lo && x <= hi) out->push_back(x);
  }
}

void ValidateCurve(const CurveDefinition& def, const std::string& path,
                   std::vector<ValidationIssue>* issues) {
  internal::CurveIssues found(path, CurveKindName(def.kind), issues);
  VisitCurveKind(def.kind, [&](auto k) { decltype(k)::Validate(def, found); });
}

}  // namespace utilityd::engine
