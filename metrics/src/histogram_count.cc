// HistogramTally's bucket counting (histogram_count.h), compiled once per
// SIMD target by Highway's foreach_target.h: the batch tallies count a
// block's scores and margins against each bound a whole vector at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "histogram_count.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
//
#include "histogram_count.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace utilityd::metrics::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void CountAbove(const float* values, size_t n, const float* bounds,
                size_t bound_count, int64_t* above) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t lanes = hn::Lanes(d);
  const size_t whole = n / lanes * lanes;
  for (size_t k = 0; k < bound_count; ++k) {
    const auto bound = hn::Set(d, bounds[k]);
    // Each comparison is -1 in the lanes above the bound; NaN is above
    // none (prometheus-cpp counts it in the first bucket).
    auto minus = hn::Zero(di);
    for (size_t i = 0; i < whole; i += lanes) {
      const auto gt = hn::Gt(hn::LoadU(d, values + i), bound);
      minus = hn::Add(minus, hn::VecFromMask(di, hn::RebindMask(di, gt)));
    }
    int64_t count =
        -static_cast<int64_t>(hn::GetLane(hn::SumOfLanes(di, minus)));
    for (size_t i = whole; i < n; ++i) count += values[i] > bounds[k];
    above[k] = count;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace utilityd::metrics::internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace utilityd::metrics::internal {

HWY_EXPORT(CountAbove);

void CountAbove(const float* values, size_t n, const float* bounds,
                size_t bound_count, int64_t* above) {
  HWY_DYNAMIC_DISPATCH(CountAbove)(values, n, bounds, bound_count, above);
}

}  // namespace utilityd::metrics::internal
#endif  // HWY_ONCE
