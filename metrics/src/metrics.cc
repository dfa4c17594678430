#include "utilityd/metrics/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "utilityd/base/shortest_number.h"

namespace utilityd::metrics {

int ThisThreadShard() {
  static std::atomic<int> next{0};
  thread_local const int shard =
      next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

double Counter::Value() const {
  double total = 0;
  for (const Cell& c : cells_) total += c.value.load(std::memory_order_relaxed);
  return total;
}

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  for (Shard& s : shards_) {
    s.counts = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
    for (size_t i = 0; i <= bounds_.size(); ++i) s.counts[i].store(0);
  }
  // Padded to whole vectors with +Inf, which lies below no value.
  padded_ = bounds_;
  padded_.resize((bounds_.size() + kLanes - 1) / kLanes * kLanes,
                 std::numeric_limits<double>::infinity());
}

size_t Histogram::BucketOf(double v) const {
  // The first bucket whose upper bound is >= v (le semantics): the bounds
  // are sorted, so that is how many lie below v. Counted without a branch
  // (a binary search mispredicts on scores that vary from agent to agent;
  // these lists are short), two bounds to a comparison with the compiler's
  // vector extension (SSE2's width, in every x86-64 build), two comparisons
  // a step. One scalar comparison after another was a tenth of the
  // service's time on the block form. NaN lies below none: bucket 0.
  using Pair = double __attribute__((vector_size(2 * sizeof(double))));
  using Masks = int64_t __attribute__((vector_size(2 * sizeof(double))));
  const Pair x = {v, v};
  Masks low = {}, high = {};
  for (size_t i = 0; i < padded_.size(); i += kLanes) {
    Pair a, b;
    std::memcpy(&a, padded_.data() + i, sizeof a);
    std::memcpy(&b, padded_.data() + i + 2, sizeof b);
    low += a < x;  // -1 in each lane where the bound lies below
    high += b < x;
  }
  const Masks sum = low + high;
  return static_cast<size_t>(-(sum[0] + sum[1]));
}

void Histogram::Observe(double v) {
  Shard& s = shards_[ThisThreadShard()];
  s.counts[BucketOf(v)].fetch_add(1, std::memory_order_relaxed);
  s.sum.fetch_add(v, std::memory_order_relaxed);
}

void Histogram::AddCounts(absl::Span<const uint64_t> counts, double sum) {
  Shard& s = shards_[ThisThreadShard()];
  for (size_t i = 0; i < counts.size() && i <= bounds_.size(); ++i) {
    if (counts[i] != 0)
      s.counts[i].fetch_add(counts[i], std::memory_order_relaxed);
  }
  s.sum.fetch_add(sum, std::memory_order_relaxed);
}

void HistogramTally::Flush() {
  if (!any_) return;
  h_->AddCounts(counts_, sum_);
  std::fill(counts_.begin(), counts_.end(), 0);
  sum_ = 0;
  any_ = false;
}

Histogram::Snapshot Histogram::Collect() const {
  Snapshot snap;
  snap.cumulative.assign(bounds_.size() + 1, 0);
  for (const Shard& s : shards_) {
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      snap.cumulative[i] += s.counts[i].load(std::memory_order_relaxed);
    }
    snap.sum += s.sum.load(std::memory_order_relaxed);
  }
  for (size_t i = 1; i < snap.cumulative.size(); ++i) {
    snap.cumulative[i] += snap.cumulative[i - 1];
  }
  snap.count = snap.cumulative.back();
  return snap;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> bounds;
  double b = start;
  for (int i = 0; i < count; ++i, b *= factor) bounds.push_back(b);
  return bounds;
}

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::abs(v) < 1e15) {
    return absl::StrFormat("%.0f", v);
  }
  return ShortestNumber(v);
}

std::string FamilyBase::LabelText(const std::vector<std::string>& values,
                                  absl::string_view extra_name,
                                  absl::string_view extra_value) const {
  if (values.empty() && extra_name.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < label_names_.size() && i < values.size(); ++i) {
    if (i > 0) out += ",";
    absl::StrAppend(&out, label_names_[i], "=\"", EscapeLabelValue(values[i]),
                    "\"");
  }
  if (!extra_name.empty()) {
    if (!values.empty()) out += ",";
    absl::StrAppend(&out, extra_name, "=\"", extra_value, "\"");
  }
  out += "}";
  return out;
}

void FamilyBase::Header(std::string* out) const {
  static constexpr const char* kTypes[] = {"counter", "gauge", "histogram"};
  absl::StrAppend(out, "# HELP ", name_, " ", EscapeHelp(help_), "\n",
                  "# TYPE ", name_, " ", kTypes[static_cast<int>(type_)], "\n");
}

template <>
void Family<Counter>::Serialize(std::string* out) const {
  Header(out);
  utilityd::MutexLock lock(&mu_);
  for (const auto& [values, c] : children_) {
    absl::StrAppend(out, name_, LabelText(values), " ", FormatValue(c->Value()),
                    "\n");
  }
}

template <>
void Family<Gauge>::Serialize(std::string* out) const {
  Header(out);
  utilityd::MutexLock lock(&mu_);
  for (const auto& [values, g] : children_) {
    absl::StrAppend(out, name_, LabelText(values), " ", FormatValue(g->Value()),
                    "\n");
  }
}

template <>
void Family<Histogram>::Serialize(std::string* out) const {
  Header(out);
  utilityd::MutexLock lock(&mu_);
  for (const auto& [values, h] : children_) {
    const Histogram::Snapshot snap = h->Collect();
    for (size_t i = 0; i < h->bounds().size(); ++i) {
      absl::StrAppend(out, name_, "_bucket",
                      LabelText(values, "le", FormatValue(h->bounds()[i])), " ",
                      snap.cumulative[i], "\n");
    }
    absl::StrAppend(out, name_, "_bucket", LabelText(values, "le", "+Inf"), " ",
                    snap.count, "\n");
    absl::StrAppend(out, name_, "_sum", LabelText(values), " ",
                    FormatValue(snap.sum), "\n");
    absl::StrAppend(out, name_, "_count", LabelText(values), " ", snap.count,
                    "\n");
  }
}

template <typename T>
Family<T>& Registry::Add(std::unique_ptr<Family<T>> family) {
  Family<T>* raw = family.get();
  utilityd::MutexLock lock(&mu_);
  families_.push_back(std::move(family));
  return *raw;
}

Family<Counter>& Registry::AddCounter(std::string name, std::string help,
                                      std::vector<std::string> labels) {
  return Add(std::make_unique<Family<Counter>>(
      std::move(name), std::move(help), MetricType::kCounter, std::move(labels),
      [] { return std::make_unique<Counter>(); }));
}

Family<Gauge>& Registry::AddGauge(std::string name, std::string help,
                                  std::vector<std::string> labels) {
  return Add(std::make_unique<Family<Gauge>>(
      std::move(name), std::move(help), MetricType::kGauge, std::move(labels),
      [] { return std::make_unique<Gauge>(); }));
}

Family<Gauge>& Registry::AddObservedCounter(std::string name, std::string help,
                                            std::vector<std::string> labels) {
  return Add(std::make_unique<Family<Gauge>>(
      std::move(name), std::move(help), MetricType::kCounter, std::move(labels),
      [] { return std::make_unique<Gauge>(); }));
}

Family<Histogram>& Registry::AddHistogram(std::string name, std::string help,
                                          std::vector<std::string> labels,
                                          std::vector<double> bounds) {
  return Add(std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), MetricType::kHistogram,
      std::move(labels),
      [bounds] { return std::make_unique<Histogram>(bounds); }));
}

void Registry::AddCollector(std::function<void()> collect) {
  utilityd::MutexLock lock(&mu_);
  collectors_.push_back(std::move(collect));
}

std::string Registry::Serialize() const {
  std::vector<std::function<void()>> collectors;
  {
    utilityd::MutexLock lock(&mu_);
    collectors = collectors_;
  }
  for (const auto& c : collectors) c();
  std::string out;
  utilityd::MutexLock lock(&mu_);
  for (const auto& f : families_) f->Serialize(&out);
  return out;
}

namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

void AddProcessMetrics(Registry* registry) {
  Gauge& cpu =
      registry
          ->AddObservedCounter("process_cpu_seconds_total",
                               "Total user and system CPU time spent in "
                               "seconds.")
          .Add({});
  Gauge& rss = registry
                   ->AddGauge("process_resident_memory_bytes",
                              "Resident memory size in bytes.")
                   .Add({});
  Gauge& vsize = registry
                     ->AddGauge("process_virtual_memory_bytes",
                                "Virtual memory size in bytes.")
                     .Add({});
  Gauge& open_fds =
      registry->AddGauge("process_open_fds", "Number of open file descriptors.")
          .Add({});
  Gauge& max_fds = registry
                       ->AddGauge("process_max_fds",
                                  "Maximum number of open file "
                                  "descriptors.")
                       .Add({});
  Gauge& start = registry
                     ->AddGauge("process_start_time_seconds",
                                "Start time of the process since unix "
                                "epoch in seconds.")
                     .Add({});
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  // Boot time, to turn the start time in ticks since boot into epoch seconds.
  double boot_time = 0;
  for (absl::string_view line : absl::StrSplit(ReadFile("/proc/stat"), '\n')) {
    if (absl::ConsumePrefix(&line, "btime "))
      (void)absl::SimpleAtod(line, &boot_time);
  }
  registry->AddCollector([=, &cpu, &rss, &vsize, &open_fds, &max_fds, &start] {
    // /proc/self/stat: fields after the parenthesised command name.
    const std::string stat = ReadFile("/proc/self/stat");
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos) {
      std::vector<std::string> f =
          absl::StrSplit(stat.substr(paren + 2), ' ', absl::SkipEmpty());
      // f[0] is field 3 (state): utime 14, stime 15, starttime 22,
      // vsize 23, rss 24.
      auto field = [&](int n) {
        double v = 0;
        if (n - 3 < static_cast<int>(f.size())) {
          (void)absl::SimpleAtod(f[n - 3], &v);
        }
        return v;
      };
      cpu.Set((field(14) + field(15)) / ticks);
      start.Set(boot_time + field(22) / ticks);
      vsize.Set(field(23));
      rss.Set(field(24) * page);
    }
    std::error_code ec;
    int fds = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++fds;
    }
    open_fds.Set(fds);
    for (absl::string_view line :
         absl::StrSplit(ReadFile("/proc/self/limits"), '\n')) {
      if (!absl::ConsumePrefix(&line, "Max open files")) continue;
      std::vector<absl::string_view> parts =
          absl::StrSplit(line, ' ', absl::SkipEmpty());
      double v = 0;
      if (!parts.empty() && absl::SimpleAtod(parts[0], &v)) max_fds.Set(v);
    }
  });
}

}  // namespace utilityd::metrics
