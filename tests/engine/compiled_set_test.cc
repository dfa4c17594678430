#include "utilityd/engine/compiled_set.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::utilityd::testing::IsOk;
using ::utilityd::testing::StatusIs;

SetDefinition ValidSet() {
  SetDefinition d;
  d.name = "guard";
  d.factors = {{.name = "health", .min = 0, .max = 100},
               {.name = "distance", .min = 0, .max = 30}};
  d.target_factors = {{.name = "threat"}};
  d.actions = {
      {.name = "heal",
       .considerations = {{.name = "hurt",
                           .factor = "health",
                           .range_min = 100,
                           .range_max = 0}}},
      {.name = "strike",
       .considerations = {{.name = "near", .factor = "distance"},
                          {.name = "dangerous",
                           .factor = "threat",
                           .per_target = true}},
       .per_target = true},
  };
  d.personalities = {{.name = "brave", .action_weights = {{"strike", 1.5}}}};
  return d;
}

TEST(CompileTest, CompilesAValidSetWithIndices) {
  const absl::StatusOr<CompiledBehaviourSet> set = Compile(ValidSet());
  ASSERT_THAT(set, IsOk());
  EXPECT_EQ(set->FindAction("strike"), 1);
  EXPECT_EQ(set->FindAction("nope"), -1);
  EXPECT_EQ(set->FindFactor("distance"), 1);
  EXPECT_EQ(set->FindTargetFactor("threat"), 0);
  EXPECT_EQ(set->FindPersonality("brave"), 0);
  EXPECT_EQ(set->compensation(), Compensation::kPerConsideration);
  EXPECT_TRUE(set->has_per_target_actions());
  const CompiledConsideration& hurt = set->considerations()[0];
  EXPECT_FLOAT_EQ(hurt.range_lo, 100);
  EXPECT_FLOAT_EQ(hurt.range_span, -100.0f);
  EXPECT_FLOAT_EQ(set->personality_action_weight(0, 1), 1.5f);
  EXPECT_FLOAT_EQ(set->personality_action_weight(0, 0), 1.0f);
}

TEST(CompileTest, DefaultBookendsComeFromTheFactor) {
  SetDefinition d = ValidSet();
  const absl::StatusOr<CompiledBehaviourSet> set = Compile(d);
  ASSERT_THAT(set, IsOk());
  const CompiledConsideration& near = set->considerations()[1];
  EXPECT_FLOAT_EQ(near.range_lo, 0);
  EXPECT_FLOAT_EQ(near.range_span, 30.0f);
}

TEST(CompileTest, CompensationDefaultsByAggregation) {
  SetDefinition d = ValidSet();
  d.aggregation = Aggregation::kMin;
  const absl::StatusOr<CompiledBehaviourSet> set = Compile(d);
  ASSERT_THAT(set, IsOk());
  EXPECT_EQ(set->compensation(), Compensation::kNone);
}

TEST(CompileTest, ReportsEveryProblemAtOnce) {
  SetDefinition d = ValidSet();
  d.actions[0].considerations[0].factor = "helth";
  d.actions[1].weight = -1;
  d.selection.fallback_action = "sleep";
  EXPECT_THAT(
      Compile(d),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("actions[0].considerations[0].factor: unknown "
                               "factor \"helth\" (did you mean \"health\"?)"),
                     HasSubstr("actions[1].weight: must be >= 0, got -1"),
                     HasSubstr("selection.fallback_action: unknown action "
                               "\"sleep\""))));
}

struct BadSet {
  std::string name;
  std::function<void(SetDefinition&)> mutate;
  std::string path;
  std::string message;
};

void PrintTo(const BadSet& b, std::ostream* os) { *os << b.name; }

class ValidationTest : public ::testing::TestWithParam<BadSet> {};

TEST_P(ValidationTest, ReportsTheFieldAndAHint) {
  SetDefinition d = ValidSet();
  GetParam().mutate(d);
  EXPECT_THAT(Validate(d),
              Contains(AllOf(Field(&ValidationIssue::path, GetParam().path),
                             Field(&ValidationIssue::message,
                                   HasSubstr(GetParam().message)))));
  EXPECT_FALSE(Compile(d).ok());
}

std::vector<BadSet> BadSets() {
  return {
      {"missing_name", [](SetDefinition& d) { d.name = ""; }, "name",
       "is required"},
      {"bad_name", [](SetDefinition& d) { d.name = "my set"; }, "name",
       "not a valid name"},
      {"no_factors", [](SetDefinition& d) { d.factors.clear(); }, "factors",
       "at least one factor"},
      {"duplicate_factor",
       [](SetDefinition& d) { d.factors[1].name = "health"; },
       "factors[1].name", "duplicate factor \"health\""},
      {"empty_factor_range", [](SetDefinition& d) { d.factors[0].max = 0; },
       "factors[0]", "min must be below max"},
      {"nan_factor_min", [](SetDefinition& d) { d.factors[0].min = NAN; },
       "factors[0].min", "finite"},
      {"huge_factor_max", [](SetDefinition& d) { d.factors[0].max = 1e300; },
       "factors[0].max", "within ±3.4e38"},
      {"no_actions", [](SetDefinition& d) { d.actions.clear(); }, "actions",
       "at least one action"},
      {"duplicate_action", [](SetDefinition& d) { d.actions[1].name = "heal"; },
       "actions[1].name", "duplicate action \"heal\""},
      {"negative_cooldown",
       [](SetDefinition& d) { d.actions[0].cooldown_seconds = -2; },
       "actions[0].cooldown_seconds", "must be >= 0"},
      {"unknown_factor",
       [](SetDefinition& d) {
         d.actions[0].considerations[0].factor = "helth";
       },
       "actions[0].considerations[0].factor",
       "unknown factor \"helth\" (did you mean \"health\"?)"},
      {"missing_factor",
       [](SetDefinition& d) { d.actions[0].considerations[0].factor = ""; },
       "actions[0].considerations[0].factor", "is required"},
      {"target_factor_without_per_target",
       [](SetDefinition& d) {
         d.actions[1].considerations[1].per_target = false;
       },
       "actions[1].considerations[1].factor",
       "is a target factor: set per_target: true"},
      {"agent_factor_read_per_target",
       [](SetDefinition& d) {
         d.actions[1].considerations[0].per_target = true;
       },
       "actions[1].considerations[0].factor",
       "is an agent factor, not a target factor"},
      {"per_target_consideration_in_plain_action",
       [](SetDefinition& d) { d.actions[1].per_target = false; },
       "actions[1].considerations[1].per_target",
       "the action is not per_target"},
      {"per_target_action_without_target_consideration",
       [](SetDefinition& d) { d.actions[0].per_target = true; },
       "actions[0].per_target", "every target would score the same"},
      {"duplicate_consideration",
       [](SetDefinition& d) { d.actions[1].considerations[1].name = "near"; },
       "actions[1].considerations[1].name", "duplicate consideration \"near\""},
      {"empty_range",
       [](SetDefinition& d) { d.actions[0].considerations[0].range_max = 100; },
       "actions[0].considerations[0].range", "is empty"},
      {"weight_above_one",
       [](SetDefinition& d) { d.actions[0].considerations[0].weight = 1.5; },
       "actions[0].considerations[0].weight", "within 0..1"},
      {"output_above_one",
       [](SetDefinition& d) { d.actions[0].considerations[0].output_max = 2; },
       "actions[0].considerations[0].output.max", "within 0..1"},
      {"output_inverted",
       [](SetDefinition& d) {
         d.actions[0].considerations[0].output_min = 0.8;
         d.actions[0].considerations[0].output_max = 0.2;
       },
       "actions[0].considerations[0].output", "use curve.invert"},
      {"bad_curve",
       [](SetDefinition& d) {
         d.actions[0].considerations[0].curve.kind = CurveKind::kLogistic;
         d.actions[0].considerations[0].curve.steepness = 0;
       },
       "actions[0].considerations[0].curve.logistic.steepness", "must be > 0"},
      {"compensation_with_min",
       [](SetDefinition& d) {
         d.aggregation = Aggregation::kMin;
         d.compensation = Compensation::kOnProduct;
       },
       "scoring.compensation", "only to the product"},
      {"top_k_zero",
       [](SetDefinition& d) {
         d.selection.strategy = Strategy::kTopK;
         d.selection.top_k = 0;
       },
       "selection.top_k.k", "must be >= 1"},
      {"softmax_zero",
       [](SetDefinition& d) {
         d.selection.strategy = Strategy::kSoftmax;
         d.selection.temperature = 0;
       },
       "selection.softmax.temperature", "must be > 0"},
      {"negative_bonus",
       [](SetDefinition& d) { d.selection.commitment_bonus = -0.1; },
       "selection.commitment_bonus", "must be >= 0"},
      {"unknown_fallback",
       [](SetDefinition& d) { d.selection.fallback_action = "haal"; },
       "selection.fallback_action",
       "unknown action \"haal\" (did you mean \"heal\"?)"},
      {"per_target_fallback",
       [](SetDefinition& d) { d.selection.fallback_action = "strike"; },
       "selection.fallback_action", "must not need a target"},
      {"duplicate_personality",
       [](SetDefinition& d) { d.personalities.push_back({.name = "brave"}); },
       "personalities[1].name", "duplicate personality"},
      {"personality_unknown_action",
       [](SetDefinition& d) {
         d.personalities[0].action_weights = {{"strik", 2}};
       },
       "personalities[0].action_weights[\"strik\"]",
       "unknown action \"strik\" (did you mean \"strike\"?)"},
      {"personality_negative_weight",
       [](SetDefinition& d) {
         d.personalities[0].action_weights = {{"strike", -1}};
       },
       "personalities[0].action_weights[\"strike\"]", "must be >= 0"},
      {"personality_unknown_consideration",
       [](SetDefinition& d) {
         d.personalities[0].consideration_weights = {{"heal.hurtt", 0.5}};
       },
       "personalities[0].consideration_weights[\"heal.hurtt\"]",
       "did you mean \"heal.hurt\""},
      {"personality_consideration_weight_range",
       [](SetDefinition& d) {
         d.personalities[0].consideration_weights = {{"hurt", 3}};
       },
       "personalities[0].consideration_weights[\"hurt\"]", "within 0..1"},
      {"too_many_considerations",
       [](SetDefinition& d) {
         d.actions[0].considerations.resize(kMaxConsiderationsPerAction + 1,
                                            d.actions[0].considerations[0]);
       },
       "actions[0].considerations", "at most 64"},
  };
}

INSTANTIATE_TEST_SUITE_P(Sets, ValidationTest, ::testing::ValuesIn(BadSets()),
                         [](const auto& p) { return p.param.name; });

TEST(ValidateTest, AValidSetHasNoIssues) {
  EXPECT_THAT(Validate(ValidSet()), IsEmpty());
  // One mistake away from it is an issue at its path: validation looked.
  SetDefinition bad = ValidSet();
  bad.actions[1].considerations[1].factor = "treat";
  const std::vector<ValidationIssue> issues = Validate(bad);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "actions[1].considerations[1].factor");
  EXPECT_THAT(issues[0].message, ::testing::HasSubstr("\"treat\""));
}

// The documented limits hold exactly: 1,024 factors and 4,096 actions
// compile and decide; one more of either is refused, naming the limit.
TEST(LimitsTest, FactorsAndActionsUpToTheLimitAndNotBeyond) {
  SetDefinition d;
  d.name = "big";
  for (int i = 0; i < kMaxFactors; ++i) {
    d.factors.push_back({.name = absl::StrCat("f", i)});
  }
  for (int a = 0; a < kMaxActions; ++a) {
    d.actions.push_back(
        {.name = absl::StrCat("a", a),
         .considerations = {
             {.name = "c", .factor = absl::StrCat("f", a % kMaxFactors)}}});
  }
  absl::StatusOr<CompiledBehaviourSet> set = Compile(d);
  ASSERT_THAT(set, IsOk());
  EXPECT_EQ(set->factor_count(), 1024);
  EXPECT_EQ(set->action_count(), 4096);
  // Factor 700 is the highest: actions 700, 1724, 2748 and 3772 read it,
  // and the tie goes to the lowest index.
  std::vector<float> factors(kMaxFactors, 0.25f);
  factors[700] = 0.9f;
  Decision decision;
  ASSERT_THAT(
      Decide(*set, {.factors = factors}, ExplainLevel::kNone, &decision),
      IsOk());
  EXPECT_EQ(decision.action, 700);
  EXPECT_EQ(decision.runner_up_action, 1724);

  SetDefinition too_many_factors = d;
  too_many_factors.factors.push_back({.name = "one_more"});
  EXPECT_THAT(Compile(too_many_factors),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("at most 1024 factors, got 1025")));
  SetDefinition too_many_actions = d;
  too_many_actions.actions.push_back(d.actions[0]);
  too_many_actions.actions.back().name = "one_more";
  EXPECT_THAT(Compile(too_many_actions),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("at most 4096 actions, got 4097")));
}

TEST(SuggestNameTest, SuggestsOnlyCloseNames) {
  const std::vector<std::string> names = {"health", "charges", "in_cover"};
  EXPECT_EQ(SuggestName("helth", names), "health");
  EXPECT_EQ(SuggestName("Charges", names), "charges");
  EXPECT_EQ(SuggestName("incover", names), "in_cover");
  EXPECT_EQ(SuggestName("banana", names), "");
}

}  // namespace
}  // namespace utilityd::engine
