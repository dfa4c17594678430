// The engine's one scoring path decides exactly as the plain reference
// scorer (reference_decide.h) does: the same action, target, score,
// runner-up, switch, fallback and draw, and the same trace — every
// candidate's factors, veto and probability, every consideration's values —
// bit for bit, over random inputs for every example set under every
// aggregation, compensation and strategy, with personalities, cooldowns,
// commitment, missing targets, non-finite inputs, min_score and a fallback.
#include "utilityd/engine/batch.h"

#include <cmath>
#include <cstring>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/random_agents.h"
#include "tests/engine/reference_decide.h"
#include "utilityd/engine/curve.h"
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

// Which random agents: any (non-finite inputs, personalities), or only
// those whose considerations take the fused pass (consider_column.h) below
// explain full: finite inputs, no personality.
enum class Agents { kAny, kFused };

// Decides 700 random agents (one that does not fit) in one batch, with
// traces at `level`, and each alone through Decide; compares both with the
// reference.
void ExpectSameAsReference(const CompiledBehaviourSet& set, ExplainLevel level,
                           uint32_t seed, Agents kind = Agents::kAny,
                           int targets_each = -1) {
  std::vector<Agent> agents = RandomAgents(
      set, 700, seed, /*finite_only=*/kind == Agents::kFused, targets_each);
  std::vector<AgentInput> inputs;
  for (Agent& a : agents) {
    if (kind == Agents::kFused) a.input.personality = -1;
    inputs.push_back(a.input);
  }
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
  EXPECT_EQ(invalid_agents > 0, kind == Agents::kAny);
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

// Adds a gate on the set's first flag factor to every other action;
// false when the set has no flag.
bool AddGates(v1::BehaviourSet* def) {
  for (const v1::Factor& f : def->factors()) {
    if (f.kind() != v1::FACTOR_KIND_FLAG) continue;
    for (int a = 0; a < def->actions_size(); a += 2) {
      v1::Consideration* c = def->mutable_actions(a)->add_considerations();
      c->set_name("gate_" + f.name());
      c->set_factor(f.name());
      c->set_gate(true);
      c->mutable_curve()->mutable_step();
    }
    return true;
  }
  return false;
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
        ExpectSameAsReference((*set)->compiled, ExplainLevel::kTop, seed++,
                              Agents::kFused);
        if (HasFailure()) return;
        // The same with a gate on every other action, where the set has a
        // flag and its aggregation vetoes: not counted in the compensation.
        if (strategy == 0 && aggregation != v1::AGGREGATION_WEIGHTED_SUM &&
            AddGates(&def)) {
          auto gated = loader::LoadSetProto(def, "gated");
          ASSERT_TRUE(gated.ok()) << gated.status();
          ExpectSameAsReference((*gated)->compiled, ExplainLevel::kNone,
                                seed++);
          ExpectSameAsReference((*gated)->compiled, ExplainLevel::kFull,
                                seed++);
        }
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

uint32_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Factor-major columns (an ECS chunk's layout) decide as the same factors
// in each input, bit for bit: a whole block read in place, and a block
// whose rows are only partly inputs (gathered), with inputs that fail.
TEST_P(BatchTest, FactorMajorColumnsDecideAsRowsDo) {
  auto set = loader::LoadSetProto(Load(), "variant");
  ASSERT_TRUE(set.ok()) << set.status();
  const CompiledBehaviourSet& c = (*set)->compiled;
  const int nf = c.factor_count();
  std::vector<Agent> agents = RandomAgents(c, 300, 41);
  const size_t rows = agents.size();
  std::vector<AgentInput> by_row, by_column;
  std::vector<float> columns(rows * nf);
  for (size_t r = 0; r < rows; ++r) {
    by_row.push_back(agents[r].input);
    AgentInput without = agents[r].input;
    without.factors = {};
    by_column.push_back(without);
    for (int f = 0; f < nf; ++f) columns[f * rows + r] = agents[r].factors[f];
  }
  auto expect_same = [&](absl::Span<const AgentInput> rows_in,
                         absl::Span<const AgentInput> columns_in,
                         absl::Span<const int> row_of) {
    BatchDecider a, b;
    std::vector<BatchDecision> want(rows_in.size()), got(rows_in.size());
    std::vector<absl::Status> want_errors, got_errors;
    a.Decide(c, rows_in, ExplainLevel::kNone, absl::MakeSpan(want),
             &want_errors);
    b.DecideFactorMajor(
        c, columns_in, {.data = columns.data(), .rows = rows, .row_of = row_of},
        absl::MakeSpan(got), &got_errors);
    int decided = 0;
    for (size_t i = 0; i < rows_in.size(); ++i) {
      SCOPED_TRACE(::testing::Message() << "input " << i);
      EXPECT_EQ(got_errors[i], want_errors[i]);
      EXPECT_EQ(got[i].action, want[i].action);
      EXPECT_EQ(got[i].target, want[i].target);
      EXPECT_EQ(Bits(got[i].score), Bits(want[i].score));
      EXPECT_EQ(got[i].switched, want[i].switched);
      decided += want[i].action >= 0;
    }
    EXPECT_THAT(b.vetoes_by_action(),
                ::testing::ElementsAreArray(a.vetoes_by_action()));
    EXPECT_EQ(b.agents_with_invalid_input(), a.agents_with_invalid_input());
    EXPECT_GT(decided, 0);
  };
  {
    SCOPED_TRACE("every row an input: read in place");
    expect_same(by_row, by_column, {});
  }
  {
    SCOPED_TRACE("every row an input, one fails");
    std::vector<AgentInput> bad_rows = by_row, bad_columns = by_column;
    bad_rows[7].current_action = bad_columns[7].current_action = 99;
    expect_same(bad_rows, bad_columns, {});
  }
  {
    SCOPED_TRACE("every third row, in order");
    std::vector<AgentInput> some_rows, some_columns;
    std::vector<int> row_of;
    for (size_t r = 0; r < rows; r += 3) {
      some_rows.push_back(by_row[r]);
      some_columns.push_back(by_column[r]);
      row_of.push_back(static_cast<int>(r));
    }
    expect_same(some_rows, some_columns, row_of);
  }
}

// Every curve kind, plain and inverted, with output ranges and weights:
// the fused pass (finite inputs, no personality, below explain full) and
// the separate passes (explain full) score as the reference does, bit for
// bit, under every aggregation and compensation and on every SIMD target.
constexpr char kEveryCurve[] = R"yaml(
name: every_curve
factors:
  - {name: a, min: 0, max: 10}
  - {name: b, min: -5, max: 5}
  - {name: c, min: 0, max: 1}
target_factors:
  - {name: d, min: 0, max: 30}
actions:
  - name: arithmetic
    considerations:
      - {name: linear, factor: a, curve: {linear: {slope: -1.5, intercept: 1.2}}}
      - {name: square, factor: b, curve: {polynomial: {exponent: 2}, invert: true}, output: {min: 0.2}}
      - {name: cube, factor: c, curve: {polynomial: {exponent: 3}}, weight: 0.6}
      - {name: root, factor: a, curve: {polynomial: {exponent: 0.5}}}
      - {name: identity, factor: b, curve: {polynomial: {exponent: 1}, invert: true}, output: {min: 0.1, max: 0.9}}
  - name: shaped
    considerations:
      - {name: inverse_quadratic, factor: c, curve: {inverse_quadratic: {}}}
      - {name: smoothstep, factor: a, curve: {smoothstep: {}, invert: true}}
      - {name: step, factor: b, curve: {step: {threshold: 0}}, output: {min: 0.05}}
      - {name: step_inverted, factor: c, curve: {step: {threshold: 1}, invert: true}, weight: 0.5}
      - {name: step_middle, factor: a, curve: {step: {threshold: 0.3}}}
  - name: own_maths
    considerations:
      - {name: power, factor: a, curve: {polynomial: {exponent: 1.7}}}
      - {name: exponential, factor: b, curve: {exponential: {k: 3}, invert: true}}
      - {name: logistic, factor: c, curve: {logistic: {steepness: 9, midpoint: 0.4, rescale: true}}}
      - {name: logit, factor: a, curve: {logit: {steepness: 4, midpoint: 0.5}}, weight: 0.7}
  - name: waves
    considerations:
      - {name: normal, factor: b, curve: {normal: {mean: 0.3, stddev: 0.2}}}
      - {name: sine, factor: c, curve: {sine: {frequency: 1.5, phase: 0.25}}, output: {min: 0.3}}
      - {name: falling, factor: a, curve: {exponential: {k: -4}}}
      - {name: points, factor: b, curve: {piecewise_linear: {points: [{x: 0, y: 0.2}, {x: 0.5, y: 1}, {x: 1, y: 0}]}}}
  - name: chase
    per_target: true
    considerations:
      - {name: near, factor: d, per_target: true, curve: {logistic: {steepness: 8, midpoint: 0.45}, invert: true}}
      - {name: strong, factor: a, curve: {smoothstep: {}}}
      - {name: steady, factor: c, curve: {linear: {slope: 0.8, intercept: 0.1}}, output: {min: 0.25, max: 0.75}}
      - {name: brave, factor: b, curve: {normal: {mean: 0.6, stddev: 0.3}}, weight: 0.8}
  - name: one
    considerations:
      - {name: only, factor: c, curve: {polynomial: {exponent: 0.3}}}
)yaml";

TEST(FusedPassTest, EveryCurveKindSameAsReferenceOnEveryTarget) {
  auto loaded = loader::LoadSetText(kEveryCurve, "every_curve.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  uint32_t seed = 500;
  for (const std::string& target : AvailableSimdTargets()) {
    ASSERT_TRUE(UseSimdTarget(target).ok());
    for (auto [aggregation, compensation] :
         {std::pair{v1::AGGREGATION_PRODUCT, v1::COMPENSATION_NONE},
          {v1::AGGREGATION_PRODUCT, v1::COMPENSATION_PER_CONSIDERATION},
          {v1::AGGREGATION_PRODUCT, v1::COMPENSATION_GEOMETRIC_MEAN},
          {v1::AGGREGATION_MIN, v1::COMPENSATION_NONE},
          {v1::AGGREGATION_WEIGHTED_SUM, v1::COMPENSATION_NONE}}) {
      v1::BehaviourSet def = (*loaded)->definition;
      def.mutable_scoring()->set_aggregation(aggregation);
      def.mutable_scoring()->set_compensation(compensation);
      auto set = loader::LoadSetProto(def, "variant");
      ASSERT_TRUE(set.ok()) << set.status();
      SCOPED_TRACE(::testing::Message()
                   << target << " aggregation " << aggregation
                   << " compensation " << compensation);
      ExpectSameAsReference((*set)->compiled, ExplainLevel::kNone, seed++,
                            Agents::kFused);
      ExpectSameAsReference((*set)->compiled, ExplainLevel::kTop, seed++,
                            Agents::kFused);
      ExpectSameAsReference((*set)->compiled, ExplainLevel::kFull, seed++,
                            Agents::kFused);
      if (HasFailure()) break;
    }
    if (HasFailure()) break;
  }
  ASSERT_TRUE(UseSimdTarget("best").ok());
}

// Every agent with as many targets as every other: a per-target action's
// agent-wide considerations reach the agents' pairs by a permutation of
// the agents' outputs (1, 2, 4 or 8 targets, which divide every target's
// vector width) or by a gather (3), the same bits either way.
TEST(FusedPassTest, SameTargetCountsSameAsReferenceOnEveryTarget) {
  auto loaded = loader::LoadSetText(kEveryCurve, "every_curve.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  uint32_t seed = 900;
  for (const std::string& target : AvailableSimdTargets()) {
    ASSERT_TRUE(UseSimdTarget(target).ok());
    for (int each : {1, 2, 3, 4, 8}) {
      SCOPED_TRACE(::testing::Message()
                   << target << ", " << each << " targets each");
      ExpectSameAsReference((*loaded)->compiled, ExplainLevel::kNone, seed++,
                            Agents::kFused, each);
      if (HasFailure()) break;
    }
    if (HasFailure()) break;
  }
  ASSERT_TRUE(UseSimdTarget("best").ok());
}

INSTANTIATE_TEST_SUITE_P(Examples, BatchTest,
                         ::testing::Values("arena_mage.yaml",
                                           "villager_needs.yaml",
                                           "eat_hide_wander.yaml"));

}  // namespace
}  // namespace utilityd::engine
