#include "utilityd/engine/decide.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/random.h"

namespace utilityd::engine {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;
using ::utilityd::testing::StatusIs;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Builds sets whose considerations pass a 0..1 factor straight through (a
// linear curve over 0..1), so a consideration's output is the factor value.
class SetBuilder {
 public:
  explicit SetBuilder(int factors) {
    def_.name = "test";
    for (int i = 0; i < factors; ++i) {
      def_.factors.push_back({.name = absl::StrCat("f", i)});
    }
  }

  // Adds an action reading the given factors.
  SetBuilder& Action(const std::string& name, std::vector<int> factors) {
    ActionDefinition a{.name = name};
    for (size_t i = 0; i < factors.size(); ++i) {
      a.considerations.push_back({.name = absl::StrCat("c", i),
                                  .factor = absl::StrCat("f", factors[i])});
    }
    def_.actions.push_back(std::move(a));
    return *this;
  }

  SetDefinition& def() { return def_; }
  ActionDefinition& last() { return def_.actions.back(); }

  CompiledBehaviourSet Build() {
    absl::StatusOr<CompiledBehaviourSet> set = Compile(def_);
    EXPECT_THAT(set, IsOk());
    return *std::move(set);
  }

 private:
  SetDefinition def_;
};

Decision MustDecide(const CompiledBehaviourSet& set, AgentInput input,
                    ExplainLevel level = ExplainLevel::kFull) {
  Decision d;
  EXPECT_THAT(Decide(set, input, level, &d), IsOk());
  return d;
}

float ScoreOf(const Decision& d, int action) {
  for (const CandidateTrace& c : d.candidates) {
    if (c.action == action) return c.score;
  }
  ADD_FAILURE() << "no candidate for action " << action;
  return -1;
}

// --- Seed 004's worked numbers ---------------------------------------------

TEST(CompensationTest, FourHalvesGiveRaw0p0625AndCompensated0p223) {
  SetBuilder b(1);
  b.Action("a", {0, 0, 0, 0});
  b.def().compensation = Compensation::kNone;
  const CompiledBehaviourSet raw = b.Build();
  b.def().compensation = Compensation::kPerConsideration;
  const CompiledBehaviourSet comp = b.Build();
  const std::vector<float> f = {0.5f};
  EXPECT_NEAR(MustDecide(raw, {.factors = f}).score, 0.0625, 1e-6);
  EXPECT_NEAR(MustDecide(comp, {.factors = f}).score, 0.223, 5e-4);
}

TEST(CompensationTest, BalanceWinsOnlyOnceCompensated) {
  // [0.95, 0.2] beats [0.43, 0.43] raw (0.190 vs 0.185) but loses once
  // compensated (0.273 vs 0.305).
  SetBuilder b(3);
  b.Action("lopsided", {0, 1}).Action("balanced", {2, 2});
  const std::vector<float> f = {0.95f, 0.2f, 0.43f};
  b.def().compensation = Compensation::kNone;
  const Decision raw = MustDecide(b.Build(), {.factors = f});
  EXPECT_NEAR(ScoreOf(raw, 0), 0.190, 5e-4);
  EXPECT_NEAR(ScoreOf(raw, 1), 0.185, 5e-4);
  EXPECT_EQ(raw.action, 0);
  b.def().compensation = Compensation::kPerConsideration;
  const Decision comp = MustDecide(b.Build(), {.factors = f});
  EXPECT_NEAR(ScoreOf(comp, 0), 0.273, 5e-4);
  EXPECT_NEAR(ScoreOf(comp, 1), 0.305, 5e-4);
  EXPECT_EQ(comp.action, 1);
}

TEST(CompensationTest, FiveNearPerfectGive0p59RawAnd0p87Compensated) {
  SetBuilder b(1);
  b.Action("a", {0, 0, 0, 0, 0});
  const std::vector<float> f = {0.9f};
  b.def().compensation = Compensation::kNone;
  EXPECT_NEAR(MustDecide(b.Build(), {.factors = f}).score, 0.59, 5e-3);
  b.def().compensation = Compensation::kPerConsideration;
  EXPECT_NEAR(MustDecide(b.Build(), {.factors = f}).score, 0.87, 5e-3);
}

TEST(CompensationTest, OnProductLiftsFiveOf0p8ToAboutHalf) {
  // Seed 002: five considerations of 0.8 multiply to 0.33; compensating the
  // product lifts it to about 0.50.
  SetBuilder b(1);
  b.Action("a", {0, 0, 0, 0, 0});
  b.def().compensation = Compensation::kOnProduct;
  const std::vector<float> f = {0.8f};
  const Decision d = MustDecide(b.Build(), {.factors = f});
  EXPECT_NEAR(d.candidates[0].aggregate, 0.32768, 1e-5);
  EXPECT_NEAR(d.score, 0.504, 1e-3);
}

TEST(CompensationTest, GeometricMeanUsesHalfTheCount) {
  // Seed 003: p^(1 / max(1, n * 0.5)).
  SetBuilder b(1);
  b.Action("one", {0}).Action("four", {0, 0, 0, 0});
  b.def().compensation = Compensation::kGeometricMean;
  const std::vector<float> f = {0.6f};
  const Decision d = MustDecide(b.Build(), {.factors = f});
  EXPECT_NEAR(ScoreOf(d, 0), 0.6, 1e-6);  // n*0.5 < 1
  EXPECT_NEAR(ScoreOf(d, 1), std::pow(std::pow(0.6, 4), 0.5), 1e-5);
}

TEST(CompensationTest, LeavesOneConsiderationAndTheEndsUnchanged) {
  for (int n : {1, 2, 5, 9}) {
    EXPECT_EQ(CompensateFactor(0.0f, n), 0.0f);
    EXPECT_EQ(CompensateFactor(1.0f, n), 1.0f);
  }
  EXPECT_EQ(CompensateFactor(0.37f, 1), 0.37f);
}

// --- Vetoes ----------------------------------------------------------------

TEST(VetoTest, ZeroConsiderationVetoesAndIsNamed) {
  SetBuilder b(2);
  b.Action("a", {0, 1}).Action("b", {0});
  const std::vector<float> f = {0.8f, 0.0f};
  const Decision d = MustDecide(b.Build(), {.factors = f});
  EXPECT_EQ(d.candidates[0].veto, VetoReason::kConsideration);
  EXPECT_EQ(d.candidates[0].vetoed_by, 1);
  EXPECT_EQ(d.candidates[0].score, 0.0f);
  EXPECT_EQ(d.action, 1);
}

TEST(VetoTest, NanAndInfinityVetoAndAreFlagged) {
  SetBuilder b(2);
  b.Action("reads_bad", {1, 0}).Action("fine", {0});
  for (float bad : {kNaN, kInf, -kInf}) {
    const std::vector<float> f = {0.3f, bad};
    const Decision d = MustDecide(b.Build(), {.factors = f});
    EXPECT_EQ(d.candidates[0].veto, VetoReason::kInvalidInput) << bad;
    EXPECT_EQ(d.candidates[0].vetoed_by, 0);
    EXPECT_TRUE(d.considerations[d.candidates[0].first_trace].invalid_input);
    EXPECT_EQ(d.action, 1) << "the other action still decides";
  }
}

TEST(VetoTest, NanVetoesEvenWithAnOutputFloor) {
  SetBuilder b(1);
  b.Action("a", {0});
  b.last().considerations[0].output_min = 0.5;
  const std::vector<float> f = {kNaN};
  const Decision d = MustDecide(b.Build(), {.factors = f}, ExplainLevel::kNone);
  EXPECT_EQ(d.action, -1);
}

TEST(VetoTest, OutputFloorPreventsAVeto) {
  SetBuilder b(1);
  b.Action("a", {0});
  b.last().considerations[0].output_min = 0.5;
  const std::vector<float> f = {0.0f};
  EXPECT_NEAR(MustDecide(b.Build(), {.factors = f}).score, 0.5, 1e-6);
}

TEST(VetoTest, AllVetoedMeansNoAction) {
  SetBuilder b(1);
  b.Action("a", {0}).Action("b", {0});
  const std::vector<float> f = {0.0f};
  const Decision d = MustDecide(b.Build(), {.factors = f, .current_action = 1});
  EXPECT_EQ(d.action, -1);
  EXPECT_TRUE(d.switched);
}

TEST(CommitmentTest, BonusCannotReviveAVetoedAction) {
  SetBuilder b(2);
  b.Action("vetoed", {0}).Action("weak", {1});
  b.def().selection.commitment_bonus = 100;
  const std::vector<float> f = {0.0f, 0.01f};
  const Decision d = MustDecide(b.Build(), {.factors = f, .current_action = 0});
  EXPECT_EQ(d.action, 1);
  EXPECT_EQ(ScoreOf(d, 0), 0.0f);
}

TEST(CommitmentTest, BonusIsMultiplicativeAndDefendsTheCurrentAction) {
  SetBuilder b(2);
  b.Action("current", {0}).Action("rival", {1});
  b.def().selection.commitment_bonus = 0.2;
  const CompiledBehaviourSet set = b.Build();
  // The rival must beat 0.5 * 1.2 = 0.6.
  std::vector<float> f = {0.5f, 0.59f};
  Decision d = MustDecide(set, {.factors = f, .current_action = 0});
  EXPECT_EQ(d.action, 0);
  EXPECT_NEAR(d.score, 0.6, 1e-6);
  EXPECT_FALSE(d.switched);
  EXPECT_NEAR(d.candidates[0].commitment_factor, 1.2, 1e-6);
  f = {0.5f, 0.61f};
  d = MustDecide(set, {.factors = f, .current_action = 0});
  EXPECT_EQ(d.action, 1);
  EXPECT_TRUE(d.switched);
}

// Seed 003's momentum: score(current) *= 1.15, "so that a difference of
// 0.001 does not flip the NPC every frame". villager_needs.yaml uses it.
TEST(CommitmentTest, SeedThreesMomentumIsTimesOnePointOneFive) {
  SetBuilder b(2);
  b.Action("eat", {0}).Action("sleep", {1});
  b.def().selection.commitment_bonus = 0.15;
  const CompiledBehaviourSet set = b.Build();
  // Two near-identical needs: the running one keeps winning.
  std::vector<float> f = {0.700f, 0.701f};
  Decision d = MustDecide(set, {.factors = f, .current_action = 0});
  EXPECT_EQ(d.action, 0);
  EXPECT_EQ(d.candidates[0].commitment_factor, 1.15f);
  EXPECT_EQ(d.candidates[1].commitment_factor, 1.0f);
  EXPECT_EQ(d.score, 0.700f * 1.15f);
  EXPECT_NEAR(d.score, 0.805, 1e-6);
  // The rival needs more than 0.805 to take over.
  f = {0.700f, 0.804f};
  EXPECT_EQ(MustDecide(set, {.factors = f, .current_action = 0}).action, 0);
  f = {0.700f, 0.806f};
  EXPECT_EQ(MustDecide(set, {.factors = f, .current_action = 0}).action, 1);
  // Without a running action there is no bonus.
  f = {0.700f, 0.701f};
  EXPECT_EQ(MustDecide(set, {.factors = f}).action, 1);
}

// --- Ties, ranks, thresholds ----------------------------------------------

TEST(TieTest, TiesGoToTheCurrentActionThenTheLowestIndex) {
  SetBuilder b(1);
  b.Action("a", {0}).Action("b", {0}).Action("c", {0});
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.5f};
  EXPECT_EQ(MustDecide(set, {.factors = f}).action, 0);
  EXPECT_EQ(MustDecide(set, {.factors = f, .current_action = 2}).action, 2);
  for (int i = 0; i < 20; ++i) {  // deterministic, whatever the seed
    EXPECT_EQ(MustDecide(set, {.factors = f, .seed = uint64_t(i)}).action, 0);
  }
}

TEST(RankTest, OnlyTheHighestEligibleRankCompetes) {
  SetBuilder b(2);
  b.Action("strong", {0}).Action("emergency", {1});
  b.last().rank = 1;
  const CompiledBehaviourSet set = b.Build();
  std::vector<float> f = {0.9f, 0.1f};
  Decision d = MustDecide(set, {.factors = f});
  EXPECT_EQ(d.action, 1) << "rank 1 preempts a higher rank-0 score";
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.runner_up_action, 0);
  f = {0.9f, 0.0f};  // the emergency is vetoed: rank 0 competes
  d = MustDecide(set, {.factors = f});
  EXPECT_EQ(d.action, 0);
  EXPECT_EQ(d.rank, 0);
}

TEST(RankTest, ARankBelowMinScoreDoesNotBlockLowerRanks) {
  SetBuilder b(2);
  b.Action("normal", {0}).Action("emergency", {1});
  b.last().rank = 1;
  b.def().selection.min_score = 0.2;
  const std::vector<float> f = {0.5f, 0.1f};
  EXPECT_EQ(MustDecide(b.Build(), {.factors = f}).action, 0);
}

TEST(SelectionTest, MinScoreFallsBackToTheFallbackAction) {
  SetBuilder b(1);
  b.Action("act", {0}).Action("idle", {});
  b.last().weight = 0.01;  // constant baseline, below the threshold
  b.def().selection.min_score = 0.3;
  b.def().selection.fallback_action = "idle";
  const CompiledBehaviourSet set = b.Build();
  std::vector<float> f = {0.2f};
  Decision d = MustDecide(set, {.factors = f});
  EXPECT_EQ(d.action, 1);
  EXPECT_TRUE(d.fallback);
  EXPECT_NEAR(d.score, 0.01, 1e-6);
  f = {0.4f};
  d = MustDecide(set, {.factors = f});
  EXPECT_EQ(d.action, 0);
  EXPECT_FALSE(d.fallback);
}

// --- Weight, cooldown, personality ------------------------------------------

TEST(ScoreTest, ActionWithoutConsiderationsScoresItsWeight) {
  SetBuilder b(1);
  b.Action("idle", {});
  b.last().weight = 0.3;
  const std::vector<float> f = {0.9f};
  EXPECT_NEAR(MustDecide(b.Build(), {.factors = f}).score, 0.3, 1e-6);
}

TEST(ScoreTest, ConsiderationWeightBlendsTowardsOne) {
  SetBuilder b(1);
  b.Action("a", {0});
  b.last().considerations[0].weight = 0.25;  // 0.4 * 0.25 + 0.75
  const std::vector<float> f = {0.4f};
  EXPECT_NEAR(MustDecide(b.Build(), {.factors = f}).score, 0.85, 1e-6);
}

// The documented division, not a multiplication by a reciprocal (which
// gives 0.79999995 for raw 20 on 100 -> 0): boundary decimals normalise to
// the float nearest the decimal, and a step at that threshold fires there,
// in the single path and in the batch path (its fused pass) alike.
TEST(ScoreTest, BoundaryDecimalsNormaliseToTheDocumentedDivision) {
  SetDefinition def;
  def.name = "boundaries";
  def.factors = {{.name = "hp", .min = 0, .max = 100}};
  CurveDefinition step_at_08{.kind = CurveKind::kStep, .threshold = 0.8};
  CurveDefinition step_at_06{.kind = CurveKind::kStep, .threshold = 0.6};
  def.actions = {{.name = "hurt",
                  .considerations = {{.name = "low",
                                      .factor = "hp",
                                      .range_min = 100,
                                      .range_max = 0,
                                      .curve = step_at_08}}},
                 {.name = "fine",
                  .considerations = {{.name = "high",
                                      .factor = "hp",
                                      .curve = step_at_06}}},
                 {.name = "rest", .weight = 0.5}};
  const absl::StatusOr<CompiledBehaviourSet> set = Compile(def);
  ASSERT_THAT(set, IsOk());
  struct Case {
    float raw, hurt_norm, fine_norm;
    const char* winner;
  };
  for (const Case& c :
       {Case{20, 0.8f, 0.2f, "hurt"}, Case{60, 0.4f, 0.6f, "fine"},
        Case{20.01f, (20.01f - 100) / -100.0f, 0.2001f, "rest"},
        Case{59.99f, 0.4001f, (59.99f - 0) / 100.0f, "rest"},
        Case{30, 0.7f, 0.3f, "rest"}, Case{90, 0.1f, 0.9f, "fine"}}) {
    SCOPED_TRACE(c.raw);
    const std::vector<float> f = {c.raw};
    const Decision d = MustDecide(*set, {.factors = f});
    EXPECT_EQ(d.considerations[0].normalised, c.hurt_norm);
    EXPECT_EQ(d.considerations[1].normalised, c.fine_norm);
    ASSERT_GE(d.action, 0);
    EXPECT_EQ(set->actions()[d.action].name, c.winner);
    // The batch path, explain none (the fused pass).
    BatchDecider decider;
    std::vector<AgentInput> inputs(17, AgentInput{.factors = f});
    std::vector<BatchDecision> out(inputs.size());
    decider.Decide(*set, inputs, ExplainLevel::kNone, absl::MakeSpan(out));
    for (const BatchDecision& b : out) {
      ASSERT_GE(b.action, 0);
      EXPECT_EQ(set->actions()[b.action].name, c.winner);
    }
  }
}

TEST(ScoreTest, BookendsNormaliseAndInvert) {
  SetDefinition def;
  def.name = "bookends";
  def.factors = {{.name = "distance", .min = 0, .max = 30}};
  def.actions = {{.name = "near",
                  .considerations = {{.name = "close",
                                      .factor = "distance",
                                      .range_min = 30,
                                      .range_max = 0}}}};
  const absl::StatusOr<CompiledBehaviourSet> set = Compile(def);
  ASSERT_THAT(set, IsOk());
  for (auto [raw, want] : {std::pair{30.0f, 0.0f},
                           {0.0f, 1.0f},
                           {6.0f, 0.8f},
                           {-10.0f, 1.0f},
                           {99.0f, 0.0f}}) {
    const std::vector<float> f = {raw};
    const Decision d = MustDecide(*set, {.factors = f});
    EXPECT_NEAR(d.considerations[0].normalised, want, 1e-6) << raw;
  }
}

TEST(CooldownTest, ScalesByTheElapsedFractionUntilItEnds) {
  SetBuilder b(1);
  b.Action("spell", {0});
  b.last().cooldown_seconds = 5;
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.8f};
  for (auto [since, factor] : {std::pair{0.0f, 0.0f},
                               {2.0f, 0.4f},
                               {4.9f, 0.98f},
                               {5.0f, 1.0f},
                               {kNeverRan, 1.0f}}) {
    const std::vector<float> s = {since};
    const Decision d =
        MustDecide(set, {.factors = f, .seconds_since_action = s});
    EXPECT_NEAR(d.candidates[0].cooldown_factor, factor, 1e-6) << since;
    EXPECT_NEAR(ScoreOf(d, 0), 0.8f * factor, 1e-6) << since;
  }
}

TEST(PersonalityTest, OverridesActionAndConsiderationWeights) {
  SetBuilder b(2);
  b.Action("eat", {0}).Action("play", {1});
  b.def().personalities = {
      {.name = "glutton", .action_weights = {{"eat", 2.0}}},
      {.name = "indifferent", .consideration_weights = {{"play.c0", 0.0}}},
  };
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.3f, 0.5f};
  EXPECT_EQ(MustDecide(set, {.factors = f}).action, 1);
  const Decision glutton = MustDecide(set, {.factors = f, .personality = 0});
  EXPECT_EQ(glutton.action, 0);
  EXPECT_NEAR(glutton.score, 0.6, 1e-6);
  EXPECT_NEAR(glutton.candidates[0].weight, 2.0, 1e-6);
  // Weight 0 makes play's consideration neutral: contribution 1.
  const Decision indifferent =
      MustDecide(set, {.factors = f, .personality = 1});
  EXPECT_NEAR(ScoreOf(indifferent, 1), 1.0, 1e-6);
}

TEST(PersonalityTest, QualifiedKeyWinsOverAPlainName) {
  SetBuilder b(1);
  b.Action("a", {0}).Action("b", {0});
  b.def().personalities = {
      {.name = "p", .consideration_weights = {{"a.c0", 1.0}, {"c0", 0.0}}}};
  const std::vector<float> f = {0.5f};
  const Decision d = MustDecide(b.Build(), {.factors = f, .personality = 0});
  EXPECT_NEAR(ScoreOf(d, 0), 0.5, 1e-6);  // a.c0 keeps weight 1
  EXPECT_NEAR(ScoreOf(d, 1), 1.0, 1e-6);  // b.c0 takes the plain name's 0
}

// --- Aggregations -----------------------------------------------------------

TEST(AggregationTest, WeightedSumAveragesWithoutVeto) {
  SetBuilder b(2);
  b.Action("a", {0, 1});
  b.last().considerations[1].weight = 0.5;
  b.def().aggregation = Aggregation::kWeightedSum;
  const std::vector<float> f = {0.0f, 0.9f};
  const Decision d = MustDecide(b.Build(), {.factors = f});
  EXPECT_NEAR(d.score, (0.0 * 1 + 0.9 * 0.5) / 1.5, 1e-6);
  EXPECT_EQ(d.candidates[0].veto, VetoReason::kNone);
}

TEST(AggregationTest, MinTakesTheWeakestAndVetoesOnZero) {
  SetBuilder b(3);
  b.Action("a", {0, 1}).Action("b", {2, 0});
  b.def().aggregation = Aggregation::kMin;
  const std::vector<float> f = {0.7f, 0.4f, 0.0f};
  const Decision d = MustDecide(b.Build(), {.factors = f});
  EXPECT_NEAR(ScoreOf(d, 0), 0.4, 1e-6);
  EXPECT_EQ(d.candidates[1].veto, VetoReason::kConsideration);
}

// --- Per-target ------------------------------------------------------------

CompiledBehaviourSet TargetSet() {
  SetDefinition def;
  def.name = "targets";
  def.factors = {{.name = "charges"}};
  def.target_factors = {{.name = "closeness"}};
  def.actions = {
      {.name = "attack",
       .considerations = {{.name = "charged", .factor = "charges"},
                          {.name = "close",
                           .factor = "closeness",
                           .per_target = true}},
       .per_target = true},
      {.name = "wait",
       .considerations = {{.name = "idle",
                           .factor = "charges",
                           .curve = {.invert = true}}}},
  };
  def.selection.commitment_bonus = 0.5;
  def.compensation = Compensation::kNone;  // scores are plain products
  absl::StatusOr<CompiledBehaviourSet> set = Compile(def);
  EXPECT_THAT(set, IsOk());
  return *std::move(set);
}

TEST(PerTargetTest, ScoresEachTargetAndPicksThePair) {
  const CompiledBehaviourSet set = TargetSet();
  const std::vector<float> f = {1.0f};
  const std::vector<float> t0 = {0.3f}, t1 = {0.9f}, t2 = {0.6f};
  const std::vector<TargetInput> targets = {{t0}, {t1}, {t2}};
  const Decision d = MustDecide(set, {.factors = f, .targets = targets});
  EXPECT_EQ(d.action, 0);
  EXPECT_EQ(d.target, 1);
  ASSERT_EQ(d.candidates.size(), 4u);  // three targets + wait
  EXPECT_EQ(d.runner_up_action, 0);
  EXPECT_EQ(d.runner_up_target, 2);
}

TEST(PerTargetTest, CommitmentFollowsTheCurrentTargetOnly) {
  const CompiledBehaviourSet set = TargetSet();
  const std::vector<float> f = {1.0f};
  const std::vector<float> t0 = {0.5f}, t1 = {0.6f};
  const std::vector<TargetInput> targets = {{t0}, {t1}};
  Decision d = MustDecide(set, {.factors = f,
                                .current_action = 0,
                                .current_target = 0,
                                .targets = targets});
  EXPECT_EQ(d.target, 0) << "0.5 * 1.5 beats 0.6";
  EXPECT_FALSE(d.switched);
  // The current target is gone: no candidate gets the bonus.
  d = MustDecide(set, {.factors = f,
                       .current_action = 0,
                       .current_target = kTargetGone,
                       .targets = targets});
  EXPECT_EQ(d.target, 1);
  EXPECT_NEAR(d.score, 0.6, 1e-6);
  EXPECT_TRUE(d.switched);
}

TEST(PerTargetTest, NoTargetsVetoesThePerTargetAction) {
  const CompiledBehaviourSet set = TargetSet();
  const std::vector<float> f = {0.5f};
  const Decision d = MustDecide(set, {.factors = f});
  EXPECT_EQ(d.candidates[0].veto, VetoReason::kNoTargets);
  EXPECT_EQ(d.action, 1);
}

// --- Random strategies -----------------------------------------------------

TEST(RandomTest, SplitMix64MatchesTheReferenceSequence) {
  // First outputs of the reference implementation seeded with 0.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.Next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.Next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.Next(), 0x06C45D188009454Full);
  SplitMix64 again(0);
  const double u = again.NextDouble();
  EXPECT_GE(u, 0.0);
  EXPECT_LT(u, 1.0);
}

TEST(RandomTest, TopTwoPicksTheBestAbout55PercentAndNeverTheWorst) {
  // Seed 004: scores 0.6, 0.5, 0.1 with a top-2 pick: the best runs about
  // 55% of the time (0.6 / 1.1) and the 0.1 action never does.
  SetBuilder b(3);
  b.Action("best", {0}).Action("second", {1}).Action("worst", {2});
  b.def().selection.strategy = Strategy::kTopK;
  b.def().selection.top_k = 2;
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.6f, 0.5f, 0.1f};
  int counts[3] = {0, 0, 0};
  constexpr int kRuns = 20000;
  for (int seed = 0; seed < kRuns; ++seed) {
    const Decision d = MustDecide(set, {.factors = f, .seed = uint64_t(seed)},
                                  ExplainLevel::kNone);
    ASSERT_GE(d.action, 0);
    ++counts[d.action];
  }
  EXPECT_NEAR(counts[0] / double(kRuns), 0.6 / 1.1, 0.015);
  EXPECT_EQ(counts[2], 0);
  const Decision d = MustDecide(set, {.factors = f, .seed = 7});
  EXPECT_NEAR(d.candidates[0].probability, 0.6 / 1.1, 1e-6);
  EXPECT_EQ(d.candidates[2].probability, 0.0);
}

TEST(RandomTest, SameSeedSameDecision) {
  SetBuilder b(3);
  b.Action("a", {0}).Action("b", {1}).Action("c", {2});
  b.def().selection.strategy = Strategy::kWeightedRandom;
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.3f, 0.3f, 0.4f};
  for (uint64_t seed : {1ull, 99ull, 123456789ull}) {
    const Decision first = MustDecide(set, {.factors = f, .seed = seed});
    for (int i = 0; i < 5; ++i) {
      const Decision again = MustDecide(set, {.factors = f, .seed = seed});
      EXPECT_EQ(again.action, first.action);
      EXPECT_EQ(again.draw, first.draw);
    }
  }
}

TEST(RandomTest, WeightedRandomFollowsTheScores) {
  SetBuilder b(2);
  b.Action("a", {0}).Action("b", {1});
  b.def().selection.strategy = Strategy::kWeightedRandom;
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.25f, 0.75f};
  int b_count = 0;
  constexpr int kRuns = 20000;
  for (int seed = 0; seed < kRuns; ++seed) {
    b_count += MustDecide(set, {.factors = f, .seed = uint64_t(seed)},
                          ExplainLevel::kNone)
                   .action == 1;
  }
  EXPECT_NEAR(b_count / double(kRuns), 0.75, 0.015);
}

TEST(RandomTest, SoftmaxProbabilitiesFollowTheTemperature) {
  SetBuilder b(2);
  b.Action("a", {0}).Action("b", {1});
  b.def().selection.strategy = Strategy::kSoftmax;
  b.def().selection.temperature = 0.1;
  const std::vector<float> f = {0.5f, 0.6f};
  const Decision d = MustDecide(b.Build(), {.factors = f, .seed = 3});
  // p(b) = e^(0.6/T) / (e^(0.5/T) + e^(0.6/T)) = 1 / (1 + e^(-0.1/T)).
  EXPECT_NEAR(d.candidates[1].probability, 1.0 / (1.0 + std::exp(-1.0)), 1e-5);
  EXPECT_NEAR(d.candidates[0].probability + d.candidates[1].probability, 1.0,
              1e-9);
  EXPECT_GE(d.draw, 0.0);
}

// --- Input errors ------------------------------------------------------------

TEST(DecideInputTest, RejectsAWrongFactorCount) {
  SetBuilder b(3);
  b.Action("a", {0});
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.5f, 0.5f};
  Decision d;
  EXPECT_THAT(Decide(set, {.factors = f}, ExplainLevel::kNone, &d),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("factors: expected 3 values (test), got 2")));
}

TEST(DecideInputTest, RejectsOutOfRangeIndices) {
  SetBuilder b(1);
  b.Action("a", {0});
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.5f};
  const std::vector<float> since = {1.0f, 2.0f};
  Decision d;
  EXPECT_THAT(
      Decide(set, {.factors = f, .current_action = 3}, ExplainLevel::kNone, &d),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("current_action")));
  EXPECT_THAT(
      Decide(set, {.factors = f, .personality = 0}, ExplainLevel::kNone, &d),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("personality")));
  EXPECT_THAT(Decide(set, {.factors = f, .seconds_since_action = since},
                     ExplainLevel::kNone, &d),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("seconds_since_action")));
}

TEST(DecideInputTest, ExplainLevelsGateTheTraces) {
  SetBuilder b(1);
  b.Action("a", {0}).Action("b", {0});
  const CompiledBehaviourSet set = b.Build();
  const std::vector<float> f = {0.5f};
  const Decision none = MustDecide(set, {.factors = f}, ExplainLevel::kNone);
  EXPECT_TRUE(none.considerations.empty());
  EXPECT_EQ(none.runner_up_action, 1);  // computed at every level
  const Decision top = MustDecide(set, {.factors = f}, ExplainLevel::kTop);
  EXPECT_EQ(top.runner_up_action, 1);
  EXPECT_TRUE(top.considerations.empty());
  const Decision full = MustDecide(set, {.factors = f}, ExplainLevel::kFull);
  EXPECT_EQ(full.considerations.size(), 2u);
  EXPECT_EQ(full.action, none.action);
  EXPECT_EQ(full.score, none.score);
}

}  // namespace
}  // namespace utilityd::engine
