// Canary rollouts in the codec (docs/CANARY.md): which agents are in a
// share, which canary sets may serve, and every wire form (snapshots in the
// full and the compact form, blocks) answering each agent with its
// variant's set, marked as such.
#include "utilityd/codec/variants.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "utilityd/codec/batch.h"

namespace utilityd::codec {
namespace {

namespace fs = std::filesystem;
using loader::Catalog;
using ::utilityd::testing::IsOk;

// The share rule as docs/CANARY.md states it, restated here: FNV-1a 64 of
// the id's bytes, SplitMix64's finaliser, the top 53 bits / 2^53 < share.
bool DocumentedRule(const std::string& id, double share) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  return std::ldexp(static_cast<double>(h >> 11), -53) < share;
}

TEST(CanaryShareTest, HoldsWithinItsBinomialBound) {
  constexpr int kAgents = 200000;
  for (double share : {0.01, 0.1, 0.25, 0.5, 0.9}) {
    int in = 0;
    for (int i = 0; i < kAgents; ++i) {
      in += InCanaryShare(absl::StrCat("npc-", i), share) ? 1 : 0;
    }
    const double mean = kAgents * share;
    const double sd = std::sqrt(kAgents * share * (1 - share));
    EXPECT_LT(std::abs(in - mean), 5 * sd) << "share " << share;
  }
}

TEST(CanaryShareTest, FollowsTheDocumentedRuleAndGrowsWithTheShare) {
  for (int i = 0; i < 20000; ++i) {
    const std::string id = absl::StrCat("guard-", i * 7919);
    for (double share : {0.0, 0.05, 0.3, 0.7, 1.0}) {
      ASSERT_EQ(InCanaryShare(id, share),
                share >= 1 || DocumentedRule(id, share))
          << id << " at " << share;
    }
    // An agent in a share stays in every larger one: raising the share
    // only moves live agents to the canary.
    if (InCanaryShare(id, 0.2)) {
      ASSERT_TRUE(InCanaryShare(id, 0.21)) << id;
    }
    // A block row's id is its decimal text.
    const uint64_t n = 1'000'000'007ull * (i + 1);
    ASSERT_EQ(InCanaryShare(n, 0.4), InCanaryShare(std::to_string(n), 0.4));
  }
  EXPECT_FALSE(InCanaryShare("anyone", 0));
  EXPECT_TRUE(InCanaryShare("anyone", 1));
}

class VariantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The canary: the forager's hide halved (the same columns), and the
    // villager with two factors swapped (other columns: never served).
    fs::create_directories(dir_.path());
    for (const auto& f : fs::directory_iterator("examples/behaviour_sets")) {
      std::ifstream in(f.path());
      std::string text((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      const std::string name = f.path().filename().string();
      if (name == "eat_hide_wander.yaml") {
        ASSERT_EQ(absl::StrReplaceAll({{"  - name: hide\n",
                                        "  - name: hide\n    weight: 0.5\n"}},
                                      &text),
                  1);
      } else if (name == "villager_needs.yaml") {
        const std::string hunger =
            "  - {name: hunger, unit: need, description: 0 fed .. 1 "
            "starving.}\n";
        const std::string tired =
            "  - {name: tiredness, unit: need, description: 0 rested .. 1 "
            "exhausted.}\n";
        ASSERT_EQ(
            absl::StrReplaceAll({{hunger + tired, tired + hunger}}, &text), 1);
      }
      std::ofstream(dir_.path() / name) << text;
    }
    absl::StatusOr<Catalog> live =
        loader::LoadCatalog({"examples/behaviour_sets"});
    ASSERT_THAT(live, IsOk());
    live_ = *std::move(live);
    absl::StatusOr<Catalog> canary =
        loader::LoadCatalog({dir_.path().string()});
    ASSERT_THAT(canary, IsOk());
    canary_ = *std::move(canary);
  }

  // Agent i of `set`, its factors in order, expecting the live revision.
  v1::AgentSnapshot Agent(const std::string& set, int i) const {
    v1::AgentSnapshot a;
    a.set_agent_id(std::to_string(1'000'003ull * (i + 1)));
    a.set_behaviour_set(set);
    a.set_expected_revision(live_.Find(set)->revision());
    const auto& factors = live_.Find(set)->compiled.factors();
    for (size_t f = 0; f < factors.size(); ++f) {
      const double u = ((i * 37 + static_cast<int>(f) * 11) % 100) / 99.0;
      a.add_factors(static_cast<float>(factors[f].min +
                                       (factors[f].max - factors[f].min) * u));
    }
    return a;
  }

  // What `catalog` alone decides for `agent`.
  v1::Decision Alone(const Catalog& catalog, v1::AgentSnapshot agent) const {
    agent.clear_expected_revision();
    v1::DecideRequest request;
    *request.add_agents() = agent;
    v1::DecideResponse response;
    DecideBatch(catalog, request, &response);
    return response.decisions(0);
  }

  testing::TempDir dir_{"utilityd_variants"};
  Catalog live_, canary_;
};

TEST_F(VariantsTest, SameColumnsServesTuningAndRefusesAnotherLayout) {
  EXPECT_TRUE(SameColumns(*live_.Find("eat_hide_wander"),
                          *canary_.Find("eat_hide_wander")));
  EXPECT_FALSE(SameColumns(*live_.Find("villager_needs"),
                           *canary_.Find("villager_needs")));
  EXPECT_FALSE(SameColumns(*live_.Find("eat_hide_wander"),
                           *live_.Find("villager_needs")));
  const Variants v{.canary = &canary_, .share = 0.5};
  EXPECT_EQ(v.CanaryOf(*live_.Find("eat_hide_wander")),
            canary_.Find("eat_hide_wander").get());
  EXPECT_EQ(v.CanaryOf(*live_.Find("villager_needs")), nullptr);
  EXPECT_EQ((Variants{.canary = &canary_, .share = 0})
                .CanaryOf(*live_.Find("eat_hide_wander")),
            nullptr);
}

TEST_F(VariantsTest, SnapshotsAreDecidedByTheirVariantsSetInBothForms) {
  constexpr double kShare = 0.4;
  v1::DecideRequest request;
  for (int i = 0; i < 300; ++i) {
    *request.add_agents() =
        Agent(i % 3 == 0 ? "villager_needs" : "eat_hide_wander", i);
  }
  const Variants variants{.canary = &canary_, .share = kShare};
  v1::DecideResponse full;
  DecideBatch(live_, request, &full, nullptr, variants);
  request.set_form(v1::DECISION_FORM_COMPACT);
  v1::DecideResponse compact;
  DecideBatch(live_, request, &compact, nullptr, variants);
  int canaries = 0, flips = 0;
  for (int i = 0; i < request.agents_size(); ++i) {
    const v1::AgentSnapshot& a = request.agents(i);
    const bool canary = a.behaviour_set() == "eat_hide_wander" &&
                        InCanaryShare(a.agent_id(), kShare);
    const v1::Decision want = Alone(canary ? canary_ : live_, a);
    const v1::Decision& got = full.decisions(i);
    SCOPED_TRACE(absl::StrCat(a.behaviour_set(), " ", a.agent_id()));
    ASSERT_FALSE(got.has_error()) << got.error().message();
    EXPECT_EQ(got.variant(), canary ? v1::VARIANT_CANARY : v1::VARIANT_LIVE);
    EXPECT_EQ(got.action(), want.action());
    EXPECT_EQ(got.score(), want.score());
    EXPECT_EQ(got.revision(), want.revision());
    const char flags = compact.compact().flags()[i];
    EXPECT_EQ((flags & v1::COMPACT_FLAG_CANARY) != 0, canary);
    EXPECT_EQ(compact.compact().action_index(i), want.action_index());
    canaries += canary ? 1 : 0;
    flips += canary && Alone(live_, a).action() != want.action() ? 1 : 0;
  }
  EXPECT_GT(canaries, 40);
  EXPECT_GT(flips, 0) << "the halved hide should change some decisions";
  // The compact form lists the canary's revision besides the live ones.
  bool listed = false;
  for (const v1::SetRevision& r : compact.compact().revisions()) {
    if (r.variant() == v1::VARIANT_CANARY) {
      EXPECT_EQ(r.behaviour_set(), "eat_hide_wander");
      EXPECT_EQ(r.revision(), canary_.Find("eat_hide_wander")->revision());
      listed = true;
    }
  }
  EXPECT_TRUE(listed);
}

// A block of rows packed for the live set: the rows in the share decided
// by the canary's set (same columns), flagged, its revision named; a block
// of a set whose canary has other columns stays live.
TEST_F(VariantsTest, BlockRowsInTheShareAreDecidedByTheCanary) {
  constexpr double kShare = 0.5;
  v1::DecideRequest request;
  for (const char* set : {"eat_hide_wander", "villager_needs"}) {
    v1::AgentBlock* b = request.add_blocks();
    b->set_behaviour_set(set);
    b->set_expected_revision(live_.Find(set)->revision());
    for (int i = 0; i < 200; ++i) {
      const v1::AgentSnapshot a = Agent(set, i);
      b->add_agent_ids(std::stoull(a.agent_id()));
      b->mutable_factors()->Add(a.factors().begin(), a.factors().end());
    }
  }
  v1::DecideResponse response;
  DecideBatch(live_, request, &response, nullptr,
              {.canary = &canary_, .share = kShare});
  ASSERT_EQ(response.blocks_size(), 2);
  const v1::DecisionBlock& forager = response.blocks(0);
  ASSERT_FALSE(forager.has_error()) << forager.error().message();
  EXPECT_EQ(forager.revision(), live_.Find("eat_hide_wander")->revision());
  EXPECT_EQ(forager.canary_revision(),
            canary_.Find("eat_hide_wander")->revision());
  int canaries = 0;
  for (int r = 0; r < 200; ++r) {
    const v1::AgentSnapshot a = Agent("eat_hide_wander", r);
    const bool canary = InCanaryShare(a.agent_id(), kShare);
    const v1::Decision want = Alone(canary ? canary_ : live_, a);
    EXPECT_EQ((forager.flags()[r] & v1::COMPACT_FLAG_CANARY) != 0, canary) << r;
    EXPECT_EQ(forager.action_index(r), want.action_index()) << r;
    EXPECT_EQ(forager.score(r), want.score()) << r;
    canaries += canary ? 1 : 0;
  }
  EXPECT_GT(canaries, 60);
  const v1::DecisionBlock& villager = response.blocks(1);
  ASSERT_FALSE(villager.has_error()) << villager.error().message();
  EXPECT_TRUE(villager.canary_revision().empty());
  for (int r = 0; r < 200; ++r) {
    EXPECT_EQ(villager.flags()[r] & v1::COMPACT_FLAG_CANARY, 0) << r;
  }
}

// A tree set's rows resume their state under either variant when the
// canary keeps the tree's shape (a curve or a parameter changed).
TEST_F(VariantsTest, TreeRowsTickWithTheirVariantsTree) {
  constexpr double kShare = 0.5;
  v1::DecideRequest request;
  for (int i = 0; i < 40; ++i) *request.add_agents() = Agent("guard_tree", i);
  v1::DecideResponse response;
  DecideBatch(live_, request, &response, nullptr,
              {.canary = &canary_, .share = kShare});
  int canaries = 0;
  for (int i = 0; i < 40; ++i) {
    const v1::Decision& d = response.decisions(i);
    ASSERT_FALSE(d.has_error()) << d.error().message();
    const bool canary = InCanaryShare(request.agents(i).agent_id(), kShare);
    EXPECT_EQ(d.variant(), canary ? v1::VARIANT_CANARY : v1::VARIANT_LIVE);
    EXPECT_FALSE(d.tree_state().empty());
    canaries += canary ? 1 : 0;
  }
  EXPECT_GT(canaries, 5);
}

}  // namespace
}  // namespace utilityd::codec
