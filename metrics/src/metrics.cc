#include "utilityd/metrics/metrics.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "histogram_count.h"

namespace utilityd::metrics {

Buckets::Buckets(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  for (double b : bounds_) {
    float f = static_cast<float>(b);  // nearest: may lie above b
    if (static_cast<double>(f) > b) {
      f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    }
    float_bounds_.push_back(f);
  }
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  double b = start;
  for (int i = 0; i < count; ++i, b *= factor) bounds.push_back(b);
  return bounds;
}

namespace {

prometheus::Family<prometheus::Counter>& Register(prometheus::Registry& r,
                                                  const std::string& name,
                                                  const std::string& help,
                                                  const prometheus::Counter*) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Gauge>& Register(prometheus::Registry& r,
                                                const std::string& name,
                                                const std::string& help,
                                                const prometheus::Gauge*) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Histogram>& Register(
    prometheus::Registry& r, const std::string& name, const std::string& help,
    const prometheus::Histogram*) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}

}  // namespace

template <typename T>
Family<T>::Family(prometheus::Registry& registry, const std::string& name,
                  const std::string& help, std::vector<std::string> label_names,
                  std::shared_ptr<const Buckets> buckets)
    : family_(Register(registry, name, help, static_cast<const T*>(nullptr))),
      label_names_(std::move(label_names)),
      buckets_(std::move(buckets)) {}

template <typename T>
T& Family<T>::Add(absl::Span<const std::string> values) {
  prometheus::Labels labels;
  for (size_t i = 0; i < label_names_.size() && i < values.size(); ++i) {
    labels.emplace(label_names_[i], values[i]);
  }
  T* child;
  if constexpr (std::is_same_v<T, prometheus::Histogram>) {
    child = &family_.Add(labels, buckets_->bounds());
  } else {
    child = &family_.Add(labels);
  }
  utilityd::MutexLock lock(&mu_);
  children_.insert(child);
  return *child;
}

template <typename T>
void Family<T>::Clear() {
  utilityd::MutexLock lock(&mu_);
  for (T* child : children_) family_.Remove(child);
  children_.clear();
}

template class Family<prometheus::Counter>;
template class Family<prometheus::Gauge>;
template class Family<prometheus::Histogram>;

void HistogramTally::Reset(prometheus::Histogram* h, const Buckets* b) {
  h_ = h;
  b_ = b;
  counts_.assign(b->size(), 0);
  above_.assign(b->float_bounds().size(), 0);
  pending_ = 0;
  sum_ = 0;
  any_ = false;
}

void HistogramTally::Count() {
  if (pending_ == 0) return;
  // A value is at or below a bound when it is not above it (NaN too, which
  // prometheus-cpp's Observe counts in the first bucket).
  const std::vector<float>& bounds = b_->float_bounds();
  internal::CountAbove(values_.data(), pending_, bounds.data(), bounds.size(),
                       above_.data());
  int64_t below = 0;  // values at or below the previous bound
  for (size_t k = 0; k < bounds.size(); ++k) {
    const int64_t at_or_below = static_cast<int64_t>(pending_) - above_[k];
    counts_[k] += static_cast<double>(at_or_below - below);
    below = at_or_below;
  }
  counts_.back() += static_cast<double>(static_cast<int64_t>(pending_) - below);
  pending_ = 0;
}

void HistogramTally::ObserveMany(const float* v, size_t n) {
  while (n > 0) {
    if (pending_ == kChunk) Count();
    const size_t take = std::min(n, kChunk - pending_);
    // Four partial sums: no chain of dependent additions.
    double sums[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= take; i += 4) {
      for (size_t j = 0; j < 4; ++j) sums[j] += v[i + j];
    }
    for (; i < take; ++i) sums[0] += v[i];
    std::memcpy(values_.data() + pending_, v, take * sizeof(float));
    pending_ += take;
    sum_ += (sums[0] + sums[1]) + (sums[2] + sums[3]);
    any_ = true;
    v += take;
    n -= take;
  }
}

void HistogramTally::Flush() {
  if (!any_) return;
  Count();
  h_->ObserveMultiple(counts_, sum_);
  std::fill(counts_.begin(), counts_.end(), 0);
  sum_ = 0;
  any_ = false;
}

namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

prometheus::MetricFamily Single(const char* name, const char* help,
                                prometheus::MetricType type, double value) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return {.name = name, .help = help, .type = type, .metric = {m}};
}

}  // namespace

ProcessCollector::ProcessCollector() {
  for (absl::string_view line : absl::StrSplit(ReadFile("/proc/stat"), '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      (void)absl::SimpleAtod(line, &boot_time_);
    }
  }
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  static const double kTicks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  static const double kPage = static_cast<double>(::sysconf(_SC_PAGESIZE));
  // /proc/self/stat: the fields after the parenthesised command name; f[0]
  // is field 3 (state): utime 14, stime 15, starttime 22, vsize 23, rss 24.
  const std::string stat = ReadFile("/proc/self/stat");
  std::vector<std::string> f;
  if (const size_t paren = stat.rfind(')'); paren != std::string::npos) {
    f = absl::StrSplit(stat.substr(paren + 2), ' ', absl::SkipEmpty());
  }
  auto field = [&](int n) {
    double v = 0;
    if (n - 3 < static_cast<int>(f.size()))
      (void)absl::SimpleAtod(f[n - 3], &v);
    return v;
  };
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  double max_fds = 0;
  for (absl::string_view line :
       absl::StrSplit(ReadFile("/proc/self/limits"), '\n')) {
    if (!absl::ConsumePrefix(&line, "Max open files")) continue;
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!parts.empty()) (void)absl::SimpleAtod(parts[0], &max_fds);
  }
  using prometheus::MetricType;
  return {
      Single("process_cpu_seconds_total",
             "Total user and system CPU time spent in seconds.",
             MetricType::Counter, (field(14) + field(15)) / kTicks),
      Single("process_resident_memory_bytes", "Resident memory size in bytes.",
             MetricType::Gauge, field(24) * kPage),
      Single("process_virtual_memory_bytes", "Virtual memory size in bytes.",
             MetricType::Gauge, field(23)),
      Single("process_open_fds", "Number of open file descriptors.",
             MetricType::Gauge, fds),
      Single("process_max_fds", "Maximum number of open file descriptors.",
             MetricType::Gauge, max_fds),
      Single("process_start_time_seconds",
             "Start time of the process since unix epoch in seconds.",
             MetricType::Gauge, boot_time_ + field(22) / kTicks),
  };
}

std::string TextExposition(
    std::initializer_list<const prometheus::Collectable*> collectables) {
  std::vector<prometheus::MetricFamily> families;
  for (const prometheus::Collectable* c : collectables) {
    std::vector<prometheus::MetricFamily> more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace utilityd::metrics
