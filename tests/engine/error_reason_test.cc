#include "utilityd/engine/error_reason.h"

#include "gtest/gtest.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine {
namespace {

TEST(ErrorReasonTest, FieldErrorCarriesReasonFieldAndMessage) {
  const absl::Status s =
      FieldError(absl::StatusCode::kInvalidArgument, ErrorReason::kFactorCount,
                 "factors", "expected 10 values, got 9");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "factors: expected 10 values, got 9");
  EXPECT_EQ(ReasonOf(s), ErrorReason::kFactorCount);
  EXPECT_EQ(FieldOf(s), "factors");
}

TEST(ErrorReasonTest, PrefixFieldMovesMessageAndFieldTogether) {
  const absl::Status s = PrefixField(
      FieldError(absl::StatusCode::kNotFound, ErrorReason::kUnknownSet,
                 "behaviour_set", "unknown set \"x\""),
      "agents[3].");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "agents[3].behaviour_set: unknown set \"x\"");
  EXPECT_EQ(FieldOf(s), "agents[3].behaviour_set");
  EXPECT_EQ(ReasonOf(s), ErrorReason::kUnknownSet);
  EXPECT_TRUE(PrefixField(absl::OkStatus(), "agents[0].").ok());
}

TEST(ErrorReasonTest, PlainStatusHasNoReasonOrField) {
  const absl::Status s = absl::InternalError("boom");
  EXPECT_EQ(ReasonOf(s), ErrorReason::kUnspecified);
  EXPECT_EQ(FieldOf(s), "");
  const absl::Status r =
      WithReason(absl::UnavailableError("later"), ErrorReason::kNotReady);
  EXPECT_EQ(ReasonOf(r), ErrorReason::kNotReady);
  EXPECT_EQ(FieldOf(r), "");
  EXPECT_EQ(r.message(), "later");
}

TEST(ErrorReasonTest, EngineInputChecksSayWhy) {
  SetDefinition def;
  def.name = "s";
  def.factors = {{.name = "a"}};
  def.actions = {
      {.name = "go", .considerations = {{.name = "c", .factor = "a"}}}};
  auto set = Compile(def);
  ASSERT_TRUE(set.ok()) << set.status();
  const std::vector<float> two = {0.5f, 0.5f};
  AgentInput in{.factors = two};
  Decision d;
  absl::Status s = Decide(*set, in, ExplainLevel::kNone, &d);
  EXPECT_EQ(ReasonOf(s), ErrorReason::kFactorCount);
  EXPECT_EQ(FieldOf(s), "factors");
  in.factors = absl::MakeConstSpan(two.data(), 1);
  in.current_action = 7;
  s = Decide(*set, in, ExplainLevel::kNone, &d);
  EXPECT_EQ(ReasonOf(s), ErrorReason::kOutOfRange);
  EXPECT_EQ(FieldOf(s), "current_action");
}

}  // namespace
}  // namespace utilityd::engine
