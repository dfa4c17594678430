// consider_column.h, compiled once per SIMD target (Highway's
// foreach_target.h) and dispatched to the best one at run time. Build
// flags: -ffp-contract=off, as for the own maths, so that no multiply and
// add are fused on one target and not on another.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scoring/consider_column.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
//
#include "curves/curve_kernels.h"
#include "curves/curve_kinds.h"
#include "curves/curve_math-inl.h"
#include "curves/curve_math.h"
#include "hwy/highway.h"
#include "scoring/consider_column.h"

HWY_BEFORE_NAMESPACE();
namespace utilityd::engine::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How the contributions fold: the product (with or without compensation
// per consideration), the minimum, the weighted sum.
enum Fold { kProduct, kCompensatedProduct, kMin, kSum };

// A consideration's constants, widened to vectors where used.
struct Constants {
  float lo, span, out_min, out_span, weight, one_minus_weight, modifier;
  bool invert;
};

// The output of Lanes(df) candidates from x: normalised, through the
// curve, rescaled to the output range. `shape` maps the normalised vector
// to the curve's shape (before its clamp and invert), as the curve's kind
// computes it.
template <class DF, class Shape>
HWY_INLINE Vec<DF> Output(DF df, const Constants& k, Shape shape,
                          const float* x) {
  using V = Vec<DF>;
  // Normalise (scoring_rules.h): clamp((raw - lo) / span), a correctly
  // rounded division on every target.
  const V norm =
      Clamp01(df, hn::Div(hn::Sub(hn::LoadU(df, x), hn::Set(df, k.lo)),
                          hn::Set(df, k.span)));
  // The curve: its shape of the clamped input (norm is), clamped, inverted.
  V curved = Clamp01(df, shape(df, norm));
  if (k.invert) curved = hn::Sub(hn::Set(df, 1.0f), curved);
  // Output: min + span * curved.
  return hn::Add(hn::Set(df, k.out_min),
                 hn::Mul(hn::Set(df, k.out_span), curved));
}

// Folds the outputs of Lanes(df) candidates from i into the accumulators.
template <Fold kFold, class DF>
HWY_INLINE void FoldStep(DF df, const Constants& k, Vec<DF> out, size_t i,
                         const RowAccumulators& acc) {
  using V = Vec<DF>;
  const hn::RebindToUnsigned<DF> du;
  const V one = hn::Set(df, 1.0f);
  const V w = hn::Set(df, k.weight);
  if constexpr (kFold == kSum) {
    hn::StoreU(hn::Add(hn::LoadU(df, acc.raw + i), hn::Mul(out, w)), df,
               acc.raw + i);
    hn::StoreU(hn::Add(hn::LoadU(df, acc.weight_sum + i), w), df,
               acc.weight_sum + i);
    return;  // the weighted sum vetoes nothing
  } else {
    // Contribution: output * w + (1 - w).
    const V s = hn::Add(hn::Mul(out, w), hn::Set(df, k.one_minus_weight));
    const V raw = hn::LoadU(df, acc.raw_from + i);
    if constexpr (kFold == kMin) {
      // std::min(raw, s): s only when below.
      hn::StoreU(hn::IfThenElse(hn::Lt(s, raw), s, raw), df, acc.raw + i);
    } else {
      hn::StoreU(hn::Mul(raw, s), df, acc.raw + i);
      V folded = s;
      if constexpr (kFold == kCompensatedProduct) {
        // Compensate: s + (1 - s) * modifier * s.
        folded = hn::Add(
            s, hn::Mul(hn::Mul(hn::Sub(one, s), hn::Set(df, k.modifier)), s));
      }
      hn::StoreU(hn::Mul(hn::LoadU(df, acc.comp_from + i), folded), df,
                 acc.comp + i);
    }
    // The first veto stands; a zero contribution vetoes.
    const auto v = hn::LoadU(du, acc.veto_from + i);
    const auto vetoes = hn::And(hn::Eq(v, hn::Zero(du)),
                                hn::RebindMask(du, hn::Eq(s, hn::Zero(df))));
    hn::StoreU(hn::IfThenElse(vetoes, hn::Set(du, 2u), v), du, acc.veto + i);
  }
}

// The whole row: whole vectors of DF, then the rest one at a time with the
// same operations.
template <Fold kFold, class DF, class Shape>
HWY_INLINE void FoldRow(DF df, const Constants& k, Shape shape, const float* x,
                        size_t n, const RowAccumulators& acc) {
  const size_t lanes = hn::Lanes(df);
  const Constants kc = k;  // locals: kept in registers over the loop
  const RowAccumulators a = acc;
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    FoldStep<kFold>(df, kc, Output(df, kc, shape, x + i), i, a);
  }
  const hn::CappedTag<float, 1> d1;
  for (; i < n; ++i)
    FoldStep<kFold>(d1, kc, Output(d1, kc, shape, x + i), i, a);
}

// Calls visit(df, shape) with the shape of the curve and the tag of the
// vectors it runs on: own maths in double (half a vector of floats at a
// time), plain arithmetic in float; both the expression of the kind's block
// (curve_kinds.h). Calls nothing for a curve that is not fused
// (FusesCurve).
template <class Visit>
void WithShape(const CompiledCurve& curve, Visit&& visit) {
  VisitCurveKind(curve.kind, [&](auto kind) {
    using K = decltype(kind);
    if constexpr (HasOwnShape<K>) {
      if (OwnMathsOf<K>(curve)) {
        const Params<double> p = ParamsOf<double>(curve);
        const hn::Rebind<float, hn::ScalableTag<double>> dh;
        visit(dh, [&p](auto df, Vec<decltype(df)> v) {
          const hn::Rebind<double, decltype(df)> d;
          return hn::DemoteTo(df, VectorShape<typename K::OwnShape>::Run(
                                      d, p, hn::PromoteTo(d, v)));
        });
        return;
      }
    }
    const Params<float> p = ParamsOf<float>(curve);
    VisitFloatShape<K>(curve, [&](auto e) {
      visit(hn::ScalableTag<float>(), [p](auto df, Vec<decltype(df)> v) {
        return VectorShape<decltype(e)>::Run(df, p, v);
      });
    });
  });
}

// Calls visit(std::integral_constant<Fold, F>{}) for the rule's fold F.
template <class Visit>
void WithFold(const FoldRule& rule, Visit&& visit) {
  switch (rule.aggregation) {
    case Aggregation::kProduct:
      if (rule.compensate) {
        return visit(std::integral_constant<Fold, kCompensatedProduct>{});
      }
      return visit(std::integral_constant<Fold, kProduct>{});
    case Aggregation::kMin:
      return visit(std::integral_constant<Fold, kMin>{});
    case Aggregation::kWeightedSum:
      return visit(std::integral_constant<Fold, kSum>{});
  }
}

Constants ConstantsOf(const CompiledConsideration& c, const FoldRule& rule) {
  return {c.range_lo, c.range_span,    c.output_min,  c.output_span,
          c.weight,   1.0f - c.weight, rule.modifier, c.curve.invert};
}

void ConsiderColumn(const CompiledConsideration& c, const FoldRule& rule,
                    const float* x, size_t n, const RowAccumulators& acc) {
  const Constants k = ConstantsOf(c, rule);
  WithFold(rule, [&](auto fold) {
    WithShape(c.curve, [&](auto df, auto shape) {
      FoldRow<decltype(fold)::value>(df, k, shape, x, n, acc);
    });
  });
}

void OutputColumn(const CompiledConsideration& c, const float* x, size_t n,
                  float* out) {
  const Constants k = ConstantsOf(c, FoldRule());
  WithShape(c.curve, [&](auto df, auto shape) {
    const size_t lanes = hn::Lanes(df);
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      hn::StoreU(Output(df, k, shape, x + i), df, out + i);
    }
    const hn::CappedTag<float, 1> d1;
    for (; i < n; ++i) hn::StoreU(Output(d1, k, shape, x + i), d1, out + i);
  });
}

void FoldGathered(const CompiledConsideration& c, const FoldRule& rule,
                  const float* out, const uint32_t* index, size_t n,
                  const RowAccumulators& acc) {
  const Constants k = ConstantsOf(c, rule);
  WithFold(rule, [&](auto fold) {
    constexpr Fold kFold = decltype(fold)::value;
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const hn::RebindToUnsigned<decltype(df)> du;
    const size_t lanes = hn::Lanes(df);
    const RowAccumulators a = acc;
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      const auto at = hn::BitCast(di, hn::LoadU(du, index + i));
      FoldStep<kFold>(df, k, hn::GatherIndex(df, out, at), i, a);
    }
    const hn::CappedTag<float, 1> d1;
    for (; i < n; ++i) FoldStep<kFold>(d1, k, hn::Set(d1, out[index[i]]), i, a);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace utilityd::engine::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace utilityd::engine::internal {

HWY_EXPORT(ConsiderColumn);
HWY_EXPORT(OutputColumn);
HWY_EXPORT(FoldGathered);

bool FusesCurve(const CompiledCurve& curve) {
  return VisitCurveKind(curve.kind, [&](auto kind) {
    using K = decltype(kind);
    return OwnMathsOf<K>(curve) || VisitFloatShape<K>(curve, [](auto) {});
  });
}

void ConsiderColumn(const CompiledConsideration& c, const FoldRule& rule,
                    const float* x, size_t n, const RowAccumulators& acc) {
  HWY_DYNAMIC_DISPATCH(ConsiderColumn)(c, rule, x, n, acc);
}

void OutputColumn(const CompiledConsideration& c, const float* x, size_t n,
                  float* out) {
  HWY_DYNAMIC_DISPATCH(OutputColumn)(c, x, n, out);
}

void FoldGathered(const CompiledConsideration& c, const FoldRule& rule,
                  const float* out, const uint32_t* index, size_t n,
                  const RowAccumulators& acc) {
  HWY_DYNAMIC_DISPATCH(FoldGathered)(c, rule, out, index, n, acc);
}

}  // namespace utilityd::engine::internal
#endif  // HWY_ONCE
