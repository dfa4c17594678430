// BatchDecider::DecideColumns: a block's agents as columns (no AgentInput
// per row) decide bit for bit as Decide decides the same agents as inputs,
// and alike on every SIMD target; rows out of range get Decide's errors
// without costing the others theirs, and a column of the wrong shape
// refuses the call naming it.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/random_agents.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/curve.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::engine {
namespace {

using ::testing::HasSubstr;

uint32_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Random agents laid out as a block's columns, and the same agents as
// inputs whose spans point into those columns. The targets' block starts
// with `lead` targets no row names (NaN, so that reading one shows).
struct Block {
  std::vector<Agent> agents;
  std::vector<float> factors, by_row, target_factors, clocks;
  std::vector<int32_t> action, target, personality;
  std::vector<uint64_t> seeds;
  std::vector<uint32_t> offsets;
  std::vector<std::vector<TargetInput>> targets;
  std::vector<AgentInput> inputs;

  Block(const CompiledBehaviourSet& set, int rows, uint32_t seed, int lead,
        bool finite_only = false) {
    agents = RandomAgents(set, rows, seed, finite_only);
    const int nf = set.factor_count(), ntf = set.target_factor_count();
    const int na = set.action_count();
    factors.resize(static_cast<size_t>(rows) * nf);
    target_factors.assign(static_cast<size_t>(lead) * ntf, NAN);
    offsets.push_back(lead);
    for (int r = 0; r < rows; ++r) {
      const Agent& a = agents[r];
      for (int f = 0; f < nf; ++f) factors[f * rows + r] = a.factors[f];
      by_row.insert(by_row.end(), a.factors.begin(), a.factors.end());
      for (const auto& t : a.target_values) {
        target_factors.insert(target_factors.end(), t.begin(), t.end());
      }
      offsets.push_back(offsets.back() + a.target_values.size());
      for (int k = 0; k < na; ++k) {
        clocks.push_back(a.since.empty() ? kNeverRan : a.since[k]);
      }
      action.push_back(a.input.current_action);
      target.push_back(a.input.current_target);
      personality.push_back(a.input.personality);
      seeds.push_back(a.input.seed);
    }
    targets.resize(rows);
    for (int r = 0; r < rows; ++r) {
      for (uint32_t g = offsets[r]; g < offsets[r + 1]; ++g) {
        targets[r].push_back(
            {absl::MakeConstSpan(target_factors.data() + g * ntf, ntf)});
      }
      AgentInput in = agents[r].input;
      in.targets = targets[r];
      in.seconds_since_action = absl::MakeConstSpan(clocks.data() + r * na, na);
      inputs.push_back(in);
    }
  }

  // Factor-major, or with `factors_by_row` row by row.
  AgentColumns Columns(bool factors_by_row = false) const {
    return {.rows = inputs.size(),
            .factors = factors_by_row ? by_row.data() : factors.data(),
            .factors_by_row = factors_by_row,
            .current_action = action,
            .current_target = target,
            .personality = personality,
            .seeds = seeds,
            .seconds_since_action = clocks,
            .target_offsets = offsets,
            .target_factors = target_factors};
  }
};

void ExpectSame(const CompiledBehaviourSet& set,
                absl::Span<const AgentInput> inputs,
                const AgentColumns& columns) {
  BatchDecider a, b;
  a.set_keep_candidates(true);
  b.set_keep_candidates(true);
  const size_t rows = inputs.size();
  std::vector<BatchDecision> want(rows), got(rows);
  std::vector<absl::Status> want_errors, got_errors;
  a.Decide(set, inputs, ExplainLevel::kNone, absl::MakeSpan(want),
           &want_errors);
  ASSERT_TRUE(
      b.DecideColumns(set, columns, absl::MakeSpan(got), &got_errors).ok());
  ASSERT_EQ(got_errors.size(), rows);
  int decided = 0;
  for (size_t r = 0; r < rows; ++r) {
    SCOPED_TRACE(::testing::Message() << "row " << r);
    EXPECT_EQ(got_errors[r], want_errors[r]);
    const BatchDecision &g = got[r], &w = want[r];
    EXPECT_EQ(g.action, w.action);
    EXPECT_EQ(g.target, w.target);
    EXPECT_EQ(Bits(g.score), Bits(w.score));
    EXPECT_EQ(g.rank, w.rank);
    EXPECT_EQ(g.fallback, w.fallback);
    EXPECT_EQ(g.switched, w.switched);
    EXPECT_EQ(g.runner_up_action, w.runner_up_action);
    EXPECT_EQ(g.runner_up_target, w.runner_up_target);
    EXPECT_EQ(Bits(g.runner_up_score), Bits(w.runner_up_score));
    EXPECT_EQ(g.draw, w.draw);
    for (int k = 0; k < set.action_count(); ++k) {
      EXPECT_EQ(b.ActionOpen(r, k), a.ActionOpen(r, k));
      EXPECT_EQ(Bits(b.CandidateScore(set, r, k,
                                      set.actions()[k].per_target ? 0 : -1)),
                Bits(a.CandidateScore(set, r, k,
                                      set.actions()[k].per_target ? 0 : -1)));
    }
    decided += w.action >= 0;
  }
  EXPECT_THAT(b.vetoes_by_action(),
              ::testing::ElementsAreArray(a.vetoes_by_action()));
  EXPECT_EQ(b.agents_with_invalid_input(), a.agents_with_invalid_input());
  EXPECT_GT(decided, 0);
}

class ColumnsTest : public ::testing::TestWithParam<const char*> {
 protected:
  // The example set, selecting by `strategy` (0 highest, 1 softmax, 2
  // weighted random).
  std::shared_ptr<const loader::LoadedSet> Load(int strategy) {
    auto set = loader::LoadSetFile(std::string("examples/behaviour_sets/") +
                                   GetParam());
    EXPECT_TRUE(set.ok()) << set.status();
    v1::BehaviourSet def = (*set)->definition;
    if (strategy == 1) {
      def.mutable_selection()->mutable_softmax()->set_temperature(0.2);
    } else if (strategy == 2) {
      def.mutable_selection()->mutable_weighted_random();
    }
    auto variant = loader::LoadSetProto(def, "variant");
    EXPECT_TRUE(variant.ok()) << variant.status();
    return *variant;
  }
};

TEST_P(ColumnsTest, DecideAsInputsDo) {
  for (int strategy = 0; strategy < 3; ++strategy) {
    SCOPED_TRACE(::testing::Message() << "strategy " << strategy);
    const auto loaded = Load(strategy);
    const CompiledBehaviourSet& set = loaded->compiled;
    for (int lead : {0, 3}) {
      SCOPED_TRACE(::testing::Message() << "lead " << lead);
      const Block block(set, 300, 17 + strategy, lead);
      {
        SCOPED_TRACE("every row fits: admitted as a whole");
        ExpectSame(set, block.inputs, block.Columns());
        SCOPED_TRACE("factors row by row");
        ExpectSame(set, block.inputs, block.Columns(/*factors_by_row=*/true));
      }
      {
        SCOPED_TRACE("fewer rows than a selection vector");
        Block small(set, 10, 5 + strategy, lead);
        ExpectSame(set, small.inputs, small.Columns());
      }
    }
  }
}

// A replay on another machine decides the same: every SIMD target gives the
// same bits, on the columns as on the inputs (the highest strategy takes
// the vectorised selection; 300 rows leave a partial last vector).
TEST_P(ColumnsTest, SameBitsOnEveryTarget) {
  const auto loaded = Load(/*strategy=*/0);
  const CompiledBehaviourSet& set = loaded->compiled;
  Block block(set, 300, 31, /*lead=*/1, /*finite_only=*/true);
  // Finite factors and no personalities: one weight for all takes the
  // fused consideration pass, whose SIMD code is what differs by target.
  for (AgentInput& in : block.inputs) in.personality = -1;
  block.personality.assign(block.personality.size(), -1);
  std::vector<BatchDecision> first;
  std::string first_target;
  for (const std::string& target : AvailableSimdTargets()) {
    SCOPED_TRACE(target);
    ASSERT_TRUE(UseSimdTarget(target).ok());
    ExpectSame(set, block.inputs, block.Columns());
    BatchDecider decider;
    std::vector<BatchDecision> out(300);
    ASSERT_TRUE(
        decider.DecideColumns(set, block.Columns(), absl::MakeSpan(out)).ok());
    if (first.empty()) {
      first = out;
      first_target = target;
      continue;
    }
    for (size_t r = 0; r < out.size(); ++r) {
      SCOPED_TRACE(::testing::Message()
                   << "row " << r << " against " << first_target);
      EXPECT_EQ(out[r].action, first[r].action);
      EXPECT_EQ(out[r].target, first[r].target);
      EXPECT_EQ(Bits(out[r].score), Bits(first[r].score));
      EXPECT_EQ(out[r].switched, first[r].switched);
      EXPECT_EQ(out[r].runner_up_action, first[r].runner_up_action);
      EXPECT_EQ(out[r].runner_up_target, first[r].runner_up_target);
      EXPECT_EQ(Bits(out[r].runner_up_score), Bits(first[r].runner_up_score));
    }
  }
  ASSERT_TRUE(UseSimdTarget("best").ok());
  EXPECT_GT(AvailableSimdTargets().size(), 1u);
}

TEST_P(ColumnsTest, RowsOutOfRangeFailAlone) {
  const auto loaded = Load(/*strategy=*/1);
  const CompiledBehaviourSet& set = loaded->compiled;
  Block block(set, 300, 23, /*lead=*/2);
  auto both = [&](size_t r, auto edit) {
    edit(block.inputs[r]);
    block.action[r] = block.inputs[r].current_action;
    block.personality[r] = block.inputs[r].personality;
    block.target[r] = block.inputs[r].current_target;
  };
  both(7, [&](AgentInput& in) { in.current_action = set.action_count(); });
  both(8, [](AgentInput& in) {
    in.current_action = std::numeric_limits<int>::min();
  });
  both(11, [&](AgentInput& in) { in.personality = set.personality_count(); });
  both(12, [](AgentInput& in) { in.personality = -2; });
  both(13, [](AgentInput& in) {
    in.current_target = static_cast<int>(in.targets.size());
  });
  both(14, [](AgentInput& in) { in.current_target = -3; });
  ExpectSame(set, block.inputs, block.Columns());
  ExpectSame(set, block.inputs, block.Columns(/*factors_by_row=*/true));
  std::vector<BatchDecision> out(300);
  std::vector<absl::Status> errors;
  BatchDecider decider;
  ASSERT_TRUE(
      decider.DecideColumns(set, block.Columns(), absl::MakeSpan(out), &errors)
          .ok());
  for (size_t r : {7, 8, 11, 12, 13, 14}) {
    EXPECT_EQ(errors[r].code(), absl::StatusCode::kInvalidArgument) << r;
    EXPECT_EQ(out[r].action, -1) << r;
  }
  EXPECT_THAT(errors[7].message(), HasSubstr("current_action"));
  EXPECT_THAT(errors[11].message(), HasSubstr("personality"));
  EXPECT_THAT(errors[13].message(), HasSubstr("current_target"));
}

TEST_P(ColumnsTest, EmptyColumnsAreTheirDefaults) {
  const auto loaded = Load(/*strategy=*/2);
  const CompiledBehaviourSet& set = loaded->compiled;
  Block block(set, 200, 29, /*lead=*/0);
  for (AgentInput& in : block.inputs) {
    in.current_action = -1;
    in.current_target = kAnyTarget;
    in.personality = -1;
    in.seed = 0;
    in.seconds_since_action = {};
  }
  AgentColumns columns = block.Columns();
  columns.current_action = columns.current_target = columns.personality = {};
  columns.seeds = {};
  columns.seconds_since_action = {};
  ExpectSame(set, block.inputs, columns);
  for (AgentInput& in : block.inputs) in.targets = {};
  columns.target_offsets = {};
  columns.target_factors = {};
  ExpectSame(set, block.inputs, columns);
}

INSTANTIATE_TEST_SUITE_P(Examples, ColumnsTest,
                         ::testing::Values("arena_mage.yaml",
                                           "villager_needs.yaml",
                                           "eat_hide_wander.yaml"));

// Each column of the wrong shape refuses the call, naming it; nothing is
// decided.
TEST(ColumnsShapeTest, RefusesAColumnOfTheWrongShape) {
  auto loaded = loader::LoadSetFile("examples/behaviour_sets/arena_mage.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const CompiledBehaviourSet& set = (*loaded)->compiled;
  const Block block(set, 20, 31, /*lead=*/0);
  const std::vector<int32_t> short_column(19, -1);
  const std::vector<float> short_clocks(3);
  std::vector<uint32_t> falling = block.offsets;
  falling[5] = falling[4] + 100;
  auto expect_refused = [&](const AgentColumns& columns,
                            absl::string_view field) {
    SCOPED_TRACE(field);
    BatchDecider decider;
    std::vector<BatchDecision> out(20);
    out[0].action = 99;  // untouched
    std::vector<absl::Status> errors;
    const absl::Status s =
        decider.DecideColumns(set, columns, absl::MakeSpan(out), &errors);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(field));
    EXPECT_EQ(out[0].action, 99);
    EXPECT_EQ(errors.size(), 20u);
  };
  AgentColumns c = block.Columns();
  c.current_action = short_column;
  expect_refused(c, "current_action");
  c = block.Columns();
  c.personality = short_column;
  expect_refused(c, "personality");
  c = block.Columns();
  c.seconds_since_action = short_clocks;
  expect_refused(c, "seconds_since_action");
  c = block.Columns();
  c.target_offsets = absl::MakeConstSpan(block.offsets).subspan(1);
  expect_refused(c, "target_offsets");
  c = block.Columns();
  c.target_offsets = falling;
  expect_refused(c, "target_offsets[6]");
  c = block.Columns();
  c.target_factors = c.target_factors.subspan(1);
  expect_refused(c, "target_factors");
  c = block.Columns();
  c.factors = nullptr;
  expect_refused(c, "factors");
}

}  // namespace
}  // namespace utilityd::engine
