// A small Prometheus metrics library (prometheus-cpp is not packaged for
// Debian 12), on prometheus-cpp's model: families of counters, gauges and
// histograms with labels, registered once; a child per label set, looked up
// once and then updated through its handle. Updates take no lock and
// allocate nothing: counters and histograms add into per-thread-shard
// atomic cells that are summed at scrape time.
//
//   Registry registry;
//   Family<Counter>& decisions = registry.AddCounter(
//       "utilityd_decisions_total", "Decisions made.", {"behaviour_set",
//       "action"});
//   Counter& eat = decisions.Add({"villager_needs", "eat"});   // cache this
//   eat.Increment();                                             // hot path
//   std::string text = registry.Serialize();   // text format 0.0.4
#ifndef UTILITYD_METRICS_METRICS_H_
#define UTILITYD_METRICS_METRICS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/base/sync.h"

namespace utilityd::metrics {

// Number of cells a counter or histogram spreads its updates over; threads
// pick one by a thread-local index, so concurrent updates rarely share a
// cache line.
inline constexpr int kShards = 8;

// Returns this thread's shard.
int ThisThreadShard();

class Counter {
 public:
  // Adds `v` (>= 0). Lock-free.
  void Increment(double v = 1.0) {
    cells_[ThisThreadShard()].value.fetch_add(v, std::memory_order_relaxed);
  }
  double Value() const;

 private:
  struct alignas(64) Cell {
    std::atomic<double> value{0};
  };
  Cell cells_[kShards];
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Increment(double v = 1.0) {
    value_.fetch_add(v, std::memory_order_relaxed);
  }
  void Decrement(double v = 1.0) { Increment(-v); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // `bounds` are the buckets' upper bounds, strictly increasing; +Inf is
  // implied.
  explicit Histogram(std::vector<double> bounds);

  // Counts `v` in its bucket and adds it to the sum. Lock-free.
  void Observe(double v);
  // The bucket Observe(v) counts `v` in: the first whose upper bound is
  // >= v, bounds().size() for +Inf (and for NaN, 0).
  size_t BucketOf(double v) const;
  // Adds many observations at once: counts[i] in bucket i (bounds().size()
  // + 1 of them) and their sum. What HistogramTally::Flush calls.
  void AddCounts(absl::Span<const uint64_t> counts, double sum);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Collect() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  struct alignas(64) Shard {
    std::unique_ptr<std::atomic<uint64_t>[]> counts;  // bounds + 1 buckets
    std::atomic<double> sum{0};
  };
  static constexpr size_t kLanes = 4;  // BucketOf's bounds per comparison
  std::vector<double> bounds_;
  std::vector<double> padded_;  // bounds_, then +Inf to whole kLanes
  Shard shards_[kShards];
};

// Counts observations for one Histogram without atomics (one thread, e.g.
// one batch) and adds them to it at once: Flush leaves the histogram as the
// same Observe calls would (the sum may differ in its last bits: it is
// added up in another order).
class HistogramTally {
 public:
  // Counts for `h`; Reset first when reused for another histogram.
  void Reset(Histogram* h) {
    h_ = h;
    counts_.assign(h->bounds().size() + 1, 0);
    sum_ = 0;
    any_ = false;
  }
  void Observe(double v) {
    ++counts_[h_->BucketOf(v)];
    sum_ += v;
    any_ = true;
  }
  // Adds what was counted to the histogram and starts again from zero.
  void Flush();

 private:
  Histogram* h_ = nullptr;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  bool any_ = false;
};

// Returns `count` bucket bounds from `start`, each `factor` times the last.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

enum class MetricType { kCounter, kGauge, kHistogram };

// Everything a family knows, for exposition.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names)
      : name_(std::move(name)),
        help_(std::move(help)),
        type_(type),
        label_names_(std::move(label_names)) {}
  virtual ~FamilyBase() = default;
  // Appends this family's HELP, TYPE and sample lines.
  virtual void Serialize(std::string* out) const = 0;
  const std::string& name() const { return name_; }

 protected:
  // Formats `{a="1",b="2"}` with values escaped; empty for no labels.
  std::string LabelText(const std::vector<std::string>& values,
                        absl::string_view extra_name = "",
                        absl::string_view extra_value = "") const;
  void Header(std::string* out) const;

  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
};

// A family of metrics of one type, one child per label-value list.
template <typename T>
class Family final : public FamilyBase {
 public:
  using Factory = std::function<std::unique_ptr<T>()>;
  Family(std::string name, std::string help, MetricType type,
         std::vector<std::string> label_names, Factory factory)
      : FamilyBase(std::move(name), std::move(help), type,
                   std::move(label_names)),
        factory_(std::move(factory)) {}

  // Returns the child for `values` (one per label name), creating it once.
  // The reference stays valid until Clear. Takes a lock: cache the result.
  T& Add(const std::vector<std::string>& values) {
    utilityd::MutexLock lock(&mu_);
    auto& slot = children_[values];
    if (slot == nullptr) slot = factory_();
    return *slot;
  }

  // Drops every child (for info-style families rebuilt on reload). Handles
  // obtained before are invalidated: never clear a family updated on the
  // hot path.
  void Clear() {
    utilityd::MutexLock lock(&mu_);
    children_.clear();
  }

  void Serialize(std::string* out) const override;

 private:
  Factory factory_;
  mutable utilityd::Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_
      ABSL_GUARDED_BY(mu_);
};

// Owns families and scrape-time collectors; serialises them all.
class Registry {
 public:
  Family<Counter>& AddCounter(std::string name, std::string help,
                              std::vector<std::string> labels = {});
  Family<Gauge>& AddGauge(std::string name, std::string help,
                          std::vector<std::string> labels = {});
  // A counter whose value is read from elsewhere at scrape time (e.g. CPU
  // seconds from /proc): settable cells, exposed with TYPE counter.
  Family<Gauge>& AddObservedCounter(std::string name, std::string help,
                                    std::vector<std::string> labels = {});
  Family<Histogram>& AddHistogram(std::string name, std::string help,
                                  std::vector<std::string> labels,
                                  std::vector<double> bounds);

  // Runs `collect` before every Serialize (e.g. to read /proc or count open
  // streams into gauges).
  void AddCollector(std::function<void()> collect);

  // Returns every family in the text exposition format 0.0.4.
  std::string Serialize() const;

 private:
  template <typename T>
  Family<T>& Add(std::unique_ptr<Family<T>> family);

  mutable utilityd::Mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> collectors_ ABSL_GUARDED_BY(mu_);
};

// Escapes a label value: backslash, double quote and newline.
std::string EscapeLabelValue(absl::string_view value);
// Escapes HELP text: backslash and newline.
std::string EscapeHelp(absl::string_view help);
// Formats a sample value as Prometheus expects (+Inf, -Inf, NaN, shortest
// round-trip decimal otherwise).
std::string FormatValue(double v);

// Registers process_* metrics (CPU, resident and virtual memory, open and
// max file descriptors, start time) read from /proc at scrape time.
void AddProcessMetrics(Registry* registry);

}  // namespace utilityd::metrics

#endif  // UTILITYD_METRICS_METRICS_H_
