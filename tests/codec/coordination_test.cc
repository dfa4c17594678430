// Coordination through DecideBatch: the arena's goblins share attack tokens
// (examples/behaviour_sets/arena_goblin.yaml, two per mage). Tokens go to
// the highest decisions; denied goblins get their best candidate that fits,
// and the decision says why; holders keep; the request's pools override
// capacity, and a holding past its `until` is gone; the compact form
// allocates identically; every answer is the same from run to run.
#include <algorithm>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/goblins.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/codec/batch.h"

namespace utilityd::codec {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;

class CoordinationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto catalog = loader::LoadCatalog({"examples/behaviour_sets"});
    ASSERT_THAT(catalog, IsOk());
    catalog_ = *std::move(catalog);
  }

  // Six goblins near mage-0 (goblin-i at 1 + i metres), mage-1 far,
  // explained in full.
  static v1::DecideRequest Goblins() {
    v1::DecideRequest r = ::utilityd::testing::GoblinsAroundOneMage(6, 1);
    r.set_explain(v1::EXPLAIN_FULL);
    return r;
  }

  v1::DecideResponse Run(const v1::DecideRequest& request) {
    v1::DecideResponse response;
    DecideBatch(catalog_, request, &response);
    return response;
  }

  // Attackers per mage.
  static std::map<std::string, int> Attackers(const v1::DecideResponse& r) {
    std::map<std::string, int> n;
    for (const v1::Decision& d : r.decisions()) {
      if (d.action() == "attack") ++n[d.target_id()];
    }
    return n;
  }

  loader::Catalog catalog_;
};

TEST_F(CoordinationTest, TwoAttackEachMageAndTheDeniedTakeTheirBestFit) {
  const v1::DecideRequest request = Goblins();
  const v1::DecideResponse r = Run(request);
  ASSERT_EQ(r.decisions_size(), 6);
  // Alone, every goblin would attack mage-0; two may.
  for (const v1::Decision& d : r.decisions()) {
    ASSERT_FALSE(d.has_error()) << d.error().message();
    const v1::ActionScore* best = nullptr;
    for (const v1::ActionScore& a : d.explanation().actions()) {
      if (best == nullptr || a.score() > best->score()) best = &a;
    }
    EXPECT_EQ(best->action(), "attack");
    EXPECT_EQ(best->target_id(), "mage-0");
  }
  EXPECT_EQ(Attackers(r)["mage-0"], 2);
  // The two nearest (highest scores) attack and were granted a token.
  for (int i : {0, 1}) {
    const v1::Decision& d = r.decisions(i);
    EXPECT_EQ(d.action(), "attack");
    EXPECT_EQ(d.target_id(), "mage-0");
    ASSERT_EQ(d.coordination().granted_size(), 1);
    EXPECT_EQ(d.coordination().granted(0).resource(), "attack_token");
    EXPECT_EQ(d.coordination().granted(0).target_id(), "mage-0");
    EXPECT_FALSE(d.coordination().granted(0).kept());
    EXPECT_FALSE(d.coordination().has_denied());
  }
  // The others were denied and say so; each got its best candidate that
  // fits: the highest-scoring one of its own breakdown that is not an
  // attack on mage-0.
  for (int i = 2; i < 6; ++i) {
    const v1::Decision& d = r.decisions(i);
    SCOPED_TRACE(d.agent_id());
    const v1::ResourceDenial& denied = d.coordination().denied();
    EXPECT_EQ(denied.action(), "attack");
    EXPECT_EQ(denied.target_id(), "mage-0");
    EXPECT_EQ(denied.resource(), "attack_token");
    EXPECT_EQ(denied.pool_target_id(), "mage-0");
    EXPECT_EQ(denied.capacity(), 2);
    EXPECT_THAT(denied.holders(),
                ::testing::ElementsAre("goblin-0", "goblin-1"));
    EXPECT_EQ(denied.message(),
              "denied attack@mage-0: attack_token on mage-0, capacity 2, "
              "held by goblin-0, goblin-1");
    EXPECT_EQ(d.coordination().uncoordinated_action(), "attack");
    EXPECT_EQ(d.coordination().uncoordinated_target_id(), "mage-0");
    const v1::ActionScore* fit = nullptr;
    for (const v1::ActionScore& a : d.explanation().actions()) {
      if (a.action() == "attack" && a.target_id() == "mage-0") continue;
      if (fit == nullptr || a.score() > fit->score()) fit = &a;
    }
    EXPECT_EQ(d.action(), fit->action());
    EXPECT_EQ(d.target_id(), fit->target_id());
    EXPECT_FLOAT_EQ(d.score(), fit->score());
  }
  // The pool after allocation.
  const auto pool = std::find_if(
      r.pools().begin(), r.pools().end(),
      [](const v1::PoolState& p) { return p.target_id() == "mage-0"; });
  ASSERT_NE(pool, r.pools().end());
  EXPECT_EQ(pool->capacity(), 2);
  EXPECT_EQ(pool->used(), 2);
  EXPECT_EQ(pool->remaining(), 0);
  // The same every time.
  const v1::DecideResponse again = Run(request);
  EXPECT_EQ(again.SerializeAsString(), r.SerializeAsString());
}

TEST_F(CoordinationTest, HoldersKeepWhileTheyAttackAndOthersGetTheRest) {
  v1::DecideRequest request = Goblins();
  // goblin-5, the farthest, holds a token and keeps attacking; goblin-4
  // reports one (echo) on mage-1 that it no longer uses.
  v1::ResourcePool* pool = request.add_pools();
  pool->set_resource("attack_token");
  pool->set_target_id("mage-0");
  pool->add_holders()->set_agent_id("goblin-5");
  request.mutable_agents(5)->set_current_action("attack");
  request.mutable_agents(5)->set_current_target("mage-0");
  v1::HeldResource* held = request.mutable_agents(4)->add_held();
  held->set_resource("attack_token");
  held->set_target_id("mage-1");
  const v1::DecideResponse r = Run(request);
  EXPECT_EQ(Attackers(r)["mage-0"], 2);
  EXPECT_EQ(r.decisions(5).action(), "attack");
  ASSERT_EQ(r.decisions(5).coordination().granted_size(), 1);
  EXPECT_TRUE(r.decisions(5).coordination().granted(0).kept());
  EXPECT_EQ(r.decisions(0).action(), "attack");  // the nearest: the free one
  EXPECT_NE(r.decisions(1).action(), "attack");
  EXPECT_THAT(r.decisions(1).coordination().denied().message(),
              HasSubstr("held by goblin-0, goblin-5"));
  ASSERT_EQ(r.decisions(4).coordination().released_size(), 1);
  EXPECT_EQ(r.decisions(4).coordination().released(0).target_id(), "mage-1");
}

TEST_F(CoordinationTest, TheRequestsPoolsSetCapacityAndHoldingsEnd) {
  v1::DecideRequest request = Goblins();
  v1::ResourcePool* pool = request.add_pools();
  pool->set_resource("attack_token");
  pool->set_target_id("mage-0");
  pool->set_capacity(5);
  EXPECT_EQ(Attackers(Run(request))["mage-0"], 5);
  // Two holders outside the batch: one still holds, one's time is up.
  pool->set_capacity(3);
  v1::ResourceHolder* h = pool->add_holders();
  h->set_agent_id("troll-1");
  h = pool->add_holders();
  h->set_agent_id("troll-2");
  h->set_until(10);
  request.set_game_time(12);
  const v1::DecideResponse r = Run(request);
  EXPECT_EQ(Attackers(r)["mage-0"], 2);
  EXPECT_THAT(r.decisions(2).coordination().denied().holders(),
              ::testing::ElementsAre("troll-1", "goblin-0", "goblin-1"));
  // Without tokens on offer at all: nobody attacks mage-0.
  pool->set_capacity(0);
  pool->clear_holders();
  EXPECT_EQ(Attackers(Run(request))["mage-0"], 0);
}

// Many pools at once (256 goblins, each seeing 4 of 64 mages): no pool is
// ever confused with another. Every denial names the pool of the target it
// denied, no mage has more than two attackers, and each pool's holders are
// exactly its attackers.
TEST_F(CoordinationTest, ManyPoolsNeverMixUp) {
  v1::DecideRequest request;
  for (int a = 0; a < 256; ++a) {
    v1::AgentSnapshot* s = request.add_agents();
    s->set_agent_id("goblin-" + std::to_string(a));
    s->set_behaviour_set("arena_goblin");
    (*s->mutable_named_factors())["health"] = 5.0f + (a * 37) % 26;
    (*s->mutable_named_factors())["courage"] = ((a * 11) % 10) / 10.0f;
    for (int t = 0; t < 4; ++t) {
      v1::TargetSnapshot* ts = s->add_targets();
      ts->set_target_id("mage-" + std::to_string((a / 4 + t * 7) % 64));
      (*ts->mutable_named_factors())["distance"] = ((a * 13 + t * 5) % 30);
      (*ts->mutable_named_factors())["mage_health"] = (a * 7 + t * 3) % 100;
    }
  }
  const v1::DecideResponse r = Run(request);
  std::map<std::string, std::vector<std::string>> attackers;
  int denied = 0;
  for (const v1::Decision& d : r.decisions()) {
    if (d.action() == "attack")
      attackers[d.target_id()].push_back(d.agent_id());
    if (d.coordination().has_denied()) {
      ++denied;
      EXPECT_EQ(d.coordination().denied().pool_target_id(),
                d.coordination().denied().target_id())
          << d.coordination().denied().message();
    }
  }
  EXPECT_GT(denied, 20);
  for (const auto& [mage, ids] : attackers) EXPECT_LE(ids.size(), 2u) << mage;
  for (const v1::PoolState& p : r.pools()) {
    std::vector<std::string> holders;
    for (const v1::ResourceHolder& h : p.holders()) {
      holders.push_back(h.agent_id());
    }
    EXPECT_EQ(holders, attackers[p.target_id()]) << p.target_id();
    EXPECT_EQ(p.used(), static_cast<int>(holders.size()));
  }
}

TEST_F(CoordinationTest, TheCompactFormAllocatesAlike) {
  v1::DecideRequest request = Goblins();
  request.set_explain(v1::EXPLAIN_NONE);
  const v1::DecideResponse full = Run(request);
  request.set_form(v1::DECISION_FORM_COMPACT);
  const v1::DecideResponse compact = Run(request);
  ASSERT_EQ(compact.compact().action_index_size(), 6);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(compact.compact().action_index(i),
              full.decisions(i).action_index());
    EXPECT_FLOAT_EQ(compact.compact().score(i), full.decisions(i).score());
  }
  EXPECT_EQ(compact.pools_size(), full.pools_size());
}

}  // namespace
}  // namespace utilityd::codec
