// The benchmark's straightforward scorer decides as the engine does over
// random snapshots of every example set, so the engine benchmark compares
// like with like: the same action and target, and the same score within
// 1e-5. (Not bit for bit: the baseline calls the C library's exp, log, pow
// and sin, the engine computes them with its own maths, curve_math.h; they
// differ in the last bits, so a near tie may go either way.)
#include <algorithm>
#include <cmath>
#include <random>

#include "bench/baseline_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "utilityd/engine/decide.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd {
namespace {

class BaselineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BaselineTest, DecidesLikeTheEngine) {
  auto loaded = loader::LoadSetFile("examples/behaviour_sets/" + GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const engine::CompiledBehaviourSet& set = (*loaded)->compiled;
  const engine::SetDefinition def = loader::ToDefinition((*loaded)->definition);
  if (def.selection.strategy != engine::Strategy::kHighest) GTEST_SKIP();
  const baseline::Reasoner reasoner(def);

  std::mt19937 rng(7);
  engine::Decision decision;
  int compared = 0, nonzero = 0, near_ties = 0;
  for (int i = 0; i < 20000; ++i) {
    // Values a little beyond each range, so clamping is exercised too.
    auto draw = [&](const engine::FactorDefinition& f) {
      const double span = f.max - f.min;
      return static_cast<float>(std::uniform_real_distribution<double>(
          f.min - 0.1 * span, f.max + 0.1 * span)(rng));
    };
    std::vector<float> factors;
    baseline::Snapshot snap;
    for (const auto& f : set.factors()) {
      factors.push_back(draw(f));
      snap.factors[f.name] = factors.back();
    }
    const int n_targets = static_cast<int>(rng() % 3);
    std::vector<std::vector<float>> target_values(n_targets);
    std::vector<engine::TargetInput> targets;
    for (int t = 0; t < n_targets; ++t) {
      baseline::Target target{.id = "t" + std::to_string(t)};
      for (const auto& f : set.target_factors()) {
        target_values[t].push_back(draw(f));
        target.factors[f.name] = target_values[t].back();
      }
      snap.targets.push_back(std::move(target));
    }
    for (auto& v : target_values) targets.push_back({v});
    const int current = static_cast<int>(rng() % (set.action_count() + 1)) - 1;
    if (current >= 0) snap.current_action = set.actions()[current].name;

    const engine::AgentInput input{
        .factors = factors, .current_action = current, .targets = targets};
    ASSERT_TRUE(
        engine::Decide(set, input, engine::ExplainLevel::kNone, &decision)
            .ok());
    const baseline::Choice choice = reasoner.Decide(snap);
    const std::string action =
        decision.action >= 0 ? set.actions()[decision.action].name : "";
    const double tolerance = 1e-5 * std::max(1.0f, std::abs(decision.score));
    // (An exact tie is broken by order, the same way in both.)
    const float margin = decision.score - decision.runner_up_score;
    const bool near_tie =
        decision.runner_up_action >= 0 && margin > 0 && margin <= tolerance;
    if (near_tie) {
      ++near_ties;
    } else {
      ASSERT_EQ(choice.action, action) << "snapshot " << i;
      if (decision.target >= 0) {
        ASSERT_EQ(choice.target, "t" + std::to_string(decision.target));
      }
    }
    if (!decision.fallback) {
      ASSERT_NEAR(choice.score, decision.score, tolerance) << "snapshot " << i;
      nonzero += decision.score > 0;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 20000);
  EXPECT_GT(nonzero, 1000);
  EXPECT_LT(near_ties, 200) << "near ties should be rare";
}

INSTANTIATE_TEST_SUITE_P(Examples, BaselineTest,
                         ::testing::Values("arena_mage.yaml",
                                           "villager_needs.yaml",
                                           "eat_hide_wander.yaml"));

}  // namespace
}  // namespace utilityd
