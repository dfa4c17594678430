// Fuzzes the histogram tally: bucket bounds and float values from the
// input (NaN, infinities, subnormals, values on and beside the bounds),
// then checks that a tally flushed in batches leaves a prometheus-cpp
// histogram exactly as that histogram's own Observe of each value does,
// whether the tally is handed the values one by one or in runs
// (ObserveMany, as a block's are).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "utilityd/metrics/metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // First byte: how many bounds (0..15); then the bounds as floats, made
  // finite, sorted and unique; the rest are the values.
  const size_t n = data[0] % 16;
  ++data, --size;
  std::vector<double> bounds;
  for (size_t k = 0; k < n && size >= 4; ++k, data += 4, size -= 4) {
    float f;
    std::memcpy(&f, data, 4);
    if (std::isfinite(f)) bounds.push_back(f * 1.000001);  // off the floats
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  const utilityd::metrics::Buckets buckets(bounds);
  prometheus::Histogram direct(bounds), batched(bounds), runs(bounds);
  utilityd::metrics::HistogramTally tally, in_runs;
  tally.Reset(&batched, &buckets);
  in_runs.Reset(&runs, &buckets);
  std::vector<float> run;
  size_t i = 0;
  for (; size >= 4; data += 4, size -= 4, ++i) {
    float v;
    std::memcpy(&v, data, 4);
    // Now and then a value on a bound, as a float.
    if (!bounds.empty() && i % 5 == 0) {
      v = static_cast<float>(bounds[i % bounds.size()]);
    }
    direct.Observe(v);
    tally.Observe(v);
    run.push_back(v);
    // Runs of 1 to 37 values, not whole vectors, across the chunks.
    if (run.size() == 1 + i % 37) {
      in_runs.ObserveMany(run.data(), run.size());
      run.clear();
    }
    if (i % 300 == 299) {  // batches across the chunks
      tally.Flush();
      in_runs.Flush();
    }
  }
  in_runs.ObserveMany(run.data(), run.size());
  tally.Flush();
  in_runs.Flush();
  const auto a = direct.Collect().histogram;
  for (const auto& b :
       {batched.Collect().histogram, runs.Collect().histogram}) {
    if (a.sample_count != b.sample_count ||
        a.bucket.size() != b.bucket.size()) {
      std::abort();
    }
    for (size_t k = 0; k < a.bucket.size(); ++k) {
      if (a.bucket[k].cumulative_count != b.bucket[k].cumulative_count) {
        std::abort();
      }
    }
  }
  return 0;
}
