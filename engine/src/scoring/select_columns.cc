// select_columns.h, compiled once per SIMD target (Highway's
// foreach_target.h) and dispatched to the best one at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "scoring/select_columns.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
//
#include "hwy/highway.h"
#include "scoring/select_columns.h"
#include "utilityd/engine/decide.h"

HWY_BEFORE_NAMESPACE();
namespace utilityd::engine::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class DF>
using VF = hn::Vec<DF>;
template <class DF>
using VI = hn::Vec<hn::RebindToSigned<DF>>;

// Offers each lane's candidate (score cs, target ct, current cc; action
// and rank the same for all) to the lanes' best two, held in registers:
// f* the first, g* the second (score, rank, action, target, current).
template <class DF>
HWY_INLINE void Offer(DF df, VF<DF> cs, VI<DF> ct, VI<DF> cc, VI<DF> vaction,
                      VI<DF> vrank, bool check_eligible, VF<DF> vmin,
                      VF<DF>& fs, VI<DF>& fr, VI<DF>& fa, VI<DF>& ft,
                      VI<DF>& fc, VF<DF>& gs, VI<DF>& gr, VI<DF>& ga,
                      VI<DF>& gt, VI<DF>& gc) {
  const hn::RebindToSigned<DF> di;
  const auto izero = hn::Zero(di);
  const auto is_current = hn::Ne(cc, izero);
  // The candidate ahead of a held one (score os, rank orank, current
  // ocur)?
  auto ahead = [&](VF<DF> os, VI<DF> orank, VI<DF> ocur) {
    const auto rank_ne = hn::RebindMask(df, hn::Ne(vrank, orank));
    const auto rank_gt = hn::RebindMask(df, hn::Gt(vrank, orank));
    const auto current_only =
        hn::RebindMask(df, hn::AndNot(hn::Ne(ocur, izero), is_current));
    const auto score_ne = hn::Ne(cs, os);
    const auto by_order = hn::Or(
        rank_gt,
        hn::AndNot(rank_ne,
                   hn::Or(hn::Gt(cs, os), hn::AndNot(score_ne, current_only))));
    if (!check_eligible) return by_order;
    const auto ce = hn::Ge(cs, vmin);
    const auto differ = hn::Xor(ce, hn::Ge(os, vmin));
    return hn::Or(hn::And(differ, ce), hn::AndNot(differ, by_order));
  };
  const auto offered = hn::Gt(cs, hn::Zero(df));
  const auto over_first =
      hn::Or(hn::RebindMask(df, hn::Lt(fa, izero)), ahead(fs, fr, fc));
  const auto over_second =
      hn::Or(hn::RebindMask(df, hn::Lt(ga, izero)), ahead(gs, gr, gc));
  const auto new_first = hn::And(offered, over_first);
  const auto new_second = hn::And(offered, hn::AndNot(over_first, over_second));
  const auto nf = hn::RebindMask(di, new_first);
  const auto ns = hn::RebindMask(di, new_second);
  // The first moves down when the candidate passes it.
  gs = hn::IfThenElse(new_first, fs, hn::IfThenElse(new_second, cs, gs));
  gr = hn::IfThenElse(nf, fr, hn::IfThenElse(ns, vrank, gr));
  ga = hn::IfThenElse(nf, fa, hn::IfThenElse(ns, vaction, ga));
  gt = hn::IfThenElse(nf, ft, hn::IfThenElse(ns, ct, gt));
  gc = hn::IfThenElse(nf, fc, hn::IfThenElse(ns, cc, gc));
  fs = hn::IfThenElse(new_first, cs, fs);
  fr = hn::IfThenElse(nf, vrank, fr);
  fa = hn::IfThenElse(nf, vaction, fa);
  ft = hn::IfThenElse(nf, ct, ft);
  fc = hn::IfThenElse(nf, cc, fc);
}

// The scores of target `slot` of agents [j, j + Lanes(df)) in a per-target
// row: with one target each, the agents' own; with two, every other pair
// of two vectors; else gathered from each agent's first pair (those
// without the slot, !has, read pair 0).
template <class DF>
HWY_INLINE VF<DF> SlotScores(DF df, const float* row,
                             [[maybe_unused]] uint32_t each,
                             [[maybe_unused]] size_t j, uint32_t slot,
                             VI<DF> pair_first,
                             hn::Mask<hn::RebindToSigned<DF>> has) {
#if HWY_TARGET != HWY_SCALAR
  const size_t lanes = hn::Lanes(df);
  if (each == 1) return hn::LoadU(df, row + j);
  if (each == 2) {
    const VF<DF> lo = hn::LoadU(df, row + 2 * j);
    const VF<DF> hi = hn::LoadU(df, row + 2 * j + lanes);
    return slot == 0 ? hn::ConcatEven(df, hi, lo) : hn::ConcatOdd(df, hi, lo);
  }
#endif
  const hn::RebindToSigned<DF> di;
  const auto index = hn::IfThenElseZero(
      has, hn::Add(pair_first, hn::Set(di, static_cast<int32_t>(slot))));
  return hn::GatherIndex(df, row, index);
}

void TopTwo(const CandidateRows& rows, const TopTwoView& f,
            const TopTwoView& g) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const size_t lanes = hn::Lanes(df);
  const auto vmin = hn::Set(df, rows.min_score);
  const auto none = hn::Set(di, -1);
  const auto any_target = hn::Set(di, kAnyTarget);
  for (size_t j = 0; j < rows.agents; j += lanes) {
    // Lanes past the last agent offer nothing.
    const auto valid = hn::FirstN(df, rows.agents - j);
    const auto cur_a = hn::LoadU(di, rows.current_action + j);
    const auto cur_t = hn::LoadU(di, rows.current_target + j);
    const auto* begin = reinterpret_cast<const int32_t*>(rows.pair_begin + j);
    const auto pair_first = hn::LoadU(di, begin);
    const auto pair_count = hn::Sub(hn::LoadU(di, begin + 1), pair_first);
    // The most targets an agent of these lanes has.
    const auto widest =
        static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(di, pair_count)));
    auto fs = hn::Zero(df), gs = hn::Zero(df);
    auto fr = hn::Zero(di), gr = hn::Zero(di), fc = hn::Zero(di),
         gc = hn::Zero(di);
    auto fa = none, ga = none, ft = none, gt = none;
    for (int a = 0; a < rows.actions; ++a) {
      const float* row = rows.scores + rows.row_offset[a];
      const auto vaction = hn::Set(di, a);
      const auto vrank = hn::Set(di, rows.rank[a]);
      const auto running = hn::Eq(cur_a, vaction);
      if (!rows.per_target[a]) {
        const auto cs = hn::IfThenElseZero(valid, hn::LoadU(df, row + j));
        const auto cc = hn::IfThenElseZero(running, hn::Set(di, 1));
        Offer(df, cs, none, cc, vaction, vrank, rows.check_eligible, vmin, fs,
              fr, fa, ft, fc, gs, gr, ga, gt, gc);
        continue;
      }
      for (uint32_t slot = 0; slot < widest; ++slot) {
        const auto vslot = hn::Set(di, static_cast<int32_t>(slot));
        // An agent without this target offers a score of 0: nothing.
        const auto has = hn::Lt(vslot, pair_count);
        const auto cs = hn::IfThenElseZero(
            hn::RebindMask(df, has),
            SlotScores(df, row, rows.each, j, slot, pair_first, has));
        // IsCurrent: the running action on this target, or on any.
        const auto on_target =
            hn::Or(hn::Eq(cur_t, any_target), hn::Eq(cur_t, vslot));
        const auto cc =
            hn::IfThenElseZero(hn::And(running, on_target), hn::Set(di, 1));
        Offer(df, cs, vslot, cc, vaction, vrank, rows.check_eligible, vmin, fs,
              fr, fa, ft, fc, gs, gr, ga, gt, gc);
      }
    }
    hn::StoreU(fs, df, f.score + j);
    hn::StoreU(fr, di, f.rank + j);
    hn::StoreU(fa, di, f.action + j);
    hn::StoreU(ft, di, f.target + j);
    hn::StoreU(fc, di, f.current + j);
    hn::StoreU(gs, df, g.score + j);
    hn::StoreU(gr, di, g.rank + j);
    hn::StoreU(ga, di, g.action + j);
    hn::StoreU(gt, di, g.target + j);
    hn::StoreU(gc, di, g.current + j);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace utilityd::engine::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace utilityd::engine::internal {

HWY_EXPORT(TopTwo);

void TopTwo(const CandidateRows& rows, const TopTwoView& first,
            const TopTwoView& second) {
  HWY_DYNAMIC_DISPATCH(TopTwo)(rows, first, second);
}

}  // namespace utilityd::engine::internal
#endif  // HWY_ONCE
