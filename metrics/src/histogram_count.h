// Bucket counting for HistogramTally, on the best SIMD target the CPU has
// (Highway's dynamic dispatch). Internal to the metrics library.
#ifndef UTILITYD_METRICS_SRC_HISTOGRAM_COUNT_H_
#define UTILITYD_METRICS_SRC_HISTOGRAM_COUNT_H_

#include <cstddef>
#include <cstdint>

namespace utilityd::metrics::internal {

// above[k] = how many of values[0..n) are above bounds[k] (NaN is above
// none), for each of the bound_count bounds.
void CountAbove(const float* values, size_t n, const float* bounds,
                size_t bound_count, int64_t* above);

}  // namespace utilityd::metrics::internal

#endif  // UTILITYD_METRICS_SRC_HISTOGRAM_COUNT_H_
