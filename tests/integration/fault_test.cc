// Replicas fail while a game server streams: three real utilityd processes
// behind the SDK's round robin. Every submitted batch must get exactly one
// successful result — none lost, none duplicated — whatever happens to one
// replica. Bounded in time and count.
#include <signal.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/client/client.h"

namespace utilityd {
namespace {

using ::utilityd::testing::IsOk;
using ::utilityd::testing::UtilitydProcess;

constexpr int kReplicas = 3;
constexpr int kStreams = 3;

v1::DecideRequest Batch(int stream, int i) {
  v1::DecideRequest batch;
  for (int a = 0; a < 8; ++a) {
    v1::AgentSnapshot* agent = batch.add_agents();
    agent->set_agent_id(absl::StrCat("s", stream, "-b", i, "-a", a));
    agent->set_behaviour_set("eat_hide_wander");
    for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) agent->add_factors(v);
  }
  return batch;
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> addresses;
    for (int r = 0; r < kReplicas; ++r) {
      replicas_.push_back(std::make_unique<UtilitydProcess>(
          std::vector<std::string>{"--config_dir=examples/behaviour_sets",
                                   "--drain_delay=1s", "--drain_grace=5s"}));
      ASSERT_THAT(replicas_.back()->Start(), IsOk());
      ASSERT_TRUE(replicas_.back()->WaitServing());
      addresses.push_back(replicas_.back()->address());
    }
    client::ClientOptions options;
    options.target = absl::StrJoin(addresses, ",");  // round robin over all
    auto c = client::Client::Connect(options);
    ASSERT_THAT(c, IsOk());
    client_ = *std::move(c);
  }

  // Streams `batches` per stream at a steady pace while `fault` runs on
  // another thread; checks every batch got exactly one OK result and
  // returns the slowest round trip (submit to result), measured as results
  // arrive by one consumer thread per stream.
  absl::Duration StreamThrough(int batches, std::function<void()> fault) {
    struct Sent {
      std::future<client::BatchResult> result;
      absl::Time at;
    };
    struct PerStream {
      std::unique_ptr<client::DecisionStream> stream;
      std::vector<Sent> sent;
      std::atomic<int> submitted{0};
      absl::Duration slowest;
      std::thread consumer;
    };
    std::vector<PerStream> per(kStreams);
    for (int s = 0; s < kStreams; ++s) {
      PerStream& p = per[s];
      p.stream = client_->OpenStream({.max_in_flight = 4});
      p.sent.resize(batches);
      p.consumer = std::thread([&p, s, batches] {
        std::set<uint64_t> ids;
        for (int i = 0; i < batches; ++i) {
          while (p.submitted.load() <= i)
            absl::SleepFor(absl::Microseconds(200));
          Sent& sent = p.sent[i];
          if (sent.result.wait_for(std::chrono::seconds(30)) !=
              std::future_status::ready) {
            ADD_FAILURE() << "stream " << s << " batch " << i
                          << " got no result";
            return;
          }
          client::BatchResult r = sent.result.get();
          p.slowest = std::max(p.slowest, absl::Now() - sent.at);
          EXPECT_THAT(r.status, IsOk()) << "stream " << s << " batch " << i;
          EXPECT_TRUE(ids.insert(r.request_id).second) << "duplicate";
          if (r.response.decisions_size() != 8) {
            ADD_FAILURE() << "expected 8 decisions";
            continue;
          }
          EXPECT_EQ(r.response.decisions(0).agent_id(),
                    absl::StrCat("s", s, "-b", i, "-a0"));
          EXPECT_EQ(r.response.decisions(0).action(), "eat");
        }
      });
    }
    std::thread faulter(std::move(fault));
    for (int i = 0; i < batches; ++i) {
      for (int s = 0; s < kStreams; ++s) {
        PerStream& p = per[s];
        p.sent[i].at = absl::Now();
        p.sent[i].result = p.stream->Submit(Batch(s, i));
        p.submitted.store(i + 1);
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    faulter.join();
    absl::Duration slowest;
    for (PerStream& p : per) {
      p.consumer.join();
      slowest = std::max(slowest, p.slowest);
      p.stream->Close();
    }
    return slowest;
  }

  std::vector<std::unique_ptr<UtilitydProcess>> replicas_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(FaultTest, KillNineOneReplicaMidStreamThenRestartIt) {
  const int port = replicas_[1]->port();
  const absl::Duration slowest = StreamThrough(300, [&] {
    absl::SleepFor(absl::Seconds(1));
    replicas_[1]->Signal(SIGKILL);
    replicas_[1]->Wait();
    absl::SleepFor(absl::Seconds(1));
    replicas_[1] = std::make_unique<UtilitydProcess>(
        std::vector<std::string>{"--config_dir=examples/behaviour_sets"}, port);
    EXPECT_THAT(replicas_[1]->Start(), IsOk());
  });
  std::cout << "kill -9 of one of three replicas: slowest batch round trip "
            << absl::FormatDuration(slowest) << "\n";
  EXPECT_LT(slowest, absl::Seconds(10)) << "recovery is bounded";
}

TEST_F(FaultTest, SigtermOneReplicaUnderLoadFailsNoBatch) {
  const absl::Duration slowest = StreamThrough(300, [&] {
    absl::SleepFor(absl::Seconds(1));
    replicas_[0]->Signal(SIGTERM);
    EXPECT_EQ(replicas_[0]->Wait(), 0);
  });
  std::cout << "SIGTERM of one of three replicas: slowest batch round trip "
            << absl::FormatDuration(slowest) << "\n";
  EXPECT_THAT(replicas_[0]->Log(), ::testing::HasSubstr("event=draining"));
}

}  // namespace
}  // namespace utilityd
