#include "utilityd/metrics/metrics.h"

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace utilityd::metrics {
namespace {

using ::testing::HasSubstr;

TEST(MetricsTest, SerialisesTheTextFormatExactly) {
  Registry r;
  Family<Counter>& decisions =
      r.AddCounter("utilityd_decisions_total", "Decisions made.",
                   {"behaviour_set", "action"});
  decisions.Add({"arena_mage", "attack"}).Increment(3);
  decisions.Add({"arena_mage", "heal"}).Increment();
  r.AddGauge("utilityd_active_streams", "Open streams.").Add({}).Set(2);
  Family<Histogram>& h = r.AddHistogram("utilityd_batch_agents",
                                        "Agents per batch.", {}, {1, 4, 16});
  Histogram& batch = h.Add({});
  for (double v : {1.0, 3.0, 4.0, 20.0}) batch.Observe(v);
  EXPECT_EQ(r.Serialize(),
            "# HELP utilityd_decisions_total Decisions made.\n"
            "# TYPE utilityd_decisions_total counter\n"
            "utilityd_decisions_total{behaviour_set=\"arena_mage\",action="
            "\"attack\"} 3\n"
            "utilityd_decisions_total{behaviour_set=\"arena_mage\",action="
            "\"heal\"} 1\n"
            "# HELP utilityd_active_streams Open streams.\n"
            "# TYPE utilityd_active_streams gauge\n"
            "utilityd_active_streams 2\n"
            "# HELP utilityd_batch_agents Agents per batch.\n"
            "# TYPE utilityd_batch_agents histogram\n"
            "utilityd_batch_agents_bucket{le=\"1\"} 1\n"
            "utilityd_batch_agents_bucket{le=\"4\"} 3\n"
            "utilityd_batch_agents_bucket{le=\"16\"} 3\n"
            "utilityd_batch_agents_bucket{le=\"+Inf\"} 4\n"
            "utilityd_batch_agents_sum 28\n"
            "utilityd_batch_agents_count 4\n");
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  Registry r;
  r.AddCounter("x_total", "Line one\nback\\slash", {"l"})
      .Add({"a\"quote\\and\nnewline"})
      .Increment();
  EXPECT_EQ(r.Serialize(),
            "# HELP x_total Line one\\nback\\\\slash\n"
            "# TYPE x_total counter\n"
            "x_total{l=\"a\\\"quote\\\\and\\nnewline\"} 1\n");
}

TEST(MetricsTest, HistogramLabelsComeBeforeLe) {
  Registry r;
  r.AddHistogram("d_seconds", "d", {"behaviour_set"}, {0.5})
      .Add({"s"})
      .Observe(0.25);
  EXPECT_THAT(
      r.Serialize(),
      HasSubstr("d_seconds_bucket{behaviour_set=\"s\",le=\"0.5\"} 1\n"));
  EXPECT_THAT(r.Serialize(),
              HasSubstr("d_seconds_sum{behaviour_set=\"s\"} 0.25\n"));
}

TEST(MetricsTest, ConcurrentUpdatesAreNotLost) {
  Counter c;
  Histogram h({10});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) {
        c.Increment();
        h.Observe(i % 20);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.Value(), 400000);
  const Histogram::Snapshot s = h.Collect();
  EXPECT_EQ(s.count, 400000u);
  EXPECT_EQ(s.cumulative[0], 4u * 100000 * 11 / 20);  // values 0..10
}

// A tally flushed once per batch leaves a histogram as observing each value
// would: the same buckets and count, the sum within rounding; flushing
// again adds nothing, and the tally counts afresh after a flush.
TEST(MetricsTest, HistogramTallyAddsWhatObserveWould) {
  Histogram direct(ExponentialBuckets(0.01, 2, 8));
  Histogram batched(ExponentialBuckets(0.01, 2, 8));
  HistogramTally tally;
  tally.Reset(&batched);
  const double values[] = {0.0,  0.005, 0.01, 0.011, 0.5,
                           1.28, 1.29,  7.0,  -1.0,  std::nan("")};
  for (int round = 0; round < 3; ++round) {
    for (double v : values) {
      direct.Observe(v + round);
      tally.Observe(v + round);
    }
    tally.Flush();
    tally.Flush();  // nothing new
  }
  const Histogram::Snapshot a = direct.Collect(), b = batched.Collect();
  EXPECT_EQ(a.cumulative, b.cumulative);
  EXPECT_EQ(a.count, 30u);
  EXPECT_EQ(b.count, 30u);
  EXPECT_TRUE(std::isnan(a.sum) && std::isnan(b.sum));  // a NaN was observed
  EXPECT_EQ(batched.BucketOf(0.01), 0u);
  EXPECT_EQ(batched.BucketOf(0.0100001), 1u);
  EXPECT_EQ(batched.BucketOf(1e9), 8u);  // +Inf
}

// BucketOf counts the bounds below a value, four to a comparison: the
// same bucket as one bound at a time, for every list length around the
// padding (1 to 9 bounds) and for values on, between and beyond the bounds,
// the infinities and NaN.
TEST(MetricsTest, BucketOfIsTheNumberOfBoundsBelow) {
  std::vector<double> values = {-std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::infinity(),
                                std::nan(""), -1e300, 1e300};
  for (int i = -5; i <= 50; ++i) {
    values.push_back(i * 0.05);
    values.push_back(std::nextafter(i * 0.05, 1e9));
    values.push_back(std::nextafter(i * 0.05, -1e9));
  }
  for (size_t n = 1; n <= 9; ++n) {
    std::vector<double> bounds;
    for (size_t k = 0; k < n; ++k) bounds.push_back(0.05 + 0.3 * k);
    const Histogram h(bounds);
    for (double v : values) {
      size_t below = 0;
      for (double b : bounds) below += b < v;
      EXPECT_EQ(h.BucketOf(v), below) << n << " bounds, value " << v;
    }
  }
}

TEST(MetricsTest, FormatsSpecialValues) {
  EXPECT_EQ(FormatValue(1.5), "1.5");
  EXPECT_EQ(FormatValue(2), "2");
  EXPECT_EQ(FormatValue(1e-6), "1e-06");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatValue(NAN), "NaN");
}

TEST(MetricsTest, ProcessMetricsReadProc) {
  Registry r;
  AddProcessMetrics(&r);
  const std::string text = r.Serialize();
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "process_resident_memory_bytes [1-9][0-9]{5,}"));
  EXPECT_THAT(text, ::testing::ContainsRegex("process_open_fds [1-9]"));
  EXPECT_THAT(text, ::testing::ContainsRegex("process_max_fds [1-9]"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "process_start_time_seconds 1[7-9][0-9]{8}"));
}

}  // namespace
}  // namespace utilityd::metrics
