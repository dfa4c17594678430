// Heap allocations per batch on the block path: none of utilityd's own once
// the request and response messages and the thread's working memory are
// warm, as a stream reuses them (server/src/decision_service.cc). This
// binary counts (tests/testing/allocation_counter.h) every allocation made
// while a batch is decided.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/allocation_counter.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/codec/batch.h"

namespace utilityd::codec {
namespace {

using ::utilityd::testing::IsOk;

class BlockAllocationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<loader::Catalog> catalog =
        loader::LoadCatalog({"examples/behaviour_sets"});
    ASSERT_THAT(catalog, IsOk());
    catalog_ = *std::move(catalog);
  }

  // One block of `rows` agents of `set` with every column, a few rows
  // with NaN factors and clocks that say "never".
  v1::AgentBlock Block(const std::string& set, int rows,
                       v1::FactorLayout layout) {
    const loader::LoadedSet& s = *catalog_.Find(set);
    const int f = s.compiled.factor_count(), a = s.compiled.action_count();
    std::mt19937 rng(25);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    v1::AgentBlock b;
    b.set_behaviour_set(set);
    b.set_layout(layout);
    for (int r = 0; r < rows; ++r) {
      b.add_agent_ids(1000 + r);
      b.add_current_action(r % (a + 1) - 1);
      b.add_seeds(rng());
      for (int i = 0; i < a; ++i) {
        b.add_seconds_since_action(r % 3 == 0 ? std::nanf("") : 20 * unit(rng));
      }
    }
    for (int i = 0; i < rows * f; ++i) {
      const engine::FactorDefinition& d = s.compiled.factors()[i % f];
      b.add_factors(i % 97 == 3 ? std::nanf("")
                                : static_cast<float>(d.min + (d.max - d.min) *
                                                                 unit(rng)));
    }
    return b;
  }

  // Allocations while deciding `request` into a reused response, after
  // two warm-up batches of the same request.
  long AllocationsPerBatch(const v1::DecideRequest& request) {
    v1::DecideResponse response;
    for (int warm = 0; warm < 2; ++warm) {
      response.Clear();
      DecideBatch(catalog_, request, &response);
    }
    response.Clear();
    ::utilityd::testing::StartCountingAllocations();
    DecideBatch(catalog_, request, &response);
    const long allocations = ::utilityd::testing::StopCountingAllocations();
    // Every row was answered, and decided: an answer that did nothing would
    // allocate nothing too.
    EXPECT_EQ(response.blocks_size(), request.blocks_size());
    for (int b = 0; b < response.blocks_size(); ++b) {
      const v1::DecisionBlock& got = response.blocks(b);
      EXPECT_FALSE(got.has_error()) << got.error().message();
      EXPECT_EQ(got.action_index_size(), request.blocks(b).agent_ids_size());
      EXPECT_GT(
          std::count_if(got.action_index().begin(), got.action_index().end(),
                        [](int a) { return a >= 0; }),
          got.action_index_size() / 2);
    }
    return allocations;
  }

  loader::Catalog catalog_;
};

TEST_F(BlockAllocationsTest, TheCounterSeesAllocations) {
  ::utilityd::testing::StartCountingAllocations();
  auto* v = new std::vector<int>(100);
  asm volatile("" : : "g"(v), "g"(v->data()) : "memory");  // both escape
  const long allocations = ::utilityd::testing::StopCountingAllocations();
  delete v;
  EXPECT_EQ(allocations, 2);  // the vector and its elements
}

TEST_F(BlockAllocationsTest, AWarmBlockBatchAllocatesNothing) {
  for (const char* set : {"arena_mage", "eat_hide_wander", "villager_needs"}) {
    for (v1::FactorLayout layout :
         {v1::FACTOR_LAYOUT_ROWS, v1::FACTOR_LAYOUT_COLUMNS}) {
      SCOPED_TRACE(::testing::Message() << set << " layout " << layout);
      v1::DecideRequest request;
      *request.add_blocks() = Block(set, 256, layout);
      *request.add_blocks() = Block(set, 1024, layout);
      EXPECT_EQ(AllocationsPerBatch(request), 0);
    }
  }
}

// The snapshot form for comparison: it builds a message per agent, so it
// allocates per batch; the figure is reported, not asserted.
TEST_F(BlockAllocationsTest, SnapshotsForComparison) {
  const loader::LoadedSet& mage = *catalog_.Find("arena_mage");
  v1::DecideRequest request;
  request.set_form(v1::DECISION_FORM_COMPACT);
  for (int r = 0; r < 256; ++r) {
    v1::AgentSnapshot* a = request.add_agents();
    a->set_agent_id(std::to_string(r));
    a->set_behaviour_set("arena_mage");
    for (const engine::FactorDefinition& d : mage.compiled.factors()) {
      a->add_factors(static_cast<float>(d.min));
    }
  }
  const long n = AllocationsPerBatch(request);
  RecordProperty("snapshot_allocations_per_batch_of_256", std::to_string(n));
  std::printf("snapshots, compact form, 256 agents: %ld allocations\n", n);
}

}  // namespace
}  // namespace utilityd::codec
