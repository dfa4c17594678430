// What utilityd adds to prometheus-cpp (Debian's prometheus-cpp-dev), which
// holds every metric the service exports and writes the text format:
//
// - Family: a prometheus-cpp family whose children are named by label
//   values in the order the family declared its label names (the service
//   declares its metrics in one table; a child is looked up once and its
//   handle cached).
// - HistogramTally: a histogram's observations counted in a batch's own
//   working memory and handed to prometheus-cpp once
//   (Histogram::ObserveMultiple), so that nothing per decision reaches the
//   library.
// - ProcessCollector: the process_* metrics, read from /proc at scrape time
//   (prometheus-cpp's core has none).
// - TextExposition: every collectable in the text format 0.0.4, by
//   prometheus::TextSerializer.
//
//   prometheus::Registry registry;
//   metrics::Family<prometheus::Counter> decisions(
//       registry, "utilityd_decisions_total", "Decisions made.",
//       {"behaviour_set", "action"});
//   prometheus::Counter& eat = decisions.Add({"villager_needs", "eat"});
//   eat.Increment(n);                 // once per batch, the batch's count
//   std::string text = metrics::TextExposition({&registry});
#ifndef UTILITYD_METRICS_METRICS_H_
#define UTILITYD_METRICS_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "utilityd/base/sync.h"

namespace utilityd::metrics {

// A histogram's bucket upper bounds (strictly increasing; +Inf implied).
class Buckets {
 public:
  explicit Buckets(std::vector<double> bounds);

  const std::vector<double>& bounds() const { return bounds_; }
  // Number of buckets, +Inf included.
  size_t size() const { return bounds_.size() + 1; }
  // For each bound, the largest float not above it: a float v lies at or
  // below bound i exactly when v <= float_bounds()[i].
  const std::vector<float>& float_bounds() const { return float_bounds_; }

 private:
  std::vector<double> bounds_;
  std::vector<float> float_bounds_;
};

// Returns `count` bucket bounds from `start`, each `factor` times the last.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

// A prometheus-cpp family of T (prometheus::Counter, Gauge or Histogram)
// registered in a registry, with its label names in order. Thread-safe.
template <typename T>
class Family {
 public:
  // Registers the family (or finds the one of that name and labels);
  // `buckets` is required for histograms and ignored otherwise.
  Family(prometheus::Registry& registry, const std::string& name,
         const std::string& help, std::vector<std::string> label_names,
         std::shared_ptr<const Buckets> buckets = nullptr);
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // Returns the child whose labels have `values` (one per label name, in
  // order), creating it once. The reference stays valid until Clear. Takes
  // the family's lock and builds its label map: cache the result.
  T& Add(absl::Span<const std::string> values);
  T& Add(std::initializer_list<std::string> values) {
    return Add(absl::MakeConstSpan(values.begin(), values.size()));
  }

  // Removes every child (for info-style families republished on reload).
  // Handles obtained before are invalidated: never clear a family updated
  // on the request path.
  void Clear();

  // The histogram's buckets (null for counters and gauges).
  const Buckets* buckets() const { return buckets_.get(); }

 private:
  prometheus::Family<T>& family_;
  const std::vector<std::string> label_names_;
  const std::shared_ptr<const Buckets> buckets_;
  utilityd::Mutex mu_;
  absl::flat_hash_set<T*> children_ ABSL_GUARDED_BY(mu_);
};

extern template class Family<prometheus::Counter>;
extern template class Family<prometheus::Gauge>;
extern template class Family<prometheus::Histogram>;

// One histogram's observations, counted without atomics or locks by one
// thread (e.g. over one batch) and added to the histogram at once. After
// Flush the histogram holds what the same Observe calls would have left:
// the same buckets (NaN, as prometheus-cpp's Observe counts it, in the
// first) and the same sum. Values are floats, as scores and margins are; each
// lands in the bucket a double comparison with the bounds gives.
//
// Counting is bound-major: values wait in a small buffer, and each bound
// counts the values at or below it in one vectorised pass (a few
// instructions per value, with no per-value branch or dependent store).
class HistogramTally {
 public:
  // Counts for `h`, whose buckets are `b`; Reset first when reused for
  // another histogram. Drops what was counted and not flushed.
  void Reset(prometheus::Histogram* h, const Buckets* b);
  void Observe(float v) {
    if (pending_ == kChunk) Count();
    values_[pending_++] = v;
    sum_ += v;
    any_ = true;
  }
  // Counts v[0..n): as n Observe calls, in bulk (a block's values).
  void ObserveMany(const float* v, size_t n);
  // Adds what was counted to the histogram (one ObserveMultiple) and starts
  // again from zero.
  void Flush();

 private:
  static constexpr size_t kChunk = 256;
  // Moves the buffered values into counts_.
  void Count();

  prometheus::Histogram* h_ = nullptr;
  const Buckets* b_ = nullptr;
  std::vector<double> counts_;  // per bucket, +Inf last
  std::vector<int64_t> above_;  // Count's scratch: values above each bound
  std::array<float, kChunk> values_;
  size_t pending_ = 0;
  double sum_ = 0;
  bool any_ = false;
};

// The process_* metrics of Prometheus's client libraries (CPU seconds,
// resident and virtual memory, open and maximum file descriptors, start
// time), read from /proc at each Collect.
class ProcessCollector final : public prometheus::Collectable {
 public:
  ProcessCollector();
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double boot_time_ = 0;  // seconds since the epoch
};

// Returns every family of `collectables`, in order, in the text exposition
// format 0.0.4.
std::string TextExposition(
    std::initializer_list<const prometheus::Collectable*> collectables);

}  // namespace utilityd::metrics

#endif  // UTILITYD_METRICS_METRICS_H_
