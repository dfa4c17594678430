#include "server/src/recent_decisions.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
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

TEST(RecentDecisionsTest, KeepsTheNewestFirstAndFilters) {
  RecentDecisions recent(3, 1.0);
  EXPECT_TRUE(recent.Newest({}).empty());
  recent.Add(Entry("a", "arena", "attack", true));
  recent.Add(Entry("b", "arena", "heal", false));
  recent.Add(Entry("c", "village", "eat", true));
  recent.Add(Entry("d", "arena", "attack", false));  // pushes out "a"
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
  recent.Add(std::move(s));
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

// Writers on the request path and a reader (the feed) at once; run under
// ThreadSanitizer by `make test-tsan`.
TEST(RecentDecisionsTest, ConcurrentWritersAndReaders) {
  RecentDecisions recent(64, 1.0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 5000; ++i)
        recent.Add(Entry(absl::StrCat(w, "-", i), "arena", "attack", i % 2));
    });
  }
  size_t seen = 0;
  std::thread reader([&] {
    while (!stop.load()) {
      for (const auto& e : recent.Newest({.limit = 64})) {
        EXPECT_EQ(e.behaviour_set(), "arena");
        ++seen;
      }
    }
  });
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(recent.Newest({.limit = 1000}).size(), 64u);
}

}  // namespace
}  // namespace utilityd::server
