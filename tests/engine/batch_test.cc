// The batch path decides exactly as Decide does, agent by agent: same
// action, target, score, runner-up, switch and fallback, bit for bit, over
// random inputs for every example set under every aggregation and
// compensation, with personalities, cooldowns, commitment, missing targets,
// non-finite inputs, min_score and a fallback action.
#include "utilityd/engine/batch.h"

#include <cmath>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::engine {
namespace {

struct Agent {
  std::vector<float> factors;
  std::vector<std::vector<float>> target_values;
  std::vector<TargetInput> targets;
  std::vector<float> since;
  AgentInput input;
};

std::vector<Agent> RandomAgents(const CompiledBehaviourSet& set, int count,
                                uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  auto draw = [&](const FactorDefinition& f) -> float {
    const double r = unit(rng);
    if (r < 0.01) return NAN;
    if (r < 0.015) return INFINITY;
    if (r < 0.05) return static_cast<float>(f.min);  // exact ends
    const double span = f.max - f.min;
    return static_cast<float>(f.min - 0.1 * span + 1.2 * span * unit(rng));
  };
  std::vector<Agent> agents(count);
  for (Agent& a : agents) {
    for (const auto& f : set.factors()) a.factors.push_back(draw(f));
    a.target_values.resize(rng() % 4);
    for (auto& v : a.target_values)
      for (const auto& f : set.target_factors()) v.push_back(draw(f));
    for (auto& v : a.target_values) a.targets.push_back({v});
    if (rng() % 3 == 0) {
      for (int i = 0; i < set.action_count(); ++i)
        a.since.push_back(rng() % 2 ? kNeverRan
                                    : static_cast<float>(unit(rng) * 20));
    }
    a.input.factors = a.factors;
    a.input.targets = a.targets;
    a.input.seconds_since_action = a.since;
    a.input.current_action =
        static_cast<int>(rng() % (set.action_count() + 1)) - 1;
    const int n_targets = static_cast<int>(a.targets.size());
    a.input.current_target = n_targets > 0
                                 ? static_cast<int>(rng() % (n_targets + 2)) - 2
                                 : kAnyTarget;
    a.input.personality =
        static_cast<int>(rng() % (set.personality_count() + 1)) - 1;
    a.input.seed = rng();
  }
  return agents;
}

void ExpectSameAsDecide(const CompiledBehaviourSet& set, ExplainLevel level,
                        uint32_t seed) {
  std::vector<Agent> agents = RandomAgents(set, 700, seed);
  std::vector<AgentInput> inputs;
  for (const Agent& a : agents) inputs.push_back(a.input);
  inputs[5].factors = inputs[5].factors.subspan(1);  // does not fit
  BatchDecider batch;
  std::vector<BatchDecision> out(inputs.size());
  std::vector<absl::Status> errors;
  batch.Decide(set, inputs, level, absl::MakeSpan(out), &errors);
  Decision one;
  int positive = 0;
  std::vector<uint32_t> vetoes(set.action_count(), 0);
  uint32_t invalid_agents = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const absl::Status s = Decide(set, inputs[i], level, &one);
    ASSERT_EQ(errors[i], s) << "agent " << i;
    if (!s.ok()) {
      EXPECT_EQ(out[i].action, -1);
      continue;
    }
    bool invalid = false;
    for (const CandidateTrace& c : one.candidates) {
      if (c.veto == VetoReason::kNone) continue;
      ++vetoes[c.action];
      invalid |= c.veto == VetoReason::kInvalidInput;
    }
    invalid_agents += invalid;
    const BatchDecision& d = out[i];
    ASSERT_EQ(d.action, one.action) << "agent " << i;
    ASSERT_EQ(d.target, one.target) << "agent " << i;
    ASSERT_EQ(d.score, one.score) << "agent " << i;  // bit for bit
    ASSERT_EQ(d.switched, one.switched) << "agent " << i;
    ASSERT_EQ(d.fallback, one.fallback) << "agent " << i;
    ASSERT_EQ(d.rank, one.rank) << "agent " << i;
    ASSERT_EQ(d.runner_up_action, one.runner_up_action) << "agent " << i;
    ASSERT_EQ(d.runner_up_target, one.runner_up_target) << "agent " << i;
    ASSERT_EQ(d.runner_up_score, one.runner_up_score) << "agent " << i;
    positive += d.score > 0;
  }
  EXPECT_GT(positive, 100);
  // The veto counts the metrics need, as Decide's traces give them. (Full
  // explanations keep scoring after a veto, so their traces differ.)
  if (level != ExplainLevel::kFull) {
    EXPECT_THAT(batch.vetoes_by_action(), ::testing::ElementsAreArray(vetoes));
    EXPECT_EQ(batch.agents_with_invalid_input(), invalid_agents);
    EXPECT_GT(invalid_agents, 0u);
  }
}

class BatchTest : public ::testing::TestWithParam<std::string> {
 protected:
  v1::BehaviourSet Load() {
    auto set = loader::LoadSetFile("examples/behaviour_sets/" + GetParam());
    EXPECT_TRUE(set.ok()) << set.status();
    return (*set)->definition;
  }
};

TEST_P(BatchTest, SameAsDecideUnderEveryAggregationAndCompensation) {
  const v1::BehaviourSet base = Load();
  uint32_t seed = 1;
  for (auto aggregation : {v1::AGGREGATION_PRODUCT, v1::AGGREGATION_MIN,
                           v1::AGGREGATION_WEIGHTED_SUM}) {
    for (auto compensation :
         {v1::COMPENSATION_NONE, v1::COMPENSATION_PER_CONSIDERATION,
          v1::COMPENSATION_ON_PRODUCT, v1::COMPENSATION_GEOMETRIC_MEAN}) {
      // Compensation applies to the product only (validation says so).
      if (aggregation != v1::AGGREGATION_PRODUCT &&
          compensation != v1::COMPENSATION_NONE) {
        continue;
      }
      v1::BehaviourSet def = base;
      def.mutable_scoring()->set_aggregation(aggregation);
      def.mutable_scoring()->set_compensation(compensation);
      auto set = loader::LoadSetProto(def, "variant");
      ASSERT_TRUE(set.ok()) << set.status();
      SCOPED_TRACE(::testing::Message() << "aggregation " << aggregation
                                        << " compensation " << compensation);
      ExpectSameAsDecide((*set)->compiled, ExplainLevel::kNone, seed++);
      ExpectSameAsDecide((*set)->compiled, ExplainLevel::kTop, seed++);
    }
  }
}

TEST_P(BatchTest, SameAsDecideWithMinScoreAndFallback) {
  v1::BehaviourSet def = Load();
  def.mutable_selection()->set_min_score(0.3);
  def.mutable_selection()->set_fallback_action(
      def.actions(def.actions_size() - 1).name());
  auto set = loader::LoadSetProto(def, "variant");
  ASSERT_TRUE(set.ok()) << set.status();
  ExpectSameAsDecide((*set)->compiled, ExplainLevel::kNone, 99);
}

TEST_P(BatchTest, RandomStrategiesAndFullExplainGoAgentByAgent) {
  v1::BehaviourSet def = Load();
  def.mutable_selection()->mutable_softmax()->set_temperature(0.2);
  auto set = loader::LoadSetProto(def, "variant");
  ASSERT_TRUE(set.ok()) << set.status();
  ExpectSameAsDecide((*set)->compiled, ExplainLevel::kNone, 7);
  ExpectSameAsDecide((*set)->compiled, ExplainLevel::kFull, 8);
}

INSTANTIATE_TEST_SUITE_P(Examples, BatchTest,
                         ::testing::Values("arena_mage.yaml",
                                           "villager_needs.yaml",
                                           "eat_hide_wander.yaml"));

}  // namespace
}  // namespace utilityd::engine
