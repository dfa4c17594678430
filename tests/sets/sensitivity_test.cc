// Sensitivity against brute force: for random agents of every example set
// and for every scenario the sets carry (the seeds' situations), each
// reported crossing is checked against a dense sweep of 4,096 values per
// direction decided in the test through the engine. A crossing must be a
// real change (the winner at `value` differs and is the one reported, the
// next float back still keeps the winner), and no swept value nearer than
// it may change the winner; where none is reported, no swept value may
// change it either.
#include "utilityd/engine/sensitivity.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/random_agents.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::engine {
namespace {

using ::utilityd::testing::IsOk;

constexpr int kSweep = 4096;

struct Outcome {
  int32_t action, target;
  bool operator==(const Outcome&) const = default;
};

// Decides `input` with one factor (an agent factor, or target factor
// `factor` of target `target`) at each of `values`.
std::vector<Outcome> DecideAt(const CompiledBehaviourSet& set,
                              const AgentInput& input,
                              const FactorSensitivity& s,
                              const std::vector<float>& values) {
  std::vector<std::vector<float>> factors(values.size());
  std::vector<std::vector<TargetInput>> targets(values.size());
  std::vector<AgentInput> inputs(values.size(), input);
  for (size_t k = 0; k < values.size(); ++k) {
    if (!s.target_factor) {
      factors[k].assign(input.factors.begin(), input.factors.end());
      factors[k][s.factor] = values[k];
      inputs[k].factors = factors[k];
    } else {
      const auto& t = input.targets[s.target].factors;
      factors[k].assign(t.begin(), t.end());
      factors[k][s.factor] = values[k];
      targets[k].assign(input.targets.begin(), input.targets.end());
      targets[k][s.target].factors = factors[k];
      inputs[k].targets = targets[k];
    }
  }
  static BatchDecider decider;  // keeps its memory from call to call
  std::vector<BatchDecision> out(values.size());
  decider.Decide(set, inputs, ExplainLevel::kNone, absl::MakeSpan(out));
  std::vector<Outcome> outcomes;
  for (const BatchDecision& d : out) outcomes.push_back({d.action, d.target});
  return outcomes;
}

// Checks one direction of `s` (`up` or down) against the dense sweep.
// Returns whether a crossing was found.
bool CheckDirection(const CompiledBehaviourSet& set, const AgentInput& input,
                    const FactorSensitivity& s, Outcome now, bool up) {
  const Crossing& c = up ? s.above : s.below;
  const float edge = up ? s.range_max : s.range_min;
  const double x0 = s.current;
  std::vector<float> sweep;
  if (up ? edge > x0 : edge < x0) {
    for (int k = 1; k <= kSweep; ++k) {
      sweep.push_back(static_cast<float>(x0 + (edge - x0) * k / kSweep));
    }
  }
  const std::vector<Outcome> swept = DecideAt(set, input, s, sweep);
  size_t first = 0;
  while (first < swept.size() && swept[first] == now) ++first;
  const std::string where = ::testing::PrintToString(up ? "above " : "below ") +
                            " current " + std::to_string(x0);
  if (!c.found) {
    EXPECT_EQ(first, swept.size())
        << where << ": no crossing reported, but the sweep changes at "
        << sweep[first];
    return false;
  }
  EXPECT_TRUE(up ? c.value > x0 : c.value < x0) << where;
  // A real change, and the one reported.
  const float back = std::nextafter(c.value, s.current);
  const std::vector<Outcome> at = DecideAt(set, input, s, {c.value, back});
  EXPECT_EQ(at[0], (Outcome{c.action, c.target})) << where << " " << c.value;
  EXPECT_NE(at[0], now) << where << " " << c.value;
  EXPECT_EQ(at[1], now) << where << ": the float before " << c.value
                        << " changes the winner already";
  // Nothing nearer in the sweep.
  if (first < swept.size()) {
    EXPECT_LE(std::abs(c.value - x0), std::abs(sweep[first] - x0))
        << where << ": the sweep changes at " << sweep[first]
        << ", nearer than the reported " << c.value;
  }
  return true;
}

// Analyses `input` and checks every factor both ways; counts crossings.
int CheckAgent(SensitivityAnalyser& analyser, const CompiledBehaviourSet& set,
               const AgentInput& input) {
  std::vector<FactorSensitivity> result;
  EXPECT_THAT(analyser.Analyse(set, input, &result), IsOk());
  Decision d;
  EXPECT_THAT(Decide(set, input, ExplainLevel::kNone, &d), IsOk());
  const Outcome now{d.action, d.target};
  const size_t targets = d.target >= 0 ? set.target_factor_count() : 0;
  EXPECT_EQ(result.size(), set.factor_count() + targets);
  int found = 0;
  for (const FactorSensitivity& s : result) {
    SCOPED_TRACE(s.target_factor
                     ? "target factor " + set.target_factors()[s.factor].name
                     : "factor " + set.factors()[s.factor].name);
    if (!std::isfinite(s.current)) continue;
    found += CheckDirection(set, input, s, now, false);
    found += CheckDirection(set, input, s, now, true);
  }
  return found;
}

class SensitivityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SensitivityTest, EveryCrossingIsTheNearestChangeOfADenseSweep) {
  auto set = loader::LoadSetFile("examples/behaviour_sets/" + GetParam());
  ASSERT_TRUE(set.ok()) << set.status();
  const CompiledBehaviourSet& compiled = (*set)->compiled;
  SensitivityAnalyser analyser;
  int found = 0;
  std::vector<Agent> agents = RandomAgents(compiled, 40, 7, true);
  for (size_t i = 0; i < agents.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "random agent " << i);
    found += CheckAgent(analyser, compiled, agents[i].input);
  }
  // The scenarios the set carries: the seeds' situations.
  for (const v1::Scenario& scenario : (*set)->definition.scenarios()) {
    SCOPED_TRACE("scenario " + scenario.name());
    const v1::AgentSnapshot snapshot =
        codec::ScenarioSnapshot(compiled.name(), scenario);
    codec::AgentScratch scratch;
    AgentInput input;
    ASSERT_THAT(codec::ResolveAgent(**set, snapshot, &scratch, &input), IsOk());
    found += CheckAgent(analyser, compiled, input);
  }
  // The comparison has something to compare: plenty of crossings.
  EXPECT_GT(found, 40);
}

INSTANTIATE_TEST_SUITE_P(Examples, SensitivityTest,
                         ::testing::Values("arena_mage.yaml",
                                           "eat_hide_wander.yaml",
                                           "villager_needs.yaml"));

// A set whose winner changes and changes back along one factor: `idle`
// scores 0.5 everywhere; `strike` wins only on [0.3, 0.3001), a window no
// even scan of 256 (or sweep of 4,096) values would hit, found only through
// the steps' thresholds; `dodge` wins where a narrow normal bump around 0.6
// rises above 0.5, between two evenly spaced values of a coarse scan.
constexpr absl::string_view kWindows = R"yaml(
name: windows
factors: [{name: threat}]
actions:
  - name: idle
    considerations:
      - {name: flat, factor: threat, curve: {linear: {slope: 0, intercept: 0.5}}}
  - name: strike
    considerations:
      - {name: from, factor: threat, curve: {step: {threshold: 0.3}}}
      - {name: to, factor: threat, curve: {step: {threshold: 0.3001}, invert: true}}
  - name: dodge
    considerations:
      - {name: bump, factor: threat, curve: {normal: {mean: 0.6, stddev: 0.03}}}
scoring: {aggregation: min}
)yaml";

TEST(SensitivityTest, FindsWindowsThatCloseAgain) {
  auto set = loader::LoadSetText(kWindows, "windows");
  ASSERT_THAT(set, IsOk());
  const CompiledBehaviourSet& compiled = (*set)->compiled;
  SensitivityAnalyser analyser;
  std::vector<FactorSensitivity> result;
  auto at = [&](float threat) {
    std::vector<float> factors = {threat};
    AgentInput input{.factors = factors};
    EXPECT_THAT(analyser.Analyse(compiled, input, &result), IsOk());
    EXPECT_EQ(result.size(), 1u);
    return result.empty() ? FactorSensitivity{} : result[0];
  };
  const int strike = compiled.FindAction("strike");
  const int dodge = compiled.FindAction("dodge");

  // From 0.1 up: the step's threshold, exactly.
  FactorSensitivity s = at(0.1f);
  EXPECT_FALSE(s.below.found);
  ASSERT_TRUE(s.above.found);
  EXPECT_EQ(s.above.value, 0.3f);
  EXPECT_EQ(s.above.action, strike);

  // From 0.45 up: where the bump reaches 0.5, mean - stddev*sqrt(2 ln 2),
  // to float resolution; down: the window's upper end, the first float
  // under 0.3001.
  s = at(0.45f);
  ASSERT_TRUE(s.above.found);
  EXPECT_EQ(s.above.action, dodge);
  EXPECT_NEAR(s.above.value, 0.6 - 0.03 * std::sqrt(2 * std::log(2.0)), 1e-6);
  ASSERT_TRUE(s.below.found);
  EXPECT_EQ(s.below.action, strike);
  EXPECT_EQ(s.below.value, std::nextafter(0.3001f, 0.0f));

  // From 0.9 down: the bump's far side; nothing above.
  s = at(0.9f);
  ASSERT_TRUE(s.below.found);
  EXPECT_EQ(s.below.action, dodge);
  EXPECT_NEAR(s.below.value, 0.6 + 0.03 * std::sqrt(2 * std::log(2.0)), 1e-6);
  EXPECT_FALSE(s.above.found);
  EXPECT_EQ(s.range_min, 0.0f);
  EXPECT_EQ(s.range_max, 1.0f);
}

TEST(SensitivityTest, AgreesWithWalkingHealthDownByHand) {
  auto set = loader::LoadSetFile("examples/behaviour_sets/arena_mage.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  const CompiledBehaviourSet& compiled = (*set)->compiled;
  // Start from the first scenario, then walk health down by hand in steps
  // of 0.5 until the winner changes: the analyser's crossing lies within
  // the last step.
  const v1::Scenario& scenario = (*set)->definition.scenarios(0);
  const v1::AgentSnapshot snapshot =
      codec::ScenarioSnapshot(compiled.name(), scenario);
  codec::AgentScratch scratch;
  AgentInput input;
  ASSERT_THAT(codec::ResolveAgent(**set, snapshot, &scratch, &input), IsOk());
  const int health = compiled.FindFactor("health");
  ASSERT_GE(health, 0);
  SensitivityAnalyser analyser;
  std::vector<FactorSensitivity> result;
  ASSERT_THAT(analyser.Analyse(compiled, input, &result), IsOk());
  const FactorSensitivity& s = result[health];
  ASSERT_FALSE(s.target_factor);
  EXPECT_EQ(s.current, input.factors[health]);
  // Health is declared 0..100 and read by a 100 -> 0 consideration: the
  // range searched is the declared one exactly (not -2.2e-06..100).
  EXPECT_EQ(s.range_min, 0.0f);
  EXPECT_EQ(s.range_max, 100.0f);

  Decision d;
  ASSERT_THAT(Decide(compiled, input, ExplainLevel::kNone, &d), IsOk());
  std::vector<float> factors(input.factors.begin(), input.factors.end());
  AgentInput walked = input;
  walked.factors = factors;
  float h = factors[health];
  Decision w;
  while (h > s.range_min) {
    h = std::max(h - 0.5f, s.range_min);
    factors[health] = h;
    ASSERT_THAT(Decide(compiled, walked, ExplainLevel::kNone, &w), IsOk());
    if (w.action != d.action || w.target != d.target) break;
  }
  if (w.action == d.action && w.target == d.target) {
    EXPECT_FALSE(s.below.found);
  } else {
    ASSERT_TRUE(s.below.found);
    EXPECT_LE(s.below.value, h + 0.5f);
    EXPECT_GE(s.below.value, h);
  }
}

TEST(SensitivityTest, RefusesTreesAndInputsThatDoNotFit) {
  auto tree = loader::LoadSetFile("examples/behaviour_sets/guard_tree.yaml");
  ASSERT_TRUE(tree.ok()) << tree.status();
  SensitivityAnalyser analyser;
  std::vector<FactorSensitivity> result;
  std::vector<float> factors((*tree)->compiled.factor_count(), 0.5f);
  AgentInput input{.factors = factors};
  EXPECT_EQ(analyser.Analyse((*tree)->compiled, input, &result).code(),
            absl::StatusCode::kFailedPrecondition);

  auto set = loader::LoadSetFile("examples/behaviour_sets/arena_mage.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  std::vector<float> short_factors(2, 0.5f);
  input.factors = short_factors;
  EXPECT_EQ(analyser.Analyse((*set)->compiled, input, &result).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace utilityd::engine
