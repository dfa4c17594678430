// The block form (DecideRequest.blocks): the same decisions as snapshots,
// bit for bit, in both factor layouts; every bad shape its error, and the
// other rows decided.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "utilityd/codec/batch.h"
#include "utilityd/loader/proto_reader.h"

namespace utilityd::codec {
namespace {

using loader::Catalog;
using loader::LoadedSet;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::utilityd::testing::IsOk;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Random rows of `set`: factors over and beyond their ranges with a few
// NaN and infinities, current actions, cooldown clocks (some "never"),
// seeds and personalities.
struct Rows {
  std::vector<uint64_t> ids;
  std::vector<float> factors;  // row-major
  std::vector<int> current;
  std::vector<float> seconds;  // row-major
  std::vector<uint64_t> seeds;
  std::vector<int> personality;
  // Targets: row r's are numbers offsets[r] .. offsets[r + 1].
  std::vector<uint32_t> offsets = {0};
  std::vector<float> target_factors;  // target after target
  std::vector<uint64_t> target_ids;
  std::vector<int> current_target;  // -1 not given, -2 gone, or an index
};

Rows RandomRows(const LoadedSet& set, int n, uint32_t seed) {
  const engine::CompiledBehaviourSet& c = set.compiled;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-0.2f, 1.2f);
  auto chance = [&](int percent) {
    return static_cast<int>(rng() % 100) < percent;
  };
  Rows rows;
  for (int r = 0; r < n; ++r) {
    rows.ids.push_back(1'000'000'007ull * (r + 1));
    for (const engine::FactorDefinition& f : c.factors()) {
      float v = static_cast<float>(f.min + (f.max - f.min) * unit(rng));
      if (chance(2)) v = chance(50) ? kNaN : -kInf;
      rows.factors.push_back(v);
    }
    rows.current.push_back(static_cast<int>(rng() % (c.action_count() + 1)) -
                           1);
    for (int a = 0; a < c.action_count(); ++a) {
      rows.seconds.push_back(chance(30)   ? kNaN
                             : chance(10) ? kInf
                                          : 30.0f * unit(rng) + 6.0f);
    }
    rows.seeds.push_back(rng());
    rows.personality.push_back(
        static_cast<int>(rng() % (c.personality_count() + 1)) - 1);
    const int targets = static_cast<int>(rng() % 4);  // 0 to 3
    for (int t = 0; t < targets; ++t) {
      rows.target_ids.push_back(7'000'000'000ull + rows.target_ids.size());
      for (const engine::FactorDefinition& f : c.target_factors()) {
        float v = static_cast<float>(f.min + (f.max - f.min) * unit(rng));
        if (chance(2)) v = kNaN;
        rows.target_factors.push_back(v);
      }
    }
    rows.offsets.push_back(rows.offsets.back() + targets);
    rows.current_target.push_back(static_cast<int>(rng() % (targets + 2)) - 2);
  }
  return rows;
}

v1::AgentSnapshot Snapshot(const LoadedSet& set, const Rows& rows, int r) {
  const engine::CompiledBehaviourSet& c = set.compiled;
  const int f = c.factor_count(), a = c.action_count();
  v1::AgentSnapshot s;
  s.set_agent_id(std::to_string(rows.ids[r]));
  s.set_behaviour_set(set.name());
  for (int i = 0; i < f; ++i) s.add_factors(rows.factors[r * f + i]);
  if (rows.current[r] >= 0) {
    s.set_current_action(c.actions()[rows.current[r]].name);
  }
  for (int i = 0; i < a; ++i) {
    (*s.mutable_seconds_since_action())[c.actions()[i].name] =
        rows.seconds[r * a + i];
  }
  s.set_seed(rows.seeds[r]);
  if (rows.personality[r] >= 0) {
    s.set_personality(c.personality_name(rows.personality[r]));
  }
  const int tf = c.target_factor_count();
  for (uint32_t t = rows.offsets[r]; t < rows.offsets[r + 1]; ++t) {
    v1::TargetSnapshot* target = s.add_targets();
    target->set_target_id(std::to_string(rows.target_ids[t]));
    for (int i = 0; i < tf; ++i) {
      target->add_factors(rows.target_factors[t * tf + i]);
    }
  }
  if (rows.current_target[r] >= 0) {
    s.set_current_target(std::to_string(
        rows.target_ids[rows.offsets[r] + rows.current_target[r]]));
  } else if (rows.current_target[r] == engine::kTargetGone) {
    s.set_current_target("long gone");
  }
  return s;
}

v1::AgentBlock Block(const LoadedSet& set, const Rows& rows,
                     v1::FactorLayout layout) {
  v1::AgentBlock b;
  b.set_behaviour_set(set.name());
  b.set_expected_revision(set.revision());
  b.set_layout(layout);
  const int n = static_cast<int>(rows.ids.size());
  const int f = set.compiled.factor_count();
  b.mutable_agent_ids()->Add(rows.ids.begin(), rows.ids.end());
  if (layout == v1::FACTOR_LAYOUT_COLUMNS) {
    for (int i = 0; i < f; ++i) {
      for (int r = 0; r < n; ++r) b.add_factors(rows.factors[r * f + i]);
    }
  } else {
    b.mutable_factors()->Add(rows.factors.begin(), rows.factors.end());
  }
  b.mutable_current_action()->Add(rows.current.begin(), rows.current.end());
  b.mutable_seconds_since_action()->Add(rows.seconds.begin(),
                                        rows.seconds.end());
  b.mutable_seeds()->Add(rows.seeds.begin(), rows.seeds.end());
  b.mutable_personality()->Add(rows.personality.begin(),
                               rows.personality.end());
  b.mutable_target_offsets()->Add(rows.offsets.begin(), rows.offsets.end());
  b.mutable_target_factors()->Add(rows.target_factors.begin(),
                                  rows.target_factors.end());
  b.mutable_target_ids()->Add(rows.target_ids.begin(), rows.target_ids.end());
  b.mutable_current_target()->Add(rows.current_target.begin(),
                                  rows.current_target.end());
  return b;
}

// A block's failed rows as "row message", in row order.
std::vector<std::string> RowErrors(const v1::DecisionBlock& block) {
  std::vector<std::string> errors;
  for (const v1::IndexedDecision& x : block.full()) {
    if (x.decision().has_error()) {
      errors.push_back(
          absl::StrCat(x.agent(), " ", x.decision().error().message()));
    }
  }
  return errors;
}

uint32_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// A block spoilt one way, and how the service refuses it.
struct Refusal {
  std::string name;
  std::function<void(v1::AgentBlock*)> spoil;
  absl::StatusCode code;
  std::string message;
};

class BlocksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The forager once more, choosing by softmax: rows' seeds matter.
    std::ifstream in("examples/behaviour_sets/eat_hide_wander.yaml");
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    ASSERT_TRUE(absl::StrReplaceAll(
                    {{"name: eat_hide_wander", "name: forager_softmax"},
                     {"  highest: {}", "  softmax: {temperature: 0.3}"}},
                    &text) == 2);
    std::ofstream(dir_.path() / "forager_softmax.yaml") << text;
    absl::StatusOr<Catalog> catalog =
        loader::LoadCatalog({"examples/behaviour_sets", dir_.path().string()});
    ASSERT_THAT(catalog, IsOk());
    catalog_ = *std::move(catalog);
    mage_ = catalog_.Find("arena_mage");
    ASSERT_NE(mage_, nullptr);
  }

  void ExpectObserverSeesEveryRow(v1::FactorLayout layout);

  v1::DecideResponse Run(const v1::DecideRequest& request,
                         BatchObserver* observer = nullptr) {
    EXPECT_THAT(CheckForm(request), IsOk());
    v1::DecideResponse response;
    DecideBatch(catalog_, request, &response, observer);
    EXPECT_EQ(response.blocks_size(), request.blocks_size());
    return response;
  }

  // Each case spoils a copy of `good` sent before another copy: the spoilt
  // block is refused with the case's code and message, the next decided.
  void ExpectRefused(const v1::AgentBlock& good,
                     const std::vector<Refusal>& cases) {
    for (const Refusal& c : cases) {
      SCOPED_TRACE(c.name);
      v1::DecideRequest request;
      *request.add_blocks() = good;
      c.spoil(request.mutable_blocks(0));
      *request.add_blocks() = good;
      const v1::DecideResponse response = Run(request);
      const v1::DecisionBlock& refused = response.blocks(0);
      ASSERT_TRUE(refused.has_error());
      EXPECT_EQ(refused.error().code(), static_cast<int>(c.code));
      EXPECT_THAT(refused.error().message(), StartsWith(c.message));
      EXPECT_EQ(refused.action_index_size(), 0);
      const v1::DecisionBlock& next = response.blocks(1);
      EXPECT_FALSE(next.has_error());
      EXPECT_EQ(next.action_index_size(), good.agent_ids_size());
      EXPECT_EQ(next.full_size(), 0);
    }
  }

  ::utilityd::testing::TempDir dir_{"utilityd_blocks"};
  Catalog catalog_;
  std::shared_ptr<const LoadedSet> mage_;
};

// Every set the block form takes, as snapshots (compact) and as a block in
// each layout, in one request: the same numbers, score bits included.
TEST_F(BlocksTest, EveryExampleSetDecidesAlikeAsSnapshotsAndAsBlocks) {
  int sets = 0;
  for (const auto& [name, set] : catalog_.sets()) {
    if (set->compiled.tree() != nullptr || set->compiled.has_resources()) {
      continue;  // below
    }
    ++sets;
    const Rows rows = RandomRows(*set, 300, 7u + sets);
    v1::DecideRequest request;
    request.set_form(v1::DECISION_FORM_COMPACT);
    for (int r = 0; r < 300; ++r)
      *request.add_agents() = Snapshot(*set, rows, r);
    *request.add_blocks() = Block(*set, rows, v1::FACTOR_LAYOUT_ROWS);
    *request.add_blocks() = Block(*set, rows, v1::FACTOR_LAYOUT_COLUMNS);
    const v1::DecideResponse response = Run(request);
    const v1::CompactDecisions& want = response.compact();
    ASSERT_EQ(want.full_size(), 0) << name;
    int switched = 0, acted = 0, targeted = 0;
    for (const v1::DecisionBlock& got : response.blocks()) {
      ASSERT_FALSE(got.has_error()) << name << ": " << got.error().message();
      EXPECT_EQ(got.revision(), set->revision());
      ASSERT_EQ(got.action_index_size(), 300);
      for (int r = 0; r < 300; ++r) {
        SCOPED_TRACE(absl::StrCat(name, " row ", r));
        EXPECT_EQ(got.action_index(r), want.action_index(r));
        EXPECT_EQ(got.target_index(r), want.target_index(r));
        EXPECT_EQ(Bits(got.score(r)), Bits(want.score(r)));
        EXPECT_EQ(got.flags()[r], want.flags()[r]);
        switched += (got.flags()[r] & v1::COMPACT_FLAG_SWITCHED) != 0;
        acted += got.action_index(r) >= 0;
        targeted += got.target_index(r) >= 0;
      }
    }
    if (name == "arena_mage") {
      EXPECT_GT(targeted, 0) << name;
    }
    // The rows were varied enough to mean something.
    EXPECT_GT(switched, 0) << name;
    EXPECT_GT(acted, 300) << name;
  }
  EXPECT_GE(sets, 4);
}

// AgentBlock.fixed_width_indices: the same answer, its indices in the
// fixed-width columns and the varint ones empty, for a flat set, a tree and
// a coordinated set; a block that does not ask is answered as before, in
// the same request.
TEST_F(BlocksTest, FixedWidthIndicesCarryTheSameNumbers) {
  std::vector<std::shared_ptr<const LoadedSet>> sets = {
      mage_, catalog_.Find("guard_tree"), catalog_.Find("arena_goblin")};
  v1::DecideRequest varint, fixed;
  for (size_t k = 0; k < sets.size(); ++k) {
    ASSERT_NE(sets[k], nullptr) << k;
    const Rows rows = RandomRows(*sets[k], 120, 31u + k);
    *varint.add_blocks() = Block(*sets[k], rows, v1::FACTOR_LAYOUT_COLUMNS);
    *fixed.add_blocks() = varint.blocks(varint.blocks_size() - 1);
    fixed.mutable_blocks(fixed.blocks_size() - 1)
        ->set_fixed_width_indices(true);
  }
  // One block that does not ask, beside those that do.
  *varint.add_blocks() = varint.blocks(0);
  *fixed.add_blocks() = varint.blocks(0);
  const v1::DecideResponse want = Run(varint), got = Run(fixed);
  ASSERT_EQ(got.blocks_size(), 4);
  int acted = 0, targeted = 0;
  for (int b = 0; b < 4; ++b) {
    SCOPED_TRACE(absl::StrCat("block ", b));
    const v1::DecisionBlock& w = want.blocks(b);
    const v1::DecisionBlock& g = got.blocks(b);
    ASSERT_FALSE(g.has_error()) << g.error().message();
    ASSERT_EQ(w.action_index_size(), 120);
    EXPECT_EQ(w.action_index_fixed_size(), 0);
    const bool asked = b < 3;
    const auto& actions = asked ? g.action_index_fixed() : g.action_index();
    const auto& targets = asked ? g.target_index_fixed() : g.target_index();
    EXPECT_EQ(asked ? g.action_index_size() : g.action_index_fixed_size(), 0);
    EXPECT_EQ(asked ? g.target_index_size() : g.target_index_fixed_size(), 0);
    EXPECT_THAT(actions, ::testing::ElementsAreArray(w.action_index()));
    EXPECT_THAT(targets, ::testing::ElementsAreArray(w.target_index()));
    EXPECT_EQ(g.flags(), w.flags());
    EXPECT_EQ(g.tree_states(), w.tree_states());
    EXPECT_THAT(g.grant_offsets(),
                ::testing::ElementsAreArray(w.grant_offsets()));
    for (int r = 0; r < 120; ++r) {
      EXPECT_EQ(Bits(g.score(r)), Bits(w.score(r))) << r;
      acted += w.action_index(r) >= 0;
      targeted += w.target_index(r) >= 0;
    }
  }
  // The rows chose actions and targets: the columns were not all -1.
  EXPECT_GT(acted, 300);
  EXPECT_GT(targeted, 0);
}

TEST_F(BlocksTest, ShortColumnsCostOnlyTheRowsTheyMiss) {
  const Rows rows = RandomRows(*mage_, 6, 1);
  v1::DecideRequest request;
  v1::AgentBlock* b = request.add_blocks();
  *b = Block(*mage_, rows, v1::FACTOR_LAYOUT_ROWS);
  const int f = mage_->compiled.factor_count();
  b->mutable_factors()->Truncate(4 * f + 1);  // row 4 partly, row 5 not
  b->mutable_seeds()->Truncate(5);
  b->set_current_action(1, 99);
  const v1::DecideResponse response = Run(request);
  const v1::DecisionBlock& got = response.blocks(0);
  ASSERT_FALSE(got.has_error()) << got.error().message();
  ASSERT_EQ(got.full_size(), 3);
  EXPECT_EQ(got.full(0).agent(), 1);
  EXPECT_THAT(got.full(0).decision().error().message(),
              StartsWith("blocks[0].rows[1].current_action: index 99 is out "
                         "of range"));
  EXPECT_EQ(got.full(1).agent(), 4);
  EXPECT_THAT(got.full(1).decision().error().message(),
              StartsWith("blocks[0].rows[4].factors: the column has"));
  EXPECT_EQ(got.full(2).agent(), 5);
  EXPECT_THAT(got.full(2).decision().error().message(),
              StartsWith("blocks[0].rows[5].factors:"));
  // The other rows are decided, as their snapshots would be.
  for (int r : {0, 2, 3}) {
    v1::DecideRequest one;
    one.set_form(v1::DECISION_FORM_COMPACT);
    *one.add_agents() = Snapshot(*mage_, rows, r);
    const v1::DecideResponse alone = Run(one);
    EXPECT_EQ(got.flags()[r] & v1::COMPACT_FLAG_FULL, 0) << r;
    EXPECT_EQ(got.action_index(r), alone.compact().action_index(0)) << r;
    EXPECT_EQ(Bits(got.score(r)), Bits(alone.compact().score(0))) << r;
  }
  for (int r : {1, 4, 5}) {
    EXPECT_EQ(got.flags()[r], v1::COMPACT_FLAG_FULL);
    EXPECT_EQ(got.action_index(r), -1);
  }
}

// A factor-major block's rows out of range fail alone with the messages
// row-major rows get: those the engine finds while reading the block's
// columns (running action, personality) and those that keep the block off
// that path (a current target beyond its row's targets).
TEST_F(BlocksTest, FactorMajorRowsOutOfRangeFailAsRowsDo) {
  const Rows rows = RandomRows(*mage_, 40, 5);
  for (bool bad_target : {false, true}) {
    SCOPED_TRACE(bad_target ? "a bad current target" : "indices only");
    // Each layout alone, so that both are blocks[0].
    auto answer = [&](v1::FactorLayout layout) {
      v1::DecideRequest request;
      request.set_form(v1::DECISION_FORM_COMPACT);
      v1::AgentBlock* b = request.add_blocks();
      *b = Block(*mage_, rows, layout);
      b->set_current_action(1, 99);
      b->set_personality(2, -5);
      if (bad_target) b->set_current_target(3, 7);
      return Run(request).blocks(0);
    };
    const v1::DecisionBlock by_rows = answer(v1::FACTOR_LAYOUT_ROWS);
    const v1::DecisionBlock by_columns = answer(v1::FACTOR_LAYOUT_COLUMNS);
    const std::vector<std::string> errors = RowErrors(by_columns);
    EXPECT_EQ(errors, RowErrors(by_rows));
    ASSERT_EQ(errors.size(), bad_target ? 3u : 2u);
    EXPECT_THAT(errors[0], HasSubstr("current_action: index 99 is out"));
    EXPECT_THAT(errors[1], HasSubstr("personality: index -5 is out"));
    for (int r = 0; r < 40; ++r) {
      SCOPED_TRACE(r);
      EXPECT_EQ(by_columns.flags()[r], by_rows.flags()[r]);
      EXPECT_EQ(by_columns.action_index(r), by_rows.action_index(r));
      EXPECT_EQ(by_columns.target_index(r), by_rows.target_index(r));
      EXPECT_EQ(Bits(by_columns.score(r)), Bits(by_rows.score(r)));
    }
  }
}

TEST_F(BlocksTest, ABlockThatCannotBeReadIsRefusedAndTheNextIsDecided) {
  const Rows rows = RandomRows(*mage_, 4, 2);
  const v1::AgentBlock good = Block(*mage_, rows, v1::FACTOR_LAYOUT_ROWS);
  const std::vector<Refusal> cases = {
      {"unknown set", [](v1::AgentBlock* b) { b->set_behaviour_set("arena"); },
       absl::StatusCode::kNotFound, "blocks[0].behaviour_set: unknown set"},
      {"no set", [](v1::AgentBlock* b) { b->clear_behaviour_set(); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].behaviour_set: is required"},
      {"stale revision",
       [](v1::AgentBlock* b) { b->set_expected_revision("0123"); },
       absl::StatusCode::kFailedPrecondition,
       "blocks[0].expected_revision: arena_mage is at revision"},
      {"long column", [](v1::AgentBlock* b) { b->add_seeds(1); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].seeds: has 5 values for 4 rows"},
      {"long factors", [](v1::AgentBlock* b) { b->add_factors(1); },
       absl::StatusCode::kInvalidArgument, "blocks[0].factors: has"},
      {"short factor-major",
       [](v1::AgentBlock* b) {
         b->set_layout(v1::FACTOR_LAYOUT_COLUMNS);
         b->mutable_factors()->RemoveLast();
       },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].factors: factor-major: expected"},
      {"target offsets, one too few",
       [](v1::AgentBlock* b) { b->mutable_target_offsets()->RemoveLast(); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].target_offsets: has 4 values for 4 rows"},
      {"target factors, one too many",
       [](v1::AgentBlock* b) { b->add_target_factors(1); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].target_factors: expected"},
      {"target ids, one too many",
       [](v1::AgentBlock* b) { b->add_target_ids(1); },
       absl::StatusCode::kInvalidArgument, "blocks[0].target_ids: has"},
      {"targets without offsets",
       [](v1::AgentBlock* b) { b->clear_target_offsets(); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].target_offsets: is empty, but"},
      {"long current target",
       [](v1::AgentBlock* b) { b->add_current_target(-1); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].current_target: has 5 values for 4 rows"},
  };
  ExpectRefused(good, cases);
}

// docs/SERVICE.md, "Blocks": a column of the wrong length is OUT_OF_RANGE,
// but for the packed factor values, which are FACTOR_COUNT as a snapshot's.
TEST_F(BlocksTest, ColumnLengthErrorsCarryTheirReason) {
  const Rows rows = RandomRows(*mage_, 4, 2);
  const v1::AgentBlock good = Block(*mage_, rows, v1::FACTOR_LAYOUT_ROWS);
  const std::vector<
      std::pair<std::string, std::function<void(v1::AgentBlock*)>>>
      out_of_range = {
          {"seeds", [](v1::AgentBlock* b) { b->add_seeds(1); }},
          {"current_action",
           [](v1::AgentBlock* b) { b->add_current_action(0); }},
          {"seconds_since_action",
           [](v1::AgentBlock* b) { b->add_seconds_since_action(1); }},
          {"target_offsets",
           [](v1::AgentBlock* b) {
             b->mutable_target_offsets()->RemoveLast();
           }},
          {"target_ids", [](v1::AgentBlock* b) { b->add_target_ids(1); }},
          {"personality", [](v1::AgentBlock* b) { b->add_personality(-1); }},
      };
  auto reason_of = [&](const std::function<void(v1::AgentBlock*)>& spoil) {
    v1::DecideRequest request;
    *request.add_blocks() = good;
    spoil(request.mutable_blocks(0));
    const v1::DecideResponse response = Run(request);
    EXPECT_TRUE(response.blocks(0).has_error());
    return response.blocks(0).error().reason();
  };
  for (const auto& [field, spoil] : out_of_range) {
    EXPECT_EQ(reason_of(spoil), v1::ERROR_REASON_OUT_OF_RANGE) << field;
  }
  EXPECT_EQ(reason_of([](v1::AgentBlock* b) { b->add_factors(1); }),
            v1::ERROR_REASON_FACTOR_COUNT);
  EXPECT_EQ(reason_of([](v1::AgentBlock* b) { b->add_target_factors(1); }),
            v1::ERROR_REASON_FACTOR_COUNT);
}

// Offsets out of order or out of range, and a current target beyond the
// row's targets, cost only their rows.
TEST_F(BlocksTest, BadTargetOffsetsCostOnlyTheirRows) {
  Rows rows = RandomRows(*mage_, 6, 4);
  // Two targets a row, the current one given.
  const int tf = mage_->compiled.target_factor_count();
  rows.offsets = {0, 2, 4, 6, 8, 10, 12};
  rows.target_ids.resize(12);
  rows.target_factors.assign(12 * tf, 5.0f);
  for (int t = 0; t < 12; ++t) rows.target_ids[t] = 90 + t;
  rows.current_target.assign(6, 1);
  v1::DecideRequest request;
  v1::AgentBlock* b = request.add_blocks();
  *b = Block(*mage_, rows, v1::FACTOR_LAYOUT_ROWS);
  b->set_target_offsets(2, 1);   // row 1 runs back (2 to 1), row 2 is 1..6
  b->set_target_offsets(4, 13);  // row 3 ends past the 12, row 4 runs back
  b->set_current_target(5, 2);   // row 5 has two targets
  const v1::DecisionBlock got = Run(request).blocks(0);
  ASSERT_FALSE(got.has_error()) << got.error().message();
  const std::vector<std::string> errors = RowErrors(got);
  EXPECT_THAT(
      errors,
      ::testing::ElementsAre(
          StartsWith("1 blocks[0].rows[1].target_offsets: out of order"),
          StartsWith("3 blocks[0].rows[3].target_offsets: out of range: the "
                     "row's targets end at 13, the block has 12"),
          StartsWith("4 blocks[0].rows[4].target_offsets: out of order"),
          StartsWith("5 blocks[0].rows[5].current_target: index 2 is out of "
                     "range: the row has 2 targets")));
  // Rows 0 and 2 are decided as their snapshots (row 2 with targets 1..6).
  rows.offsets = {0, 2, 1, 6, 8, 10, 12};
  for (int r : {0, 2}) {
    v1::DecideRequest one;
    one.set_form(v1::DECISION_FORM_COMPACT);
    *one.add_agents() = Snapshot(*mage_, rows, r);
    const v1::DecideResponse alone = Run(one);
    EXPECT_EQ(got.flags()[r] & v1::COMPACT_FLAG_FULL, 0) << r;
    EXPECT_EQ(got.action_index(r), alone.compact().action_index(0)) << r;
    EXPECT_EQ(got.target_index(r), alone.compact().target_index(0)) << r;
    EXPECT_EQ(Bits(got.score(r)), Bits(alone.compact().score(0))) << r;
  }
}

// A set whose targets have no factors counts them by their ids: a block
// cannot claim more targets than it carries bytes for.
TEST_F(BlocksTest, TargetsWithoutFactorsNeedTheirIds) {
  std::shared_ptr<const LoadedSet> forager = catalog_.Find("eat_hide_wander");
  ASSERT_NE(forager, nullptr);
  ASSERT_EQ(forager->compiled.target_factor_count(), 0);
  v1::DecideRequest request;
  v1::AgentBlock* b = request.add_blocks();
  b->set_behaviour_set("eat_hide_wander");
  b->add_agent_ids(1);
  b->mutable_factors()->Resize(forager->compiled.factor_count(), 0.5f);
  b->add_target_offsets(0);
  b->add_target_offsets(4'000'000'000u);
  const v1::DecideResponse refused = Run(request);
  ASSERT_TRUE(refused.blocks(0).has_error());
  EXPECT_THAT(refused.blocks(0).error().message(),
              StartsWith("blocks[0].target_ids: has 0 ids for 4000000000 "
                         "targets; eat_hide_wander's targets have no factors"));
  // With an id per target it is decided.
  b->set_target_offsets(1, 2);
  b->add_target_ids(70);
  b->add_target_ids(71);
  const v1::DecideResponse decided = Run(request);
  ASSERT_FALSE(decided.blocks(0).has_error())
      << decided.blocks(0).error().message();
  EXPECT_EQ(decided.blocks(0).action_index_size(), 1);
}

// A set with a tree, ticked as a block for several ticks (states fed back
// from the block's own answer columns, random outcomes for the leaves that
// ran, the game clock moving): every row's tick equals the same agent's as
// a snapshot fed back from its own decisions, leaf for leaf and byte for
// byte of the state.
TEST_F(BlocksTest, TreeRowsTickAsSnapshotsDo) {
  std::shared_ptr<const LoadedSet> guard = catalog_.Find("guard_tree");
  ASSERT_NE(guard, nullptr);
  ASSERT_NE(guard->compiled.tree(), nullptr);
  constexpr int kRows = 60;
  std::mt19937 rng(11);
  v1::DecisionBlock last;                          // the block's last answer
  std::vector<v1::Decision> last_snapshot(kRows);  // the snapshots' answers
  int leaves = 0, halted = 0, switched = 0;
  for (int tick = 0; tick < 12; ++tick) {
    SCOPED_TRACE(::testing::Message() << "tick " << tick);
    const Rows rows = RandomRows(*guard, kRows, 100 + tick);
    v1::DecideRequest by_block, by_agent;
    v1::AgentBlock* b = by_block.add_blocks();
    *b = Block(*guard, rows,
               tick % 2 ? v1::FACTOR_LAYOUT_COLUMNS : v1::FACTOR_LAYOUT_ROWS);
    b->set_game_time(0.5 * tick);
    if (tick > 0) {  // the answer's state columns, sent back as they came
      *b->mutable_tree_state_offsets() = last.tree_state_offsets();
      *b->mutable_tree_states() = last.tree_states();
    }
    b->add_outcome_offsets(0);
    for (int r = 0; r < kRows; ++r) {
      v1::AgentSnapshot* a = by_agent.add_agents();
      *a = Snapshot(*guard, rows, r);
      a->set_game_time(0.5 * tick);
      a->set_tree_state(last_snapshot[r].tree_state());
      // How the leaves the last tick ran went.
      for (const v1::TreeLeaf& leaf : last_snapshot[r].run_leaves()) {
        const auto status = static_cast<v1::NodeStatus>(1 + rng() % 3);
        v1::LeafOutcome* o = a->add_leaf_outcomes();
        o->set_leaf(leaf.node());
        o->set_status(status);
        b->add_outcome_leaves(leaf.node());
        b->add_outcome_statuses(status);
      }
      b->add_outcome_offsets(b->outcome_leaves_size());
    }
    const v1::DecisionBlock got = Run(by_block).blocks(0);
    const v1::DecideResponse want = Run(by_agent);
    ASSERT_FALSE(got.has_error()) << got.error().message();
    ASSERT_EQ(got.full_size(), 0) << got.full(0).decision().error().message();
    ASSERT_EQ(got.tree_state_offsets_size(), kRows + 1);
    ASSERT_EQ(got.run_offsets_size(), kRows + 1);
    ASSERT_EQ(got.halted_offsets_size(), kRows + 1);
    for (int r = 0; r < kRows; ++r) {
      SCOPED_TRACE(::testing::Message() << "row " << r);
      const v1::Decision& d = want.decisions(r);
      ASSERT_FALSE(d.has_error()) << d.error().message();
      auto target_id = [&](int t) {
        return t < 0 ? std::string()
                     : std::to_string(rows.target_ids[rows.offsets[r] + t]);
      };
      EXPECT_EQ(got.action_index(r), d.action_index());
      EXPECT_EQ(target_id(got.target_index(r)), d.target_id());
      EXPECT_EQ((got.flags()[r] & v1::COMPACT_FLAG_SWITCHED) != 0,
                d.switched());
      EXPECT_EQ(got.tree_status(r), d.tree_status());
      EXPECT_EQ(got.tree_states().substr(
                    got.tree_state_offsets(r),
                    got.tree_state_offsets(r + 1) - got.tree_state_offsets(r)),
                d.tree_state());
      EXPECT_EQ(static_cast<int>(got.tree_reset()[r]) == 0,
                d.tree_reset().empty());
      // A row's leaves in a block's columns against the snapshot's.
      auto expect_leaves =
          [&](const google::protobuf::RepeatedField<uint32_t>& offsets,
              const google::protobuf::RepeatedField<int32_t>& nodes,
              const google::protobuf::RepeatedField<int32_t>& actions,
              const google::protobuf::RepeatedField<int32_t>& targets,
              const google::protobuf::RepeatedPtrField<v1::TreeLeaf>&
                  expected) {
            ASSERT_EQ(offsets[r + 1] - offsets[r],
                      static_cast<uint32_t>(expected.size()));
            for (int k = 0; k < expected.size(); ++k) {
              const int i = static_cast<int>(offsets[r]) + k;
              EXPECT_EQ(nodes[i], expected[k].node());
              EXPECT_EQ(actions[i], expected[k].action_index());
              EXPECT_EQ(target_id(targets[i]), expected[k].target_id());
            }
          };
      expect_leaves(got.run_offsets(), got.run_nodes(), got.run_actions(),
                    got.run_targets(), d.run_leaves());
      for (int k = 0; k < d.run_leaves_size(); ++k) {
        EXPECT_EQ(got.run_started()[got.run_offsets(r) + k] != 0,
                  d.run_leaves(k).started());
      }
      expect_leaves(got.halted_offsets(), got.halted_nodes(),
                    got.halted_actions(), got.halted_targets(),
                    d.halted_leaves());
      leaves += d.run_leaves_size();
      halted += d.halted_leaves_size();
      switched += d.switched();
    }
    last = got;
    for (int r = 0; r < kRows; ++r) last_snapshot[r] = want.decisions(r);
    if (HasFailure()) return;
  }
  // The ticks were varied enough to mean something.
  EXPECT_GT(leaves, kRows * 6);
  EXPECT_GT(halted, 0);
  EXPECT_GT(switched, 0);
}

// Tree columns: sizes that disagree refuse the block; a row's bad range or
// bad outcome costs only that row; a state that does not decode restarts
// its row's tree with the reason, as for a snapshot.
TEST_F(BlocksTest, TreeColumnsNameWhatIsWrong) {
  std::shared_ptr<const LoadedSet> guard = catalog_.Find("guard_tree");
  const Rows rows = RandomRows(*guard, 4, 21);
  v1::AgentBlock good = Block(*guard, rows, v1::FACTOR_LAYOUT_ROWS);
  good.clear_current_target();
  good.clear_target_offsets();
  good.clear_target_factors();
  good.clear_target_ids();
  for (uint32_t o : {0, 0, 3, 7, 7}) good.add_tree_state_offsets(o);
  good.set_tree_states("abcdefg");  // rows 1 and 2: bytes that do not decode
  {
    v1::AgentBlock b = good;
    b.add_tree_state_offsets(7);
    v1::DecideRequest request;
    *request.add_blocks() = b;
    EXPECT_THAT(Run(request).blocks(0).error().message(),
                StartsWith("blocks[0].tree_state_offsets: has 6 values for 4 "
                           "rows"));
    b = good;
    b.mutable_tree_states()->push_back('x');
    *request.mutable_blocks(0) = b;
    EXPECT_THAT(Run(request).blocks(0).error().message(),
                StartsWith("blocks[0].tree_state_offsets: ends at 7, but "
                           "tree_states has 8"));
  }
  v1::DecideRequest request;
  v1::AgentBlock* b = request.add_blocks();
  *b = good;
  b->set_tree_state_offsets(1, 5);  // row 0 runs 0..5, row 1 back 5..3
  for (uint32_t o : {0, 0, 0, 1, 1}) b->add_outcome_offsets(o);
  b->add_outcome_leaves(999);  // row 2's outcome: no such leaf
  b->add_outcome_statuses(v1::NODE_STATUS_SUCCESS);
  const v1::DecisionBlock got = Run(request).blocks(0);
  ASSERT_FALSE(got.has_error()) << got.error().message();
  const std::vector<std::string> errors = RowErrors(got);
  EXPECT_THAT(errors,
              ::testing::ElementsAre(
                  StartsWith("1 blocks[0].rows[1].tree_state_offsets: out of "
                             "order: the row's state bytes would run from 5 "
                             "back to 3"),
                  StartsWith("2 blocks[0].rows[2].outcome_leaves[0]: node 999 "
                             "is not an action leaf of guard_tree's tree")));
  // Rows 0 and 3 are ticked: row 0's bytes do not decode, so its tree
  // restarted, saying why; row 3 (no bytes) started fresh.
  EXPECT_EQ(got.tree_reset()[0], v1::TREE_RESET_MALFORMED);
  EXPECT_EQ(got.tree_reset()[3], v1::TREE_RESET_NONE);
  EXPECT_NE(got.tree_status(0), v1::NODE_STATUS_UNSPECIFIED);
  EXPECT_EQ(got.tree_status(1), v1::NODE_STATUS_UNSPECIFIED);
  EXPECT_EQ(got.run_offsets(2), got.run_offsets(3));  // row 2 ran nothing
}

TEST(BlocksFormTest, BlocksRefuseSensitivityButTakeExplanations) {
  v1::DecideRequest request;
  request.add_blocks()->set_behaviour_set("arena_mage");
  request.set_sensitivity(true);
  absl::Status s = CheckForm(request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("blocks: "));
  request.set_sensitivity(false);
  request.set_explain(v1::EXPLAIN_TOP);  // for the rows a block names
  EXPECT_THAT(CheckForm(request), IsOk());
}

// The rows a block names in explain_rows come with their explained
// decision, the same as the row sent as a snapshot in the full form; the
// other rows are numbers only; bad names refuse the block.
TEST_F(BlocksTest, ExplainRowsAnswerTheirDecisionsInFull) {
  const Rows rows = RandomRows(*mage_, 12, 5);
  for (v1::FactorLayout layout :
       {v1::FACTOR_LAYOUT_ROWS, v1::FACTOR_LAYOUT_COLUMNS}) {
    for (v1::Explain explain : {v1::EXPLAIN_TOP, v1::EXPLAIN_FULL}) {
      SCOPED_TRACE(::testing::Message()
                   << "layout " << layout << " explain " << explain);
      v1::DecideRequest request;
      request.set_explain(explain);
      v1::AgentBlock* b = request.add_blocks();
      *b = Block(*mage_, rows, layout);
      b->set_current_action(3, 99);  // row 3 fails
      for (uint32_t r : {7u, 2u, 3u, 7u}) b->add_explain_rows(r);
      const v1::DecisionBlock got = Run(request).blocks(0);
      ASSERT_FALSE(got.has_error()) << got.error().message();
      ASSERT_EQ(got.full_size(), 3);  // 2, 3 (its error), 7: once each
      EXPECT_EQ(got.full(1).agent(), 3);
      EXPECT_TRUE(got.full(1).decision().has_error());
      for (int k : {0, 2}) {
        const v1::IndexedDecision& x = got.full(k);
        const int r = x.agent();
        EXPECT_EQ(got.flags()[r] & v1::COMPACT_FLAG_FULL,
                  v1::COMPACT_FLAG_FULL);
        // The numbers are there as for any row.
        EXPECT_EQ(x.decision().action_index(), got.action_index(r));
        EXPECT_EQ(Bits(x.decision().score()), Bits(got.score(r)));
        v1::DecideRequest one;
        one.set_explain(explain);
        *one.add_agents() = Snapshot(*mage_, rows, r);
        v1::Decision want = Run(one).decisions(0);
        want.clear_decision_id();
        EXPECT_EQ(x.decision().SerializeAsString(), want.SerializeAsString())
            << "row " << r << "\n"
            << x.decision().DebugString() << "\nwant\n"
            << want.DebugString();
        EXPECT_FALSE(x.decision().explanation().strategy().empty());
      }
      for (int r : {0, 1, 4, 5, 6, 8}) {
        EXPECT_EQ(got.flags()[r] & v1::COMPACT_FLAG_FULL, 0) << r;
      }
    }
  }
  // Naming a row past the end, or rows at explain none, refuses the block.
  v1::DecideRequest bad;
  bad.set_explain(v1::EXPLAIN_TOP);
  *bad.add_blocks() = Block(*mage_, rows, v1::FACTOR_LAYOUT_ROWS);
  bad.mutable_blocks(0)->add_explain_rows(12);
  EXPECT_THAT(Run(bad).blocks(0).error().message(),
              StartsWith("blocks[0].explain_rows: row 12 is out of range: "
                         "the block has 12 rows"));
  bad.set_explain(v1::EXPLAIN_NONE);
  bad.mutable_blocks(0)->set_explain_rows(0, 1);
  EXPECT_THAT(Run(bad).blocks(0).error().message(),
              StartsWith("blocks[0].explain_rows: names rows to explain, but "
                         "the request asks for explain none"));
}

// Goblins sharing attack tokens on five mages: each row's targets are
// mages (r + t) % 5, so rows compete for the same pools.
Rows GoblinRows(const LoadedSet& set, int n, uint32_t seed) {
  Rows rows = RandomRows(set, n, seed);
  for (int r = 0; r < n; ++r) {
    for (uint32_t t = rows.offsets[r]; t < rows.offsets[r + 1]; ++t) {
      rows.target_ids[t] = 7'000'000'000ull + (r + t - rows.offsets[r]) % 5;
    }
  }
  return rows;
}

// What rows hold, in the block's layout (AgentBlock.held_*).
struct Held {
  std::vector<uint32_t> offsets = {0}, resources;
  std::vector<uint64_t> target_ids;
  std::vector<uint32_t> amounts;
};

// Random holdings: about a third of the rows hold a token on one of the
// five mages, some of them two units.
Held RandomHeld(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  Held held;
  for (int r = 0; r < n; ++r) {
    if (rng() % 3 == 0) {
      held.resources.push_back(0);
      held.target_ids.push_back(7'000'000'000ull + rng() % 5);
      held.amounts.push_back(rng() % 4 == 0 ? 2 : 1);
    }
    held.offsets.push_back(static_cast<uint32_t>(held.resources.size()));
  }
  return held;
}

void AddHeld(const Held& held, v1::AgentBlock* b) {
  b->mutable_held_offsets()->Add(held.offsets.begin(), held.offsets.end());
  b->mutable_held_resources()->Add(held.resources.begin(),
                                   held.resources.end());
  b->mutable_held_target_ids()->Add(held.target_ids.begin(),
                                    held.target_ids.end());
  b->mutable_held_amounts()->Add(held.amounts.begin(), held.amounts.end());
}

void AddHeld(const Held& held, int r, v1::AgentSnapshot* s) {
  for (uint32_t h = held.offsets[r]; h < held.offsets[r + 1]; ++h) {
    v1::HeldResource* x = s->add_held();
    x->set_resource("attack_token");
    x->set_target_id(std::to_string(held.target_ids[h]));
    x->set_amount(static_cast<int32_t>(held.amounts[h]));
  }
}

// A block's grants as the next tick's holdings (what the SDK's CarryHeld
// does).
Held GrantsAsHeld(const v1::DecisionBlock& b) {
  Held held;
  held.offsets.assign(b.grant_offsets().begin(), b.grant_offsets().end());
  held.resources.assign(b.grant_resources().begin(), b.grant_resources().end());
  held.target_ids.assign(b.grant_target_ids().begin(),
                         b.grant_target_ids().end());
  held.amounts.assign(b.grant_amounts().begin(), b.grant_amounts().end());
  return held;
}

// 60 goblins over four ticks, their grants carried back as holdings each
// tick, with a pool the request lists (mage 0 at capacity 1, an outside
// holder): as a block in each layout, half and half mixed with snapshots,
// and as snapshots, the same allocation — numbers, score bits, flags,
// pools; and each row's grants are its snapshot's Coordination.granted.
TEST_F(BlocksTest, CoordinatedRowsAreAllocatedAsSnapshotsAre) {
  const auto goblin = catalog_.Find("arena_goblin");
  ASSERT_NE(goblin, nullptr);
  ASSERT_TRUE(goblin->compiled.has_resources());
  constexpr int kRows = 60;
  Held held = RandomHeld(kRows, 11);
  // The same goblins each tick, doing what they were told last tick.
  Rows rows = GoblinRows(*goblin, kRows, 40u);
  int denied = 0, granted = 0, kept = 0;
  for (int tick = 0; tick < 4; ++tick) {
    SCOPED_TRACE(absl::StrCat("tick ", tick));
    auto base = [&] {
      v1::DecideRequest request;
      request.set_form(v1::DECISION_FORM_COMPACT);
      v1::ResourcePool* pool = request.add_pools();
      pool->set_resource("attack_token");
      pool->set_target_id("7000000000");
      pool->set_capacity(1);
      pool->add_holders()->set_agent_id("ogre");
      return request;
    };
    // As snapshots, in the full form: the reference, with its grants.
    v1::DecideRequest snapshots = base();
    snapshots.set_form(v1::DECISION_FORM_FULL);
    for (int r = 0; r < kRows; ++r) {
      v1::AgentSnapshot* s = snapshots.add_agents();
      *s = Snapshot(*goblin, rows, r);
      AddHeld(held, r, s);
    }
    const v1::DecideResponse want = Run(snapshots);
    // As a block in each layout, and half as snapshots, half as a block.
    std::vector<v1::DecideResponse> answers;
    for (v1::FactorLayout layout :
         {v1::FACTOR_LAYOUT_ROWS, v1::FACTOR_LAYOUT_COLUMNS}) {
      v1::DecideRequest request = base();
      v1::AgentBlock* b = request.add_blocks();
      *b = Block(*goblin, rows, layout);
      AddHeld(held, b);
      answers.push_back(Run(request));
    }
    {
      // Rows 0-29 as snapshots, 30-59 as a block of their own.
      v1::DecideRequest mixed = base();
      for (int r = 0; r < kRows / 2; ++r) {
        *mixed.add_agents() = snapshots.agents(r);
      }
      Rows second;
      const int half = kRows / 2, f = goblin->compiled.factor_count(),
                a = goblin->compiled.action_count(),
                tf = goblin->compiled.target_factor_count();
      second.ids.assign(rows.ids.begin() + half, rows.ids.end());
      second.factors.assign(rows.factors.begin() + half * f,
                            rows.factors.end());
      second.current.assign(rows.current.begin() + half, rows.current.end());
      second.seconds.assign(rows.seconds.begin() + half * a,
                            rows.seconds.end());
      second.seeds.assign(rows.seeds.begin() + half, rows.seeds.end());
      second.personality.assign(rows.personality.begin() + half,
                                rows.personality.end());
      const uint32_t t0 = rows.offsets[half];
      second.offsets.clear();
      for (int r = half; r <= kRows; ++r) {
        second.offsets.push_back(rows.offsets[r] - t0);
      }
      second.target_factors.assign(rows.target_factors.begin() + t0 * tf,
                                   rows.target_factors.end());
      second.target_ids.assign(rows.target_ids.begin() + t0,
                               rows.target_ids.end());
      second.current_target.assign(rows.current_target.begin() + half,
                                   rows.current_target.end());
      Held held_second;
      const uint32_t h0 = held.offsets[half];
      held_second.offsets.clear();
      for (int r = half; r <= kRows; ++r) {
        held_second.offsets.push_back(held.offsets[r] - h0);
      }
      held_second.resources.assign(held.resources.begin() + h0,
                                   held.resources.end());
      held_second.target_ids.assign(held.target_ids.begin() + h0,
                                    held.target_ids.end());
      held_second.amounts.assign(held.amounts.begin() + h0, held.amounts.end());
      v1::AgentBlock* b = mixed.add_blocks();
      *b = Block(*goblin, second, v1::FACTOR_LAYOUT_ROWS);
      AddHeld(held_second, b);
      const v1::DecideResponse got = Run(mixed);
      ASSERT_FALSE(got.blocks(0).has_error())
          << got.blocks(0).error().message();
      for (int r = 0; r < kRows; ++r) {
        const v1::Decision& w = want.decisions(r);
        const bool in_block = r >= half;
        const int action = in_block ? got.blocks(0).action_index(r - half)
                                    : got.compact().action_index(r);
        const float score =
            in_block ? got.blocks(0).score(r - half) : got.compact().score(r);
        const char flags = in_block ? got.blocks(0).flags()[r - half]
                                    : got.compact().flags()[r];
        EXPECT_EQ(action, w.action_index()) << "mixed row " << r;
        EXPECT_EQ(Bits(score), Bits(w.score())) << "mixed row " << r;
        EXPECT_EQ((flags & v1::COMPACT_FLAG_DENIED) != 0,
                  w.coordination().has_denied())
            << "mixed row " << r;
      }
      ASSERT_EQ(got.pools_size(), want.pools_size());
      for (int p = 0; p < want.pools_size(); ++p) {
        EXPECT_EQ(got.pools(p).SerializeAsString(),
                  want.pools(p).SerializeAsString())
            << got.pools(p).DebugString() << "want\n"
            << want.pools(p).DebugString();
      }
    }
    for (const v1::DecideResponse& got : answers) {
      const v1::DecisionBlock& b = got.blocks(0);
      ASSERT_FALSE(b.has_error()) << b.error().message();
      ASSERT_EQ(b.full_size(), 0);
      ASSERT_EQ(b.grant_offsets_size(), kRows + 1);
      EXPECT_EQ(b.grant_offsets(kRows), b.grant_resources_size());
      for (int r = 0; r < kRows; ++r) {
        SCOPED_TRACE(absl::StrCat("row ", r));
        const v1::Decision& w = want.decisions(r);
        ASSERT_FALSE(w.has_error()) << w.error().message();
        EXPECT_EQ(b.action_index(r), w.action_index());
        EXPECT_EQ(b.target_index(r),
                  w.target_id().empty()
                      ? -1
                      : static_cast<int>(
                            std::find_if(snapshots.agents(r).targets().begin(),
                                         snapshots.agents(r).targets().end(),
                                         [&](const v1::TargetSnapshot& t) {
                                           return t.target_id() ==
                                                  w.target_id();
                                         }) -
                            snapshots.agents(r).targets().begin()));
        EXPECT_EQ(Bits(b.score(r)), Bits(w.score()));
        EXPECT_EQ((b.flags()[r] & v1::COMPACT_FLAG_SWITCHED) != 0,
                  w.switched());
        EXPECT_EQ((b.flags()[r] & v1::COMPACT_FLAG_FALLBACK) != 0,
                  w.fallback());
        EXPECT_EQ((b.flags()[r] & v1::COMPACT_FLAG_DENIED) != 0,
                  w.coordination().has_denied());
        const auto& g = w.coordination().granted();
        ASSERT_EQ(b.grant_offsets(r + 1) - b.grant_offsets(r),
                  static_cast<uint32_t>(g.size()));
        for (int k = 0; k < g.size(); ++k) {
          const uint32_t x = b.grant_offsets(r) + k;
          EXPECT_EQ(goblin->compiled.resources()[b.grant_resources(x)].name,
                    g[k].resource());
          EXPECT_EQ(std::to_string(b.grant_target_ids(x)), g[k].target_id());
          EXPECT_EQ(static_cast<int>(b.grant_amounts(x)), g[k].amount());
          kept += g[k].kept();
        }
        denied += w.coordination().has_denied();
        granted += g.size();
      }
      ASSERT_EQ(got.pools_size(), want.pools_size());
      for (int p = 0; p < want.pools_size(); ++p) {
        EXPECT_EQ(got.pools(p).SerializeAsString(),
                  want.pools(p).SerializeAsString());
      }
    }
    held = GrantsAsHeld(answers[0].blocks(0));
    for (int r = 0; r < kRows; ++r) {
      rows.current[r] = answers[0].blocks(0).action_index(r);
      rows.current_target[r] = answers[0].blocks(0).target_index(r);
    }
  }
  // The rows competed: some were denied, some kept what they held.
  EXPECT_GT(denied, 0);
  EXPECT_GT(granted, 0);
  EXPECT_GT(kept, 0);
}

// A held row explained: its allocated decision, the scoring's explanation
// and its Coordination, byte for byte as its snapshot's in the full form.
TEST_F(BlocksTest, ExplainedCoordinatedRowsCarryTheirCoordination) {
  const auto goblin = catalog_.Find("arena_goblin");
  ASSERT_NE(goblin, nullptr);
  constexpr int kRows = 40;
  const Rows rows = GoblinRows(*goblin, kRows, 9);
  const Held held = RandomHeld(kRows, 5);
  for (v1::Explain explain : {v1::EXPLAIN_TOP, v1::EXPLAIN_FULL}) {
    v1::DecideRequest snapshots;
    snapshots.set_explain(explain);
    for (int r = 0; r < kRows; ++r) {
      v1::AgentSnapshot* s = snapshots.add_agents();
      *s = Snapshot(*goblin, rows, r);
      AddHeld(held, r, s);
    }
    const v1::DecideResponse want = Run(snapshots);
    v1::DecideRequest request;
    request.set_explain(explain);
    v1::AgentBlock* b = request.add_blocks();
    *b = Block(*goblin, rows, v1::FACTOR_LAYOUT_COLUMNS);
    AddHeld(held, b);
    for (uint32_t r = 0; r < kRows; ++r) b->add_explain_rows(r);
    const v1::DecisionBlock got = Run(request).blocks(0);
    ASSERT_EQ(got.full_size(), kRows);
    int denied = 0;
    for (int r = 0; r < kRows; ++r) {
      v1::Decision w = want.decisions(r);
      w.clear_decision_id();
      EXPECT_EQ(got.full(r).decision().SerializeAsString(),
                w.SerializeAsString())
          << "row " << r << "\n"
          << got.full(r).decision().DebugString() << "want\n"
          << w.DebugString();
      denied += w.coordination().has_denied();
    }
    EXPECT_GT(denied, 0);
  }
}

// Held columns of the wrong shape refuse the block; a holding that cannot
// be read costs only its row.
TEST_F(BlocksTest, HeldColumnsNameWhatIsWrong) {
  const auto goblin = catalog_.Find("arena_goblin");
  ASSERT_NE(goblin, nullptr);
  const Rows rows = GoblinRows(*goblin, 6, 3);
  Held held;
  held.offsets = {0, 1, 1, 2, 2, 2, 3};
  held.resources = {0, 0, 0};
  held.target_ids = {7'000'000'001ull, 7'000'000'002ull, 7'000'000'003ull};
  const v1::AgentBlock good = [&] {
    v1::AgentBlock b = Block(*goblin, rows, v1::FACTOR_LAYOUT_ROWS);
    AddHeld(held, &b);
    return b;
  }();
  const std::vector<Refusal> refused = {
      {"offsets one short",
       [](v1::AgentBlock* b) { b->mutable_held_offsets()->RemoveLast(); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].held_offsets: has 6 values for 6 rows"},
      {"offsets end early", [](v1::AgentBlock* b) { b->add_held_resources(0); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].held_offsets: ends at 3, but held_resources has 4"},
      {"holdings without offsets",
       [](v1::AgentBlock* b) { b->clear_held_offsets(); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].held_offsets: is empty, but held_resources is not"},
      {"a target id too many",
       [](v1::AgentBlock* b) { b->add_held_target_ids(1); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].held_target_ids: has 4 values for 3 held_resources"},
      {"an amount too few", [](v1::AgentBlock* b) { b->add_held_amounts(1); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].held_amounts: has 1 values for 3 held_resources"},
      {"targets without ids", [](v1::AgentBlock* b) { b->clear_target_ids(); },
       absl::StatusCode::kInvalidArgument,
       "blocks[0].target_ids: is empty, but arena_goblin has per-target "
       "resources"},
  };
  ExpectRefused(good, refused);
  // Row 2's holding names a resource the set lacks; row 0's runs past the
  // holdings, row 1's runs backwards: only they fail.
  v1::DecideRequest request;
  v1::AgentBlock* b = request.add_blocks();
  *b = good;
  b->set_held_resources(1, 4);
  b->set_held_offsets(1, 9);
  const v1::DecisionBlock got = Run(request).blocks(0);
  EXPECT_THAT(RowErrors(got),
              ::testing::ElementsAre(
                  "0 blocks[0].rows[0].held_offsets: out of range: the row's "
                  "holdings end at 9, the block has 3",
                  "1 blocks[0].rows[1].held_offsets: out of order: the row's "
                  "holdings would run from 9 back to 1",
                  "2 blocks[0].rows[2].held_resources[1]: resource 4 is out "
                  "of range: arena_goblin declares 1"));
  EXPECT_EQ(got.grant_offsets_size(), 7);
  EXPECT_EQ(got.grant_offsets(0), 0u);
  EXPECT_EQ(got.grant_offsets(1), 0u);  // failed rows: nothing granted
  // Holdings of a per-target resource need their target ids.
  v1::DecideRequest no_ids;
  *no_ids.add_blocks() = good;
  no_ids.mutable_blocks(0)->clear_held_target_ids();
  EXPECT_THAT(RowErrors(Run(no_ids).blocks(0)),
              ::testing::ElementsAre(
                  StartsWith("0 blocks[0].rows[0].held_target_ids: is empty, "
                             "but attack_token is per target"),
                  StartsWith("2 blocks[0].rows[2].held_target_ids"),
                  StartsWith("5 blocks[0].rows[5].held_target_ids")));
}

// Sees what the service's recorder sees: every row once, at its index
// after the snapshots (a block's rows in one call), and for a row it asks
// for, the snapshot that the decision log keeps.
class Watcher final : public BatchObserver {
 public:
  bool WantsMessage(int i) override { return i % 3 == 0; }
  void OnDecided(int i, const LoadedSet&, const v1::AgentSnapshot& agent,
                 const engine::AgentInput&,
                 const engine::BatchDecision& decision,
                 v1::Decision* out) override {
    decided.push_back(i);
    if (out != nullptr) {
      logged.push_back({agent, *out});
      EXPECT_EQ(out->action_index(), decision.action);
    }
  }
  void OnDecidedRows(int first, absl::Span<const int> rows, const LoadedSet&,
                     absl::Span<const int32_t> /*current_action*/,
                     absl::Span<const engine::BatchDecision> decisions,
                     absl::Span<const absl::Status> errors) override {
    ASSERT_EQ(decisions.size(), rows.size());
    ASSERT_EQ(errors.size(), rows.size());
    for (size_t g = 0; g < rows.size(); ++g) {
      if (errors[g].ok()) decided.push_back(first + rows[g]);
    }
    ++row_reports;
  }
  void OnRowMessage(int i, const LoadedSet& set, const v1::AgentSnapshot& agent,
                    const engine::AgentInput& input,
                    const engine::BatchDecision& decision,
                    v1::Decision* out) override {
    EXPECT_NE(std::find(decided.begin(), decided.end(), i), decided.end());
    EXPECT_EQ(input.factors.size(), set.compiled.factors().size());
    logged.push_back({agent, *out});
    EXPECT_EQ(out->action_index(), decision.action);
  }
  void OnVetoes(const LoadedSet&, absl::Span<const uint32_t>,
                uint32_t) override {
    ++veto_reports;
  }
  void OnFailed(int i, const LoadedSet*, const v1::AgentSnapshot&,
                const absl::Status&) override {
    failed.push_back(i);
  }
  void OnTicked(int, const LoadedSet&, const v1::AgentSnapshot&,
                const engine::AgentInput&, const engine::TreeTick&,
                v1::Decision*) override {}

  std::vector<int> decided, failed;
  std::vector<std::pair<v1::AgentSnapshot, v1::Decision>> logged;
  int veto_reports = 0, row_reports = 0;
};

// Row-major, and factor-major (decided as its columns, no input per row).
TEST_F(BlocksTest, ObserverSeesEveryRowAndItsSnapshotReplaysIt) {
  for (auto layout : {v1::FACTOR_LAYOUT_ROWS, v1::FACTOR_LAYOUT_COLUMNS}) {
    SCOPED_TRACE(layout);
    ExpectObserverSeesEveryRow(layout);
  }
}

void BlocksTest::ExpectObserverSeesEveryRow(v1::FactorLayout layout) {
  const Rows rows = RandomRows(*mage_, 10, 3);
  v1::DecideRequest request;
  *request.add_agents() = Snapshot(*mage_, rows, 0);  // index 0
  v1::AgentBlock* refused = request.add_blocks();     // indexes 1-10
  *refused = Block(*mage_, rows, v1::FACTOR_LAYOUT_ROWS);
  refused->set_behaviour_set("nope");
  *request.add_blocks() = Block(*mage_, rows, layout);
  request.mutable_blocks(1)->set_current_action(2, -7);  // index 13 fails
  Watcher watcher;
  Run(request, &watcher);
  std::vector<int> decided = {0};
  for (int i = 11; i <= 20; ++i) {
    if (i != 13) decided.push_back(i);
  }
  EXPECT_EQ(watcher.decided, decided);
  std::vector<int> failed;
  for (int i = 1; i <= 10; ++i) failed.push_back(i);
  failed.push_back(13);
  EXPECT_EQ(watcher.failed, failed);
  EXPECT_EQ(watcher.veto_reports, 2);  // the snapshots' set, the block
  EXPECT_EQ(watcher.row_reports, 1);   // the block's rows, at once
  // Rows 12, 15, 18 (and the snapshot, 0) were asked for: their snapshots
  // decide as the rows did.
  ASSERT_EQ(watcher.logged.size(), 4u);
  for (size_t k = 1; k < watcher.logged.size(); ++k) {
    const auto& [snapshot, decision] = watcher.logged[k];
    EXPECT_EQ(snapshot.agent_id(), std::to_string(rows.ids[3 * k - 2])) << k;
    v1::DecideRequest again;
    *again.add_agents() = snapshot;
    v1::DecideResponse replayed;
    DecideBatch(catalog_, again, &replayed);
    EXPECT_EQ(replayed.decisions(0).action(), decision.action());
    EXPECT_EQ(Bits(replayed.decisions(0).score()), Bits(decision.score()));
  }
}

// A row-major block with no factors at all (an empty column reads as no
// data, not as factor-major columns): every row fails on its factors, flat
// set or tree.
TEST_F(BlocksTest, ARowMajorBlockWithoutFactorsFailsEachRow) {
  for (const char* name : {"arena_mage", "guard_tree"}) {
    SCOPED_TRACE(name);
    v1::DecideRequest request;
    v1::AgentBlock* b = request.add_blocks();
    b->set_behaviour_set(name);
    b->add_agent_ids(4);
    b->add_agent_ids(5);
    const v1::DecisionBlock got = Run(request).blocks(0);
    ASSERT_FALSE(got.has_error()) << got.error().message();
    EXPECT_THAT(RowErrors(got),
                ::testing::ElementsAre(
                    StartsWith("0 blocks[0].rows[0].factors: the column has 0 "
                               "values"),
                    StartsWith("1 blocks[0].rows[1].factors: the column has 0 "
                               "values")));
  }
}

// The request fuzzer's JSON seeds (its first byte chooses the format: odd
// for JSON) are requests, each with blocks decided: a seed that does not
// parse would only ever test the parser's error path.
TEST_F(BlocksTest, TheFuzzersJsonSeedsAreRequests) {
  int seeds = 0, with_blocks = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           "tests/fuzz/corpus/decide_request_fuzzer")) {
    if (e.path().string().find(".json.seed") == std::string::npos) continue;
    SCOPED_TRACE(e.path().string());
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text[0] % 2, 1) << "the first byte must be odd (JSON)";
    v1::DecideRequest request;
    ASSERT_THAT(loader::ReadMessageOrError(absl::string_view(text).substr(1),
                                           e.path().string(), &request),
                IsOk());
    ++seeds;
    if (request.blocks_size() == 0) continue;
    ++with_blocks;
    const v1::DecideResponse response = Run(request);
    for (const v1::DecisionBlock& b : response.blocks()) {
      EXPECT_TRUE(b.has_error() || b.action_index_size() > 0);
    }
  }
  EXPECT_GE(seeds, 4);
  EXPECT_GE(with_blocks, 3);
}

}  // namespace
}  // namespace utilityd::codec
