#include "utilityd/engine/explain.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace utilityd::engine {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;

CompiledBehaviourSet EatHide() {
  SetDefinition d;
  d.name = "eat_hide";
  d.factors = {{.name = "hunger"}, {.name = "safety"}, {.name = "threat"}};
  d.target_factors = {{.name = "size"}};
  d.actions = {
      {.name = "eat",
       .considerations = {{.name = "hunger", .factor = "hunger"},
                          {.name = "safety", .factor = "safety"}}},
      {.name = "hide",
       .considerations = {{.name = "threat", .factor = "threat"}}},
      {.name = "pounce",
       .considerations = {{.name = "big",
                           .factor = "size",
                           .per_target = true}},
       .per_target = true},
  };
  d.compensation = Compensation::kNone;
  absl::StatusOr<CompiledBehaviourSet> set = Compile(d);
  EXPECT_THAT(set, IsOk());
  return *std::move(set);
}

TEST(ExplainTest, SummaryShowsEveryCandidateAndMarksTheWinner) {
  const CompiledBehaviourSet set = EatHide();
  const std::vector<float> f = {0.62f, 0.48f, 0.52f};
  const std::vector<float> rabbit = {0.0f};
  const std::vector<TargetInput> targets = {{rabbit}};
  Decision d;
  ASSERT_THAT(
      Decide(set, {.factors = f, .targets = targets}, ExplainLevel::kFull, &d),
      IsOk());
  const std::vector<std::string> ids = {"rabbit"};
  EXPECT_EQ(FormatSummary(set, d, ids),
            "eat 0.30 [hunger 0.62→0.62, safety 0.48→0.48] | "
            "*hide 0.52 [threat 0.52→0.52] | "
            "pounce@rabbit 0.00 vetoed by big [big 0.00→0.00]");
}

TEST(ExplainTest, NamesInvalidInputAndMissingTargets) {
  const CompiledBehaviourSet set = EatHide();
  const std::vector<float> f = {NAN, 0.5f, 0.1f};
  Decision d;
  ASSERT_THAT(Decide(set, {.factors = f}, ExplainLevel::kFull, &d), IsOk());
  const std::string line = FormatSummary(set, d, {});
  EXPECT_THAT(line,
              HasSubstr("eat 0.00 invalid input in hunger [hunger invalid"));
  EXPECT_THAT(line, HasSubstr("pounce 0.00 no targets"));
  EXPECT_EQ(VetoText(set, d.candidates[2]), "no targets");
}

}  // namespace
}  // namespace utilityd::engine
