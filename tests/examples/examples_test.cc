// The bundled example sets behave as their comments and the seeds say. Each
// scenario's expected winner is asserted through CheckScenarios (in
// decide_codec_test); here the stories behind them are asserted explicitly.
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/scenarios.h"

namespace utilityd::loader {
namespace {

using codec::DecideBatch;
using codec::ScenarioSnapshot;
using ::utilityd::testing::IsOk;

class ExamplesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<Catalog> catalog = LoadCatalog({"examples/behaviour_sets"});
    ASSERT_THAT(catalog, IsOk());
    catalog_ = new Catalog(*std::move(catalog));
  }
  static void TearDownTestSuite() { delete catalog_; }

  // Returns the named scenario's snapshot, after `edit`.
  static v1::AgentSnapshot Scenario(const std::string& set,
                                    const std::string& name) {
    const auto loaded = catalog_->Find(set);
    EXPECT_NE(loaded, nullptr);
    for (const v1::Scenario& s : loaded->definition.scenarios()) {
      if (s.name() == name) return ScenarioSnapshot(loaded->name(), s);
    }
    ADD_FAILURE() << "no scenario " << name;
    return {};
  }

  static v1::Decision Decide(const v1::AgentSnapshot& agent) {
    v1::DecideRequest request;
    request.set_explain(v1::EXPLAIN_FULL);
    *request.add_agents() = agent;
    v1::DecideResponse response;
    DecideBatch(*catalog_, request, &response);
    EXPECT_FALSE(response.decisions(0).has_error())
        << response.decisions(0).error().message();
    return response.decisions(0);
  }

  static const v1::ActionScore& Score(const v1::Decision& d,
                                      const std::string& action) {
    for (const v1::ActionScore& a : d.explanation().actions()) {
      if (a.action() == action) return a;
    }
    ADD_FAILURE() << "no action " << action;
    static const v1::ActionScore kNone;
    return kNone;
  }

  static Catalog* catalog_;
};

Catalog* ExamplesTest::catalog_ = nullptr;

TEST_F(ExamplesTest, ArenaStaffEmptyInCoverRechargesAndAttackIsVetoed) {
  const v1::Decision d =
      Decide(Scenario("arena_mage", "Staff empty, in cover"));
  EXPECT_EQ(d.action(), "recharge");
  const v1::ActionScore& attack = Score(d, "attack");
  EXPECT_TRUE(attack.vetoed());
  EXPECT_EQ(attack.vetoed_by(), "charges_left");
  EXPECT_EQ(attack.score(), 0);
}

TEST_F(ExamplesTest, ArenaLeavingCoverLetsTakeCoverOvertakeRecharge) {
  v1::AgentSnapshot agent = Scenario("arena_mage", "Staff empty, in cover");
  const float in_cover = Decide(agent).score();
  (*agent.mutable_named_factors())["in_cover"] = 0;
  const v1::Decision d = Decide(agent);
  EXPECT_EQ(d.action(), "take_cover");
  EXPECT_LT(Score(d, "recharge").score(), in_cover * 0.6);
}

TEST_F(ExamplesTest, ArenaEmptyShrineZeroesGetPotionAndTheMageFightsOn) {
  v1::AgentSnapshot agent = Scenario("arena_mage", "Badly hurt, no potion");
  EXPECT_EQ(Decide(agent).action(), "get_potion");
  (*agent.mutable_named_factors())["potion_at_shrine"] = 0;
  const v1::Decision d = Decide(agent);
  EXPECT_EQ(Score(d, "get_potion").score(), 0);
  EXPECT_EQ(d.action(), "attack");
}

TEST_F(ExamplesTest, ArenaLoweringHealthFadesAttackAndRaisesTakeCoverAndHeal) {
  v1::AgentSnapshot agent =
      Scenario("arena_mage", "Healthy, goblins closing in");
  float last_attack = 2, last_cover = -1, last_heal = -1;
  std::string winner_at_full, winner_at_low;
  for (float health = 100; health >= 20; health -= 10) {
    (*agent.mutable_named_factors())["health"] = health;
    const v1::Decision d = Decide(agent);
    if (health == 100) winner_at_full = d.action();
    winner_at_low = d.action();
    float attack = 0;
    for (const auto& a : d.explanation().actions()) {
      if (a.action() == "attack") attack = std::max(attack, a.score());
    }
    EXPECT_LE(attack, last_attack + 1e-6) << health;
    EXPECT_GE(Score(d, "take_cover").score(), last_cover - 1e-6) << health;
    EXPECT_GE(Score(d, "heal").score(), last_heal - 1e-6) << health;
    last_attack = attack;
    last_cover = Score(d, "take_cover").score();
    last_heal = Score(d, "heal").score();
  }
  EXPECT_EQ(winner_at_full, "attack");
  EXPECT_NE(winner_at_low, "attack") << "the mage changes its mind";
}

TEST_F(ExamplesTest, ArenaFleeIsAnEmergencyRank) {
  const v1::Decision d =
      Decide(Scenario("arena_mage", "Nearly dead, surrounded"));
  EXPECT_EQ(d.action(), "flee");
  EXPECT_EQ(d.explanation().rank(), 1);
  // take_cover scores higher but rank 0 does not compete.
  EXPECT_GT(Score(d, "take_cover").score(), d.score());
}

TEST_F(ExamplesTest, ArenaBerserkerKeepsAttacking) {
  v1::AgentSnapshot agent = Scenario("arena_mage", "Under attack in the open");
  EXPECT_EQ(Decide(agent).action(), "take_cover");
  agent.set_personality("berserker");
  EXPECT_EQ(Decide(agent).action(), "attack");
}

TEST_F(ExamplesTest, VillagerPersonalitiesChangeTheWinner) {
  v1::AgentSnapshot loner = Scenario("villager_needs", "Loner, lonely");
  EXPECT_EQ(Decide(loner).action(), "play");
  loner.clear_personality();
  EXPECT_EQ(Decide(loner).action(), "socialise");
  v1::AgentSnapshot glutton =
      Scenario("villager_needs", "Glutton, a little peckish");
  EXPECT_EQ(Decide(glutton).action(), "eat");
  glutton.clear_personality();
  EXPECT_NE(Decide(glutton).action(), "eat");
}

TEST_F(ExamplesTest, VillagerCooldownHandsTheAfternoonToSocialising) {
  v1::AgentSnapshot agent =
      Scenario("villager_needs", "Bored, but just played");
  const v1::Decision cooling = Decide(agent);
  EXPECT_EQ(cooling.action(), "socialise");
  EXPECT_NEAR(Score(cooling, "play").cooldown_factor(), 2.0 / 5.0, 1e-6);
  agent.clear_seconds_since_action();
  EXPECT_EQ(Decide(agent).action(), "play");
}

TEST_F(ExamplesTest, ForagerCommitmentHoldsANearTie) {
  v1::AgentSnapshot agent =
      Scenario("eat_hide_wander", "Near tie, committed to eating");
  EXPECT_EQ(Decide(agent).action(), "eat");
  agent.set_current_action("wander");
  EXPECT_EQ(Decide(agent).action(), "wander");
  agent.clear_current_action();
  EXPECT_EQ(Decide(agent).action(), "wander") << "without commitment";
}

TEST_F(ExamplesTest, ForagerPredatorVetoesEating) {
  v1::AgentSnapshot agent = Scenario("eat_hide_wander", "Predator close");
  (*agent.mutable_named_factors())["danger"] = 1;
  const v1::Decision d = Decide(agent);
  EXPECT_EQ(d.action(), "hide");
  EXPECT_EQ(Score(d, "eat").vetoed_by(), "safety");
}

}  // namespace
}  // namespace utilityd::loader
