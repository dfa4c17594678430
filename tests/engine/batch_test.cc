// The engine's one scoring path decides exactly as the plain reference
// scorer (reference_decide.h) does: the same action, target, score,
// runner-up, switch, fallback and draw, and the same trace — every
// candidate's factors, veto and probability, every consideration's values —
// bit for bit, over random inputs for every example set under every
// aggregation, compensation and strategy, with personalities, cooldowns,
// commitment, missing targets, non-finite inputs, min_score and a fallback.
#include "utilityd/engine/batch.h"

#include <cmath>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/random_agents.h"
#include "tests/engine/reference_decide.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::engine {
namespace {

void ExpectSameSummary(const BatchDecision& d, const BatchDecision& r) {
  EXPECT_EQ(d.action, r.action);
  EXPECT_EQ(d.target, r.target);
  EXPECT_EQ(d.score, r.score);  // bit for bit
  EXPECT_EQ(d.switched, r.switched);
  EXPECT_EQ(d.fallback, r.fallback);
  EXPECT_EQ(d.rank, r.rank);
  EXPECT_EQ(d.runner_up_action, r.runner_up_action);
  EXPECT_EQ(d.runner_up_target, r.runner_up_target);
  EXPECT_EQ(d.runner_up_score, r.runner_up_score);
  EXPECT_EQ(d.draw, r.draw);
}

void ExpectSameTrace(const CompiledBehaviourSet& set, const Decision& d,
                     const Decision& r, bool full) {
  ASSERT_EQ(d.candidates.size(), r.candidates.size());
  for (size_t c = 0; c < r.candidates.size(); ++c) {
    SCOPED_TRACE(::testing::Message() << "candidate " << c);
    const CandidateTrace& x = d.candidates[c];
    const CandidateTrace& y = r.candidates[c];
    EXPECT_EQ(x.action, y.action);
    EXPECT_EQ(x.target, y.target);
    EXPECT_EQ(x.veto, y.veto);
    EXPECT_EQ(x.vetoed_by, y.vetoed_by);
    EXPECT_EQ(x.eligible, y.eligible);
    EXPECT_EQ(x.probability, y.probability);
    EXPECT_EQ(x.score, y.score);
    if (y.veto == VetoReason::kNoTargets) continue;
    EXPECT_EQ(x.aggregate, y.aggregate);
    EXPECT_EQ(x.compensated, y.compensated);
    EXPECT_EQ(x.weight, y.weight);
    EXPECT_EQ(x.cooldown_factor, y.cooldown_factor);
    EXPECT_EQ(x.commitment_factor, y.commitment_factor);
    if (!full) continue;
    const uint32_t n = set.actions()[y.action].consideration_count;
    ASSERT_LE(x.first_trace + n, d.considerations.size());
    for (uint32_t k = 0; k < n; ++k) {
      const ConsiderationTrace& p = d.considerations[x.first_trace + k];
      const ConsiderationTrace& q = r.considerations[y.first_trace + k];
      SCOPED_TRACE(::testing::Message() << "consideration " << k);
      EXPECT_EQ(p.invalid_input, q.invalid_input);
      EXPECT_THAT(p.raw, ::testing::NanSensitiveFloatEq(q.raw));
      EXPECT_EQ(p.normalised, q.normalised);
      EXPECT_EQ(p.curved, q.curved);
      EXPECT_EQ(p.output, q.output);
      EXPECT_EQ(p.contribution, q.contribution);
    }
  }
  EXPECT_EQ(d.considerations.size(), full ? r.considerations.size() : 0u);
}

// Decides 700 random agents (one that does not fit) in one batch, with
// traces at `level`, and each alone through Decide; compares both with the
// reference.
void ExpectSameAsReference(const CompiledBehaviourSet& set, ExplainLevel level,
                           uint32_t seed) {
  std::vector<Agent> agents = RandomAgents(set, 700, seed);
  std::vector<AgentInput> inputs;
  for (const Agent& a : agents) inputs.push_back(a.input);
  inputs[5].factors = inputs[5].factors.subspan(1);  // does not fit
  BatchDecider batch;
  std::vector<BatchDecision> out(inputs.size());
  std::vector<Decision> traces(inputs.size());
  std::vector<absl::Status> errors;
  batch.Decide(set, inputs, level, absl::MakeSpan(out), &errors,
               absl::MakeSpan(traces));
  // The same batch without traces decides the same, and with candidates
  // kept tells each candidate's score and each action's vetoes.
  BatchDecider plain;
  plain.set_keep_candidates(true);
  std::vector<BatchDecision> untraced(inputs.size());
  plain.Decide(set, inputs, ExplainLevel::kNone, absl::MakeSpan(untraced));
  // Inputs the caller has checked (all but the misfit) decide the same
  // without the decider's own check.
  std::vector<AgentInput> fitting = inputs;
  fitting.erase(fitting.begin() + 5);
  BatchDecider checked;
  std::vector<BatchDecision> unchecked(fitting.size());
  checked.DecideChecked(set, fitting, ExplainLevel::kNone,
                        absl::MakeSpan(unchecked));
  const bool full = level == ExplainLevel::kFull;
  Decision ref, one;
  int positive = 0;
  std::vector<uint32_t> vetoes(set.action_count(), 0);
  uint32_t invalid_agents = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "agent " << i);
    const absl::Status s = reference::Decide(set, inputs[i], &ref);
    ASSERT_EQ(errors[i], s);
    ASSERT_EQ(Decide(set, inputs[i], level, &one), s);
    if (!s.ok()) {
      EXPECT_EQ(out[i].action, -1);
      EXPECT_FALSE(plain.ActionOpen(i, 0));
      EXPECT_EQ(plain.CandidateScore(set, i, 0, -1), 0);
      continue;
    }
    std::vector<bool> open(set.action_count(), false);
    for (const CandidateTrace& c : ref.candidates) {
      open[c.action] = open[c.action] || c.veto == VetoReason::kNone;
      EXPECT_EQ(plain.CandidateScore(set, i, c.action, c.target), c.score);
    }
    for (int a = 0; a < set.action_count(); ++a) {
      EXPECT_EQ(plain.ActionOpen(i, a), open[a]) << "action " << a;
    }
    bool invalid = false;
    for (const CandidateTrace& c : ref.candidates) {
      if (c.veto == VetoReason::kNone) continue;
      ++vetoes[c.action];
      invalid |= c.veto == VetoReason::kInvalidInput;
    }
    invalid_agents += invalid;
    ExpectSameSummary(out[i], ref);
    ExpectSameSummary(untraced[i], ref);
    ExpectSameSummary(unchecked[i < 5 ? i : i - 1], ref);
    ExpectSameSummary(one, ref);
    ExpectSameSummary(traces[i], ref);
    ExpectSameTrace(set, traces[i], ref, full);
    ExpectSameTrace(set, one, ref, full);
    if (::testing::Test::HasFailure()) return;  // one agent's story is enough
    positive += out[i].score > 0;
  }
  EXPECT_GT(positive, 100);
  EXPECT_THAT(batch.vetoes_by_action(), ::testing::ElementsAreArray(vetoes));
  EXPECT_EQ(batch.agents_with_invalid_input(), invalid_agents);
  EXPECT_GT(invalid_agents, 0u);
}

// Sets the selection strategy by index: highest, weighted_random, top_k,
// softmax.
void SetStrategy(int strategy, v1::BehaviourSet* def) {
  v1::Selection* sel = def->mutable_selection();
  switch (strategy) {
    case 0:
      sel->mutable_highest();
      break;
    case 1:
      sel->mutable_weighted_random();
      break;
    case 2:
      sel->mutable_top_k()->set_k(3);
      break;
    default:
      sel->mutable_softmax()->set_temperature(0.2);
      break;
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

TEST_P(BatchTest, SameAsReferenceUnderEveryAggregationCompensationStrategy) {
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
      for (int strategy = 0; strategy < 4; ++strategy) {
        v1::BehaviourSet def = base;
        def.mutable_scoring()->set_aggregation(aggregation);
        def.mutable_scoring()->set_compensation(compensation);
        SetStrategy(strategy, &def);
        auto set = loader::LoadSetProto(def, "variant");
        ASSERT_TRUE(set.ok()) << set.status();
        SCOPED_TRACE(::testing::Message()
                     << "aggregation " << aggregation << " compensation "
                     << compensation << " strategy " << strategy);
        ExpectSameAsReference((*set)->compiled, ExplainLevel::kNone, seed++);
        ExpectSameAsReference((*set)->compiled, ExplainLevel::kFull, seed++);
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(BatchTest, SameAsReferenceWithMinScoreAndFallback) {
  for (int strategy = 0; strategy < 4; ++strategy) {
    v1::BehaviourSet def = Load();
    def.mutable_selection()->set_min_score(0.3);
    def.mutable_selection()->set_fallback_action(
        def.actions(def.actions_size() - 1).name());
    SetStrategy(strategy, &def);
    auto set = loader::LoadSetProto(def, "variant");
    ASSERT_TRUE(set.ok()) << set.status();
    SCOPED_TRACE(::testing::Message() << "strategy " << strategy);
    ExpectSameAsReference((*set)->compiled, ExplainLevel::kTop, 99);
    ExpectSameAsReference((*set)->compiled, ExplainLevel::kFull, 100);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, BatchTest,
                         ::testing::Values("arena_mage.yaml",
                                           "villager_needs.yaml",
                                           "eat_hide_wander.yaml"));

}  // namespace
}  // namespace utilityd::engine
