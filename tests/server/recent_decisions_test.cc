#include "server/src/recent_decisions.h"

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::server {
namespace {

RecentDecisions::Sample Entry(const std::string& agent, const std::string& set,
                              const std::string& action, bool switched) {
  static const auto* const empty =
      new std::shared_ptr<const Generation>(std::make_shared<Generation>());
  RecentDecisions::Sample s{.generation = *empty};
  s.snapshot.set_agent_id(agent);
  s.snapshot.set_behaviour_set(set);
  s.decision.set_action(action);
  s.decision.set_switched(switched);
  return s;
}

void Put(RecentDecisions& recent, const RecentDecisions::Sample& s) {
  recent.Add(s.generation, s.snapshot, s.time, s.decision, s.runner_up_score);
}

TEST(RecentDecisionsTest, KeepsTheNewestFirstAndFilters) {
  RecentDecisions recent(3, 1.0);
  EXPECT_TRUE(recent.Newest({}).empty());
  Put(recent, Entry("a", "arena", "attack", true));
  Put(recent, Entry("b", "arena", "heal", false));
  Put(recent, Entry("c", "village", "eat", true));
  Put(recent, Entry("d", "arena", "attack", false));  // pushes out "a"
  std::vector<std::string> agents;
  for (const auto& e : recent.Newest({})) agents.push_back(e.agent_id());
  EXPECT_THAT(agents, ::testing::ElementsAre("d", "c", "b"));

  auto arena = recent.Newest({.behaviour_set = "arena"});
  ASSERT_EQ(arena.size(), 2u);
  EXPECT_EQ(arena[0].agent_id(), "d");
  auto switched = recent.Newest({.switched = true});
  ASSERT_EQ(switched.size(), 1u);
  EXPECT_EQ(switched[0].agent_id(), "c");
  EXPECT_EQ(recent.Newest({.limit = 1}).size(), 1u);
  EXPECT_TRUE(recent.Newest({.action = "flee"}).empty());
}

TEST(RecentDecisionsTest, ReadingBuildsTheBreakdownFromTheKeptSnapshot) {
  auto generation = std::make_shared<Generation>();
  auto catalog = loader::LoadCatalog({"examples/behaviour_sets"});
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  generation->catalog = *std::move(catalog);
  const auto set = generation->catalog.Find("eat_hide_wander");
  ASSERT_NE(set, nullptr);
  RecentDecisions recent(4, 1.0);
  RecentDecisions::Sample s{.generation = generation};
  s.snapshot.set_agent_id("forager-1");
  s.snapshot.set_behaviour_set("eat_hide_wander");
  for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) s.snapshot.add_factors(v);
  s.decision.set_action("eat");
  Put(recent, s);
  generation.reset();  // the sample keeps its configuration alive
  const auto entries = recent.Newest({});
  ASSERT_EQ(entries.size(), 1u);
  const v1::DecisionLogEntry& e = entries[0];
  EXPECT_EQ(e.agent_id(), "forager-1");
  EXPECT_EQ(e.revision(), set->revision());
  EXPECT_EQ(e.factors().at(set->compiled.factors()[0].name), 0.8f);
  ASSERT_GT(e.explanation().actions_size(), 0);
  EXPECT_FALSE(e.explanation().summary().empty());
}

// A slot is reused in place: nothing of the sample it held before remains
// (current action, a target, the decision's target and switch), and the
// decision's explanation is not kept.
TEST(RecentDecisionsTest, AReusedSlotKeepsNothingOfItsLastSample) {
  auto generation = std::make_shared<Generation>();
  auto catalog = loader::LoadCatalog({"examples/behaviour_sets"});
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  generation->catalog = *std::move(catalog);
  RecentDecisions recent(1, 1.0);
  v1::AgentSnapshot first;
  first.set_agent_id("forager-1");
  first.set_behaviour_set("eat_hide_wander");
  first.set_current_action("eat");
  first.add_targets()->set_target_id("burrow");
  for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) first.add_factors(v);
  v1::Decision first_decision;
  first_decision.set_action("eat");
  first_decision.set_target_id("burrow");
  first_decision.set_switched(true);
  first_decision.mutable_explanation()->set_summary("eat because");
  recent.Add(generation, first, absl::Now(), first_decision, 0.5f);
  v1::AgentSnapshot second;
  second.set_agent_id("forager-2");
  second.set_behaviour_set("eat_hide_wander");
  for (float v : {0.2f, 0.9f, 1.0f, 4.0f}) second.add_factors(v);
  v1::Decision second_decision;
  second_decision.set_action("hide");
  recent.Add(generation, second, absl::Now(), second_decision, 0.1f);
  const auto entries = recent.Newest({});
  ASSERT_EQ(entries.size(), 1u);
  const v1::DecisionLogEntry& e = entries[0];
  EXPECT_EQ(e.agent_id(), "forager-2");
  EXPECT_EQ(e.action(), "hide");
  EXPECT_EQ(e.current_action(), "");
  EXPECT_EQ(e.snapshot().targets_size(), 0);
  EXPECT_THAT(e.snapshot().factors(),
              ::testing::ElementsAre(0.2f, 0.9f, 1.0f, 4.0f));
  EXPECT_EQ(e.target_id(), "");
  EXPECT_FALSE(e.switched());
  EXPECT_EQ(e.runner_up_score(), 0.1f);
  // The breakdown is made again from the snapshot, not the one sent.
  EXPECT_NE(e.explanation().summary(), "eat because");
}

TEST(RecentDecisionsTest, SamplesByIdAtTheConfiguredRate) {
  EXPECT_FALSE(RecentDecisions(10, 0.0).Sampled(0));
  EXPECT_TRUE(RecentDecisions(10, 1.0).Sampled(~uint64_t{0}));
  RecentDecisions quarter(10, 0.25);
  int sampled = 0;
  uint64_t x = 99;
  for (int i = 0; i < 100000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    sampled += quarter.Sampled(x);
  }
  EXPECT_NEAR(sampled / 100000.0, 0.25, 0.01);
}

// One second of `per_second` decisions in batches of 100 from `start`,
// those the feed samples added to it; returns how many entered.
int FeedSecond(RecentDecisions& recent, absl::Time start, int per_second,
               std::mt19937_64& ids) {
  const RecentDecisions::Sample s = Entry("a", "arena", "attack", false);
  int entered = 0;
  const int batches = per_second / 100;
  for (int b = 0; b < batches; ++b) {
    const IdSampler wanted =
        recent.sampler(start + absl::Seconds(1) * b / batches);
    for (int i = 0; i < 100; ++i) {
      const uint64_t id = ids();
      if (wanted(id) && recent.Sampled(id)) {
        Put(recent, s);
        ++entered;
      }
    }
  }
  return entered;
}

// On a busy server the fraction falls, a second later, to what lets about
// the limit in; as traffic falls it doubles a second back up to the
// configured one. Without a limit it never moves.
TEST(RecentDecisionsTest, LowersTheFractionToTheLimitAndRaisesItBack) {
  RecentDecisions recent(500, 0.5, /*max_per_second=*/100);
  std::mt19937_64 ids(3);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_NEAR(FeedSecond(recent, t0, 10000, ids), 5000, 250);
  int entered = 0;
  for (int s = 1; s < 6; ++s) {
    entered = FeedSecond(recent, t0 + absl::Seconds(s), 10000, ids);
  }
  EXPECT_NEAR(entered, 100, 40);
  EXPECT_NEAR(recent.fraction(), 0.01, 0.004);
  // 100 decisions a second: 1 enters, then 2, 4, ... back to 0.5.
  for (int s = 6; s < 16; ++s) {
    FeedSecond(recent, t0 + absl::Seconds(s), 100, ids);
  }
  EXPECT_EQ(recent.fraction(), 0.5);

  RecentDecisions unlimited(500, 0.5);
  for (int s = 0; s < 3; ++s) {
    FeedSecond(unlimited, t0 + absl::Seconds(s), 10000, ids);
  }
  EXPECT_EQ(unlimited.fraction(), 0.5);
}

// Writers on the request path and a reader (the feed) at once; run under
// ThreadSanitizer by `make test-tsan`.
TEST(RecentDecisionsTest, ConcurrentWritersAndReaders) {
  RecentDecisions recent(64, 1.0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 5000; ++i)
        Put(recent, Entry(absl::StrCat(w, "-", i), "arena", "attack", i % 2));
    });
  }
  // Every read is a consistent snapshot: whole entries, newest first, so
  // each writer's entries in it run from its latest down.
  size_t seen = 0, reads = 0, out_of_order = 0;
  std::thread reader([&] {
    do {
      std::map<std::string, int> last;  // writer -> its last i in this read
      for (const auto& e : recent.Newest({.limit = 64})) {
        EXPECT_EQ(e.behaviour_set(), "arena");
        const std::vector<std::string> parts =
            absl::StrSplit(e.agent_id(), '-');
        ASSERT_EQ(parts.size(), 2u) << e.agent_id();
        const int i = std::stoi(parts[1]);
        auto [it, first] = last.emplace(parts[0], i);
        if (!first) {
          out_of_order += i < it->second ? 0 : 1;
          it->second = i;
        }
        ++seen;
      }
      ++reads;
    } while (!stop.load());
  });
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(recent.Newest({.limit = 1000}).size(), 64u);
  // At least the read after the writers ended saw a full ring.
  EXPECT_GE(reads, 1u);
  EXPECT_GE(seen, 64u);
  EXPECT_EQ(out_of_order, 0u);
}

}  // namespace
}  // namespace utilityd::server
