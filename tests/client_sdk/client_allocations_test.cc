// Heap allocations on the game's thread per streamed block batch: none
// through Borrow, Send, Wait and Return once the stream's batches are warm
// (the SDK's promise in docs/CLIENTS.md, "The game thread"). This binary
// counts the allocations the test's own thread makes
// (tests/testing/allocation_counter.h); gRPC's and the stream worker's
// threads are not counted.
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/allocation_counter.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/client/block.h"
#include "utilityd/client/client.h"

namespace utilityd::client {
namespace {

using ::utilityd::testing::IsOk;
using ::utilityd::testing::UtilitydProcess;

// An ECS chunk of foragers (eat_hide_wander: 4 factors), factor-major.
struct Chunk {
  explicit Chunk(int rows) : ids(rows), factors(rows * 4), next(rows) {
    for (int r = 0; r < rows; ++r) {
      ids[r] = 1000 + r;
      factors[0 * rows + r] = (r % 10) / 10.0f;  // hunger
      factors[1 * rows + r] = (r % 7) / 10.0f;   // danger
      factors[2 * rows + r] = r % 25;            // food_distance
      factors[3 * rows + r] = r % 20;            // idle_time
    }
  }
  BlockColumns Columns() const {
    return {.behaviour_set = "eat_hide_wander",
            .agent_ids = ids,
            .factors = factors,
            .layout = v1::FACTOR_LAYOUT_COLUMNS};
  }
  std::vector<uint64_t> ids;
  std::vector<float> factors;
  std::vector<int32_t> next;
};

class ClientAllocationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_THAT(server_.StartServing(), IsOk());
    auto client = Client::Connect({.target = server_.address()});
    ASSERT_THAT(client, IsOk());
    client_ = *std::move(client);
  }

  // One tick of two chunks in one batch, on the game's thread; the
  // allocations it made (counted only while `count`).
  long Tick(DecisionStream& stream, bool count) {
    if (count) ::utilityd::testing::StartCountingAllocations();
    StreamBatch* b = stream.Borrow();
    for (Chunk* c : {&a_, &b_}) {
      WriteBlock(c->Columns(), b->request().add_blocks());
    }
    stream.Send(b);
    const BatchResult& r = stream.Wait(b);
    bool ok = r.status.ok() && r.response.blocks_size() == 2;
    if (ok) {
      for (int i = 0; i < 2; ++i) {
        Chunk& c = i == 0 ? a_ : b_;
        ok &= ReadBlock(r.response.blocks(i), static_cast<int>(c.ids.size()),
                        {.action_index = absl::MakeSpan(c.next)})
                  .ok();
      }
    }
    stream.Return(b);
    const long allocations =
        count ? ::utilityd::testing::StopCountingAllocations() : 0;
    EXPECT_TRUE(ok) << r.status;
    return allocations;
  }

  UtilitydProcess server_{{"--config_dir=examples/behaviour_sets"}};
  std::unique_ptr<Client> client_;
  Chunk a_{300}, b_{200};
};

TEST_F(ClientAllocationsTest, AWarmStreamAllocatesNothingOnTheGameThread) {
  std::unique_ptr<DecisionStream> stream = client_->OpenStream();
  for (int i = 0; i < 20; ++i) Tick(*stream, false);  // warms the batches
  long total = 0;
  for (int i = 0; i < 200; ++i) total += Tick(*stream, true);
  EXPECT_EQ(total, 0) << "allocations in 200 warm ticks";
  EXPECT_GT(a_.next[0] + a_.next[1], -2);  // decisions were read back

  // The counter counts: the same batch through Submit allocates (the
  // future's state, the request handed over).
  ::utilityd::testing::StartCountingAllocations();
  v1::DecideRequest request;
  WriteBlock(a_.Columns(), request.add_blocks());
  BatchResult r = stream->Submit(std::move(request)).get();
  const long submit = ::utilityd::testing::StopCountingAllocations();
  EXPECT_THAT(r.status, IsOk());
  EXPECT_GT(submit, 0);
  std::printf(
      "200 warm ticks through Borrow: %ld allocations; one Submit: %ld\n",
      total, submit);
}

}  // namespace
}  // namespace utilityd::client
