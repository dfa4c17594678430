// select_columns.h, compiled once per SIMD target (Highway's
// foreach_target.h) and dispatched to the best one at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "select_columns.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
//
#include "hwy/highway.h"
#include "select_columns.h"

HWY_BEFORE_NAMESPACE();
namespace utilityd::engine::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void OfferColumn(size_t n, const float* s, const int32_t* t, const int32_t* c,
                 int32_t action, int32_t rank, bool check_eligible,
                 float min_score, const TopTwoView& f, const TopTwoView& g) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const auto izero = hn::Zero(di);
  const auto vrank = hn::Set(di, rank);
  const auto vaction = hn::Set(di, action);
  const auto vmin = hn::Set(df, min_score);
  for (size_t j = 0; j < n; j += hn::Lanes(df)) {
    const auto cs = hn::LoadU(df, s + j);
    const auto ct = hn::LoadU(di, t + j);
    const auto cc = hn::LoadU(di, c + j);
    const auto is_current = hn::Ne(cc, izero);
    // The candidate ahead of a held one (score os, rank orank, current
    // ocur)?
    auto ahead = [&](auto os, auto orank, auto ocur) {
      const auto rank_ne = hn::RebindMask(df, hn::Ne(vrank, orank));
      const auto rank_gt = hn::RebindMask(df, hn::Gt(vrank, orank));
      const auto current_only =
          hn::RebindMask(df, hn::AndNot(hn::Ne(ocur, izero), is_current));
      const auto score_ne = hn::Ne(cs, os);
      const auto by_order = hn::Or(
          rank_gt,
          hn::AndNot(rank_ne, hn::Or(hn::Gt(cs, os),
                                     hn::AndNot(score_ne, current_only))));
      if (!check_eligible) return by_order;
      const auto ce = hn::Ge(cs, vmin);
      const auto differ = hn::Xor(ce, hn::Ge(os, vmin));
      return hn::Or(hn::And(differ, ce), hn::AndNot(differ, by_order));
    };
    const auto fs = hn::LoadU(df, f.score + j), gs = hn::LoadU(df, g.score + j);
    const auto fr = hn::LoadU(di, f.rank + j), gr = hn::LoadU(di, g.rank + j);
    const auto fa = hn::LoadU(di, f.action + j),
               ga = hn::LoadU(di, g.action + j);
    const auto ft = hn::LoadU(di, f.target + j),
               gt = hn::LoadU(di, g.target + j);
    const auto fc = hn::LoadU(di, f.current + j),
               gc = hn::LoadU(di, g.current + j);
    const auto offered = hn::Gt(cs, hn::Zero(df));
    const auto over_first =
        hn::Or(hn::RebindMask(df, hn::Lt(fa, izero)), ahead(fs, fr, fc));
    const auto over_second =
        hn::Or(hn::RebindMask(df, hn::Lt(ga, izero)), ahead(gs, gr, gc));
    const auto new_first = hn::And(offered, over_first);
    const auto new_second =
        hn::And(offered, hn::AndNot(over_first, over_second));
    const auto nf = hn::RebindMask(di, new_first);
    const auto ns = hn::RebindMask(di, new_second);
    // The first moves down when the candidate passes it.
    hn::StoreU(
        hn::IfThenElse(new_first, fs, hn::IfThenElse(new_second, cs, gs)), df,
        g.score + j);
    hn::StoreU(hn::IfThenElse(nf, fr, hn::IfThenElse(ns, vrank, gr)), di,
               g.rank + j);
    hn::StoreU(hn::IfThenElse(nf, fa, hn::IfThenElse(ns, vaction, ga)), di,
               g.action + j);
    hn::StoreU(hn::IfThenElse(nf, ft, hn::IfThenElse(ns, ct, gt)), di,
               g.target + j);
    hn::StoreU(hn::IfThenElse(nf, fc, hn::IfThenElse(ns, cc, gc)), di,
               g.current + j);
    hn::StoreU(hn::IfThenElse(new_first, cs, fs), df, f.score + j);
    hn::StoreU(hn::IfThenElse(nf, vrank, fr), di, f.rank + j);
    hn::StoreU(hn::IfThenElse(nf, vaction, fa), di, f.action + j);
    hn::StoreU(hn::IfThenElse(nf, ct, ft), di, f.target + j);
    hn::StoreU(hn::IfThenElse(nf, cc, fc), di, f.current + j);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace utilityd::engine::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace utilityd::engine::internal {

HWY_EXPORT(OfferColumn);

void OfferColumn(size_t n, const float* s, const int32_t* t, const int32_t* c,
                 int32_t action, int32_t rank, bool check_eligible,
                 float min_score, const TopTwoView& first,
                 const TopTwoView& second) {
  HWY_DYNAMIC_DISPATCH(OfferColumn)
  (n, s, t, c, action, rank, check_eligible, min_score, first, second);
}

}  // namespace utilityd::engine::internal
#endif  // HWY_ONCE
