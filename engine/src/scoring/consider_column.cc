// consider_column.h, compiled once per SIMD target (Highway's
// foreach_target.h) and dispatched to the best one at run time. Build
// flags: -ffp-contract=off, as for the own maths, so that no multiply and
// add are fused on one target and not on another.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scoring/consider_column.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
//
#include <utility>

#include "curves/curve_kernels.h"
#include "curves/curve_kinds.h"
#include "curves/curve_math-inl.h"
#include "curves/curve_math.h"
#include "hwy/highway.h"
#include "scoring/consider_column.h"
#include "utilityd/engine/decide.h"

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

// Contribution: output * w + (1 - w).
template <class DF>
HWY_INLINE Vec<DF> Contribution(DF df, const Constants& k, Vec<DF> out) {
  return hn::Add(hn::Mul(out, hn::Set(df, k.weight)),
                 hn::Set(df, k.one_minus_weight));
}

// What the compensated product multiplies by: s + (1 - s) * modifier * s
// when compensating per consideration, else s.
template <Fold kFold, class DF>
HWY_INLINE Vec<DF> Compensated(DF df, const Constants& k, Vec<DF> s) {
  if constexpr (kFold == kCompensatedProduct) {
    return hn::Add(s, hn::Mul(hn::Mul(hn::Sub(hn::Set(df, 1.0f), s),
                                      hn::Set(df, k.modifier)),
                              s));
  } else {
    return s;
  }
}

// std::min(held, s): s only when below.
template <class V>
HWY_INLINE V Lower(V s, V held) {
  return hn::IfThenElse(hn::Lt(s, held), s, held);
}

// Folds the outputs of Lanes(df) candidates from i into the accumulators.
template <Fold kFold, class DF>
HWY_INLINE void FoldStep(DF df, const Constants& k, Vec<DF> out, size_t i,
                         const RowAccumulators& acc) {
  using V = Vec<DF>;
  const hn::RebindToUnsigned<DF> du;
  const V w = hn::Set(df, k.weight);
  if constexpr (kFold == kSum) {
    hn::StoreU(hn::Add(hn::LoadU(df, acc.raw + i), hn::Mul(out, w)), df,
               acc.raw + i);
    hn::StoreU(hn::Add(hn::LoadU(df, acc.weight_sum + i), w), df,
               acc.weight_sum + i);
    return;  // the weighted sum vetoes nothing
  } else {
    const V s = Contribution(df, k, out);
    const V raw = hn::LoadU(df, acc.raw_from + i);
    if constexpr (kFold == kMin) {
      hn::StoreU(Lower(s, raw), df, acc.raw + i);
    } else {
      hn::StoreU(hn::Mul(raw, s), df, acc.raw + i);
      hn::StoreU(hn::Mul(hn::LoadU(df, acc.comp_from + i),
                         Compensated<kFold>(df, k, s)),
                 df, acc.comp + i);
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

// Calls visit(shape) with the shape of `curve`, of kind K, in plain float
// arithmetic when it has one (TilesCurve); returns whether it called.
template <class K, class Visit>
HWY_INLINE bool WithFloatShape(const CompiledCurve& curve, Visit&& visit) {
  const Params<float> p = ParamsOf<float>(curve);
  return VisitFloatShape<K>(curve, [&](auto e) {
    visit([p](auto df, Vec<decltype(df)> v) {
      return VectorShape<decltype(e)>::Run(df, p, v);
    });
  });
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
    WithFloatShape<K>(
        curve, [&](auto shape) { visit(hn::ScalableTag<float>(), shape); });
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

// The permutations that spread agents' values over their `each` pairs in
// a row (lane l: agent l / each), for floats and for int32 values: read
// with TableLookupLanes, not a gather. `each` divides the lanes.
template <class DF>
struct Spread {
  using DI = hn::RebindToSigned<DF>;
  explicit Spread(DF df, uint32_t each) {
    int32_t agent[HWY_LANES(float)] = {};
    for (size_t l = 0; l < hn::Lanes(df) && each != 0; ++l) {
      agent[l] = static_cast<int32_t>(l / each);
    }
    f = hn::SetTableIndices(df, agent);
    i = hn::SetTableIndices(DI(), agent);
    // each divides the lanes, a power of two: element i's agent is i >>
    // shift.
    while (each > 1u << shift) ++shift;
  }
  uint32_t shift = 0;
  decltype(hn::SetTableIndices(DF(), static_cast<const int32_t*>(nullptr))) f;
  decltype(hn::SetTableIndices(DI(), static_cast<const int32_t*>(nullptr))) i;
};

void FoldGathered(const CompiledConsideration& c, const FoldRule& rule,
                  const float* out, const uint32_t* index, size_t n,
                  uint32_t each, const RowAccumulators& acc) {
  const Constants k = ConstantsOf(c, rule);
  WithFold(rule, [&](auto fold) {
    constexpr Fold kFold = decltype(fold)::value;
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const hn::RebindToUnsigned<decltype(df)> du;
    const size_t lanes = hn::Lanes(df);
    const RowAccumulators a = acc;
    size_t i = 0;
    if (each != 0 && lanes % each == 0) {
      // Element i's agent is i / each: a vector's elements read lanes /
      // each agents in a row, each repeated `each` times.
      const Spread<decltype(df)> spread(df, each);
      for (; i + lanes <= n; i += lanes) {
        const auto v = hn::TableLookupLanes(
            hn::LoadU(df, out + (i >> spread.shift)), spread.f);
        FoldStep<kFold>(df, k, v, i, a);
      }
    }
    for (; i + lanes <= n; i += lanes) {
      const auto at = hn::BitCast(di, hn::LoadU(du, index + i));
      FoldStep<kFold>(df, k, hn::GatherIndex(df, out, at), i, a);
    }
    const hn::CappedTag<float, 1> d1;
    for (; i < n; ++i) FoldStep<kFold>(d1, k, hn::Set(d1, out[index[i]]), i, a);
  });
}

// Calls f(std::integral_constant<size_t, v>) for v in [0, kN): unrolled,
// so that arrays indexed by v can live in registers.
template <size_t kN, class F>
HWY_INLINE void Unrolled(F&& f) {
  [&]<size_t... kV>(std::index_sequence<kV...>) {
    (f(std::integral_constant<size_t, kV>{}), ...);
  }
  (std::make_index_sequence<kN>{});
}

// One consideration as a tile reads it: its constants, its curve's
// parameters and float expression (FloatShapeNumber), where it reads.
struct TileStep {
  Constants k;
  Params<float> p;
  int shape;
  TileSource source;
  const float* x;
};

// How a tile reads its elements' per-agent values: the row is the agents'
// (kAgents), or a per-target action's pairs, each agent's `each` pairs in
// a row (kSpread, a permutation of the agents' values), or any (kGather,
// by each pair's agent).
enum RowOf { kAgents, kSpread, kGather };

// The per-agent `values` (float or int32) of the elements [i, i + Lanes(d)).
template <RowOf kRow, class D, class S>
HWY_INLINE Vec<D> PerAgent(D d, const hn::TFromD<D>* values,
                           const ActionTiles& a, const S& spread, size_t i) {
  if constexpr (kRow == kAgents) {
    return hn::LoadU(d, values + i);
  } else if constexpr (hn::MaxLanes(D()) == 1) {
    return hn::Set(d, values[a.agent[i]]);
  } else if constexpr (kRow == kSpread) {
    const Vec<D> v = hn::LoadU(d, values + (i >> spread.shift));
    if constexpr (hwy::IsFloat<hn::TFromD<D>>()) {
      return hn::TableLookupLanes(v, spread.f);
    } else {
      return hn::TableLookupLanes(v, spread.i);
    }
  } else {
    const hn::RebindToSigned<D> di;
    const hn::RebindToUnsigned<D> du;
    return hn::GatherIndex(d, values,
                           hn::BitCast(di, hn::LoadU(du, a.agent + i)));
  }
}

// Whether the candidates [i, i + Lanes(df)) are their agents' current ones
// (IsCurrent): the running action, on the element's target or on any.
template <RowOf kRow, class DF, class S>
HWY_INLINE hn::Mask<DF> Current(DF df, const ActionTiles& a, const S& spread,
                                size_t i) {
  const hn::RebindToSigned<DF> di;
  const auto runs = hn::Eq(PerAgent<kRow>(di, a.running, a, spread, i),
                           hn::Set(di, a.action));
  if (a.agent == nullptr) return hn::RebindMask(df, runs);
  const auto on = PerAgent<kRow>(di, a.running_target, a, spread, i);
  const hn::RebindToUnsigned<DF> du;
  const auto target = hn::BitCast(di, hn::LoadU(du, a.target + i));
  return hn::RebindMask(
      df, hn::And(runs, hn::Or(hn::Eq(on, hn::Set(di, kAnyTarget)),
                               hn::Eq(on, target))));
}

// kNV vectors of elements from i through every step, the accumulators and
// vetoes held in registers, then finished into score; returns how many
// were vetoed.
template <Fold kFold, size_t kNV, RowOf kRow, class DF, class S>
__attribute__((flatten)) uint32_t ScoreTile(DF df, const ActionTiles& a,
                                            const TileStep* steps,
                                            const S& spread, size_t i,
                                            float* score) {
  using V = Vec<DF>;
  const size_t lanes = hn::Lanes(df);
  V acc[kNV];              // the product (compensated) or the minimum
  hn::Mask<DF> zero[kNV];  // a contribution of 0 vetoes
  Unrolled<kNV>([&](auto v) {
    acc[v] = hn::Set(df, 1.0f);
    zero[v] = hn::Lt(acc[v], acc[v]);  // none
  });
  auto fold = [&](const TileStep& step, size_t v, V out) {
    const V s = Contribution(df, step.k, out);
    zero[v] = hn::Or(zero[v], hn::Eq(s, hn::Zero(df)));
    if constexpr (kFold == kMin) {
      acc[v] = Lower(s, acc[v]);
    } else {
      acc[v] = hn::Mul(acc[v], Compensated<kFold>(df, step.k, s));
    }
  };
  for (size_t k = 0; k < a.count; ++k) {
    const TileStep& step = steps[k];
    switch (step.source) {
      case TileSource::kCompute:
        VisitFloatShapeNumber(step.shape, [&](auto e) {
          const auto shape = [&step](auto d, Vec<decltype(d)> v) {
            return VectorShape<decltype(e)>::Run(d, step.p, v);
          };
          Unrolled<kNV>([&](auto v) {
            fold(step, v, Output(df, step.k, shape, step.x + i + v * lanes));
          });
        });
        break;
      case TileSource::kRowOutputs:
        Unrolled<kNV>([&](auto v) {
          fold(step, v, hn::LoadU(df, step.x + i + v * lanes));
        });
        break;
      case TileSource::kAgentOutputs:
        Unrolled<kNV>([&](auto v) {
          fold(step, v, PerAgent<kRow>(df, step.x, a, spread, i + v * lanes));
        });
        break;
    }
  }
  // Finish: aggregate * weight * commitment (1 when not current), or 0.
  uint32_t vetoed = 0;
  Unrolled<kNV>([&](auto v) {
    const V committed =
        hn::IfThenElse(Current<kRow>(df, a, spread, i + v * lanes),
                       hn::Set(df, a.commitment), hn::Set(df, 1.0f));
    const V scored = hn::Mul(hn::Mul(acc[v], hn::Set(df, a.weight)), committed);
    hn::StoreU(hn::IfThenZeroElse(zero[v], scored), df, score + i + v * lanes);
    vetoed += static_cast<uint32_t>(hn::CountTrue(df, zero[v]));
  });
  return vetoed;
}

// Every tile of the row [0, n), read as kRow says.
template <Fold kFold, RowOf kRow>
uint32_t ScoreTiles(const ActionTiles& a, const TileStep* steps, size_t n,
                    float* score) {
  const hn::ScalableTag<float> df;
  const size_t lanes = hn::Lanes(df);
  // Two vectors a tile, four where there are 32 registers (AVX-512).
  constexpr size_t kNV = HWY_LANES(float) >= 16 ? 4 : 2;
  const Spread<decltype(df)> spread(df, a.each);
  uint32_t vetoed = 0;
  size_t i = 0;
  for (; i + kNV * lanes <= n; i += kNV * lanes) {
    vetoed += ScoreTile<kFold, kNV, kRow>(df, a, steps, spread, i, score);
  }
  for (; i + lanes <= n; i += lanes) {
    vetoed += ScoreTile<kFold, 1, kRow>(df, a, steps, spread, i, score);
  }
  const hn::CappedTag<float, 1> d1;
  const Spread<decltype(d1)> one(d1, 0);
  for (; i < n; ++i) {
    vetoed += ScoreTile<kFold, 1, kRow>(d1, a, steps, one, i, score);
  }
  return vetoed;
}

bool TilesPerTarget() {
  // With 16 registers (AVX2 and below) a per-target tile, holding its
  // pairs' agents' values too, measured no faster than the separate
  // passes (slower on SSE4); with 32 (AVX-512) 7-10% faster.
  return HWY_LANES(float) >= 16;
}

uint32_t ScoreActionTiles(const ActionTiles& a, size_t n, float* score) {
  const ActionTiles t = a;  // a local: the stores to score cannot alias it
  TileStep steps[kMaxTileConsiderations];
  for (size_t k = 0; k < t.count; ++k) {
    const CompiledConsideration& c = t.considerations[k];
    steps[k] = {ConstantsOf(c, t.rule), ParamsOf<float>(c.curve),
                FloatShapeNumber(c.curve), t.source[k], t.x[k]};
  }
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  uint32_t vetoed = 0;
  WithFold(t.rule, [&](auto fold) {
    constexpr Fold kFold = decltype(fold)::value;
    if constexpr (kFold != kSum) {
      if (t.agent == nullptr) {
        vetoed = ScoreTiles<kFold, kAgents>(t, steps, n, score);
      } else if (t.each != 0 && lanes % t.each == 0) {
        vetoed = ScoreTiles<kFold, kSpread>(t, steps, n, score);
      } else {
        vetoed = ScoreTiles<kFold, kGather>(t, steps, n, score);
      }
    }
  });
  return vetoed;
}

}  // namespace HWY_NAMESPACE
}  // namespace utilityd::engine::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace utilityd::engine::internal {

HWY_EXPORT(ConsiderColumn);
HWY_EXPORT(OutputColumn);
HWY_EXPORT(FoldGathered);
HWY_EXPORT(ScoreActionTiles);
HWY_EXPORT(TilesPerTarget);

bool TilesCurve(const CompiledCurve& curve) {
  return FloatShapeNumber(curve) >= 0;
}

bool FusesCurve(const CompiledCurve& curve) {
  return TilesCurve(curve) || VisitCurveKind(curve.kind, [&](auto kind) {
           return OwnMathsOf<decltype(kind)>(curve);
         });
}

bool TilesPerTarget() { return HWY_DYNAMIC_DISPATCH(TilesPerTarget)(); }

uint32_t ScoreActionTiles(const ActionTiles& a, size_t n, float* score) {
  return HWY_DYNAMIC_DISPATCH(ScoreActionTiles)(a, n, score);
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
                  uint32_t each, const RowAccumulators& acc) {
  HWY_DYNAMIC_DISPATCH(FoldGathered)(c, rule, out, index, n, each, acc);
}

}  // namespace utilityd::engine::internal
#endif  // HWY_ONCE
