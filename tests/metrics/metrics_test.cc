#include "utilityd/metrics/metrics.h"

#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"

namespace utilityd::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;
using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const Buckets> Bounds(std::vector<double> b) {
  return std::make_shared<const Buckets>(std::move(b));
}

// Label values land on their names in the order the family declared them,
// whatever the alphabet says, and the text is prometheus-cpp's.
TEST(MetricsTest, LabelValuesFollowTheDeclaredNames) {
  prometheus::Registry r;
  Family<Counter> decisions(r, "utilityd_decisions_total", "Decisions made.",
                            {"behaviour_set", "action"});
  decisions.Add({"arena_mage", "attack"}).Increment(3);
  decisions.Add({"arena_mage", "heal"}).Increment();
  Counter& again = decisions.Add({"arena_mage", "attack"});
  EXPECT_EQ(again.Value(), 3);  // the same child
  Family<Histogram> agents(r, "utilityd_batch_agents", "Agents per batch.", {},
                           Bounds({1, 4, 16}));
  for (double v : {1.0, 3.0, 4.0, 20.0}) agents.Add({}).Observe(v);
  const std::string text = TextExposition({&r});
  EXPECT_THAT(text, HasSubstr("# TYPE utilityd_decisions_total counter\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_decisions_total{action=\"attack\","
                              "behaviour_set=\"arena_mage\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_decisions_total{action=\"heal\","
                              "behaviour_set=\"arena_mage\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE utilityd_batch_agents histogram\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_batch_agents_bucket{le=\"1\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_batch_agents_bucket{le=\"4\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_batch_agents_bucket{le=\"16\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_batch_agents_bucket{le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_batch_agents_sum 28\n"));
  EXPECT_THAT(text, HasSubstr("utilityd_batch_agents_count 4\n"));
}

// Clear removes what the family added (set info republished on reload);
// a second Family of the same name and labels is the same family.
TEST(MetricsTest, ClearRemovesTheChildrenAndNamesAreShared) {
  prometheus::Registry r;
  Family<Gauge> info(r, "x_info", "Info.", {"revision"});
  info.Add({"r1"}).Set(1);
  EXPECT_THAT(TextExposition({&r}), HasSubstr("x_info{revision=\"r1\"} 1\n"));
  info.Clear();
  info.Add({"r2"}).Set(1);
  const std::string text = TextExposition({&r});
  EXPECT_THAT(text, Not(HasSubstr("r1")));
  EXPECT_THAT(text, HasSubstr("x_info{revision=\"r2\"} 1\n"));
  Family<Gauge> same(r, "x_info", "Info.", {"revision"});
  EXPECT_EQ(same.Add({"r2"}).Value(), 1);
}

// For every bound, the float bound holds exactly the floats a double
// comparison puts at or below it: on the bound, one float either side.
TEST(MetricsTest, FloatBoundsCompareAsDoublesDo) {
  const Buckets b({0.0, 0.005, 0.01, 0.1, 0.3, 1.0 / 3, 0.7, 1.5, 5e-6, 1e300});
  ASSERT_EQ(b.float_bounds().size(), b.bounds().size());
  for (size_t k = 0; k < b.bounds().size(); ++k) {
    const float near = static_cast<float>(b.bounds()[k]);
    for (float v :
         {near, std::nextafter(near, 1e30f), std::nextafter(near, -1e30f)}) {
      EXPECT_EQ(v <= b.float_bounds()[k],
                static_cast<double>(v) <= b.bounds()[k])
          << "bound " << b.bounds()[k] << ", value " << v;
    }
  }
}

std::vector<uint64_t> Cumulative(const Histogram& h) {
  std::vector<uint64_t> out;
  for (const auto& bucket : h.Collect().histogram.bucket) {
    out.push_back(bucket.cumulative_count);
  }
  return out;
}

// A tally flushed once per batch leaves a histogram as prometheus-cpp's own
// Observe of each value would: the same buckets (values on the bounds,
// floats just above them, the infinities, NaN) and count, over batches that
// span several of the tally's chunks; flushing again adds nothing.
TEST(MetricsTest, HistogramTallyAddsWhatObserveWould) {
  const Buckets b({0.0, 0.005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0});
  Histogram direct(b.bounds()), batched(b.bounds());
  HistogramTally tally;
  tally.Reset(&batched, &b);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-0.2f, 1.3f);
  std::vector<float> special = {std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN()};
  for (double bound : b.bounds()) {
    const float f = static_cast<float>(bound);
    special.insert(special.end(),
                   {f, std::nextafter(f, 2.0f), std::nextafter(f, -2.0f)});
  }
  for (int batch : {1, 255, 256, 257, 1000, 3}) {
    double expected_sum = 0;
    for (int i = 0; i < batch; ++i) {
      const float v =
          i % 7 == 0 ? special[i / 7 % special.size()] : uniform(rng);
      direct.Observe(v);
      tally.Observe(v);
      expected_sum += v;
    }
    tally.Flush();
    tally.Flush();  // nothing new
    EXPECT_EQ(Cumulative(batched), Cumulative(direct)) << batch;
  }
  const ClientMetric::Histogram a = direct.Collect().histogram;
  const ClientMetric::Histogram c = batched.Collect().histogram;
  EXPECT_EQ(c.sample_count, 1u + 255 + 256 + 257 + 1000 + 3);
  EXPECT_EQ(a.sample_count, c.sample_count);
  EXPECT_TRUE(std::isnan(a.sample_sum) && std::isnan(c.sample_sum));
}

// Values handed over in bulk (a block's) are counted as one by one, on
// every SIMD target the bucket counting is compiled for: the same buckets
// for bounds, floats beside them, infinities and NaN, runs that are not
// whole vectors and that cross the tally's chunks, and the same sum up to
// the order of the additions.
TEST(MetricsTest, HistogramTallyObserveManyCountsAsObserveOnEveryTarget) {
  const Buckets b(
      {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.5, 2.0});
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-0.5f, 2.5f);
  std::vector<float> values;
  for (int i = 0; i < 3000; ++i) values.push_back(uniform(rng));
  // Bounds and their neighbours in the first 1,300, infinities and NaN at
  // 600: the runs below cover 949 values.
  for (size_t k = 0; k < b.bounds().size(); ++k) {
    const float f = static_cast<float>(b.bounds()[k]);
    values[k * 97] = f;
    values[k * 97 + 1] = std::nextafter(f, 3.0f);
    values[k * 97 + 2] = std::nextafter(f, -3.0f);
  }
  values[600] = std::numeric_limits<float>::infinity();
  values[601] = -std::numeric_limits<float>::infinity();
  values[602] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    SCOPED_TRACE(hwy::TargetName(t));
    Histogram one(b.bounds()), many(b.bounds());
    HistogramTally by_one, in_bulk;
    by_one.Reset(&one, &b);
    in_bulk.Reset(&many, &b);
    size_t at = 0;
    // Runs of 1 to 300 values, some starting in a part-filled chunk.
    for (size_t run : {1, 7, 16, 17, 255, 300, 31, 2, 256, 64}) {
      for (size_t i = at; i < at + run; ++i) by_one.Observe(values[i]);
      in_bulk.ObserveMany(values.data() + at, run);
      at += run;
      if (run == 300) {
        by_one.Flush();
        in_bulk.Flush();
        EXPECT_EQ(Cumulative(many), Cumulative(one)) << "at " << at;
      }
    }
    by_one.Flush();
    in_bulk.Flush();
    EXPECT_EQ(Cumulative(many), Cumulative(one));
    EXPECT_TRUE(std::isnan(many.Collect().histogram.sample_sum));
  }
  hwy::SetSupportedTargetsForTest(0);
  // Finite values: the sums agree but for rounding.
  Histogram one(b.bounds()), many(b.bounds());
  HistogramTally by_one, in_bulk;
  by_one.Reset(&one, &b);
  in_bulk.Reset(&many, &b);
  for (size_t i = 1000; i < 3000; ++i) by_one.Observe(values[i]);
  in_bulk.ObserveMany(values.data() + 1000, 2000);
  by_one.Flush();
  in_bulk.Flush();
  EXPECT_NEAR(many.Collect().histogram.sample_sum,
              one.Collect().histogram.sample_sum, 1e-9);
  EXPECT_EQ(Cumulative(many), Cumulative(one));
}

TEST(MetricsTest, HistogramTallySumsAsObserveDoes) {
  const Buckets b({0.25, 0.5});
  Histogram direct(b.bounds()), batched(b.bounds());
  HistogramTally tally;
  tally.Reset(&batched, &b);
  for (int i = 0; i < 600; ++i) {
    const float v = static_cast<float>(i % 10) / 10;
    direct.Observe(v);
    tally.Observe(v);
  }
  tally.Flush();
  EXPECT_EQ(Cumulative(batched), Cumulative(direct));
  EXPECT_DOUBLE_EQ(batched.Collect().histogram.sample_sum,
                   direct.Collect().histogram.sample_sum);
  EXPECT_EQ(Cumulative(batched), (std::vector<uint64_t>{180, 360, 600}));
}

// Tallies of two threads flushed into one histogram lose nothing.
TEST(MetricsTest, ConcurrentFlushesAreNotLost) {
  const Buckets b({0.5});
  Histogram h(b.bounds());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      HistogramTally tally;
      tally.Reset(&h, &b);
      for (int batch = 0; batch < 1000; ++batch) {
        for (int i = 0; i < 100; ++i) tally.Observe(i < 30 ? 0.25f : 0.75f);
        tally.Flush();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(Cumulative(h), (std::vector<uint64_t>{4 * 1000 * 30, 400000}));
}

TEST(MetricsTest, ExponentialBucketsMultiply) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
}

TEST(MetricsTest, ProcessCollectorReadsProc) {
  const ProcessCollector process;
  const std::string text = TextExposition({&process});
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "process_resident_memory_bytes [1-9][0-9.e+]{5,}"));
  EXPECT_THAT(text, ::testing::ContainsRegex("process_open_fds [1-9]"));
  EXPECT_THAT(text, ::testing::ContainsRegex("process_max_fds [1-9]"));
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "process_start_time_seconds 1[.0-9e+]{8,}"));
}

}  // namespace
}  // namespace utilityd::metrics
