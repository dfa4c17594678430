// Replicas fail while a game server streams: three real utilityd processes
// behind the SDK's round robin. Every submitted batch must get exactly one
// successful result — none lost, none duplicated — whatever happens to one
// replica. Bounded in time and count.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/client/client.h"
#include "utilityd/loader/set_loader.h"

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

namespace utilityd {
namespace {

TEST(ReloadFaultTest, HundredReloadsAlternatingGoodAndBadUnderLoad) {
  testing::TempDir dir("utilityd_reloads");
  const std::string file = (dir.path() / "eat_hide_wander.yaml").string();
  std::string original;
  {
    std::ifstream in("examples/behaviour_sets/eat_hide_wander.yaml");
    std::stringstream s;
    s << in.rdbuf();
    original = s.str();
  }
  // Good variants differ in their commitment bonus; bad ones misname a
  // factor. The revisions a response may name are exactly the good ones'.
  auto good = [&](int i) {
    return absl::StrReplaceAll(
        original, {{"commitment_bonus: 0.2",
                    absl::StrCat("commitment_bonus: 0.2", i % 10)}});
  };
  const std::string bad =
      absl::StrReplaceAll(original, {{"factor: danger\n", "factor: dangr\n"}});
  std::set<std::string> good_revisions;
  for (int i = 0; i < 10; ++i) {
    auto set = loader::LoadSetText(good(i), "good.yaml");
    ASSERT_THAT(set, IsOk());
    good_revisions.insert((*set)->revision());
  }
  ASSERT_FALSE(loader::LoadSetText(bad, "bad.yaml").ok());
  std::ofstream(file) << good(0);

  UtilitydProcess server({"--config_dir=" + dir.path().string(),
                          "--reload_interval=1h"});  // SIGHUP only
  ASSERT_THAT(server.Start(), IsOk());
  ASSERT_TRUE(server.WaitServing());
  auto c = client::Client::Connect({.target = server.address()});
  ASSERT_THAT(c, IsOk());
  std::unique_ptr<client::DecisionStream> stream = (*c)->OpenStream();

  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, failed{0};
  std::set<std::string> seen;
  std::thread load([&] {
    for (int i = 0; !stop.load(); ++i) {
      v1::DecideRequest batch;
      v1::AgentSnapshot* a = batch.add_agents();
      a->set_agent_id("f");
      a->set_behaviour_set("eat_hide_wander");
      for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) a->add_factors(v);
      client::BatchResult r = stream->Submit(batch).get();
      if (!r.status.ok() || r.response.decisions(0).has_error()) {
        ++failed;
        continue;
      }
      seen.insert(r.response.decisions(0).revision());
      ++answered;
    }
  });
  int applied = 0;
  for (int i = 1; i <= 100; ++i) {
    std::ofstream(file, std::ios::trunc) << (i % 2 == 0 ? good(i / 2) : bad);
    server.Signal(SIGHUP);
    // Wait until the server has tried this version (one reload per SIGHUP).
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    const std::string marker =
        i % 2 == 0 ? "event=config_loaded" : "event=config_rejected";
    while (absl::Now() < deadline) {
      const std::string log = server.Log();
      size_t count = 0;
      for (size_t p = log.find(marker); p != std::string::npos;
           p = log.find(marker, p + 1)) {
        ++count;
      }
      // The first load at startup is one config_loaded too.
      if (static_cast<int>(count) >= (i % 2 == 0 ? i / 2 + 1 : (i + 1) / 2)) {
        ++applied;
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  stop = true;
  load.join();
  stream->Close();
  EXPECT_EQ(applied, 100) << "every reload was attempted";
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(answered.load(), 0);
  for (const std::string& r : seen) {
    EXPECT_TRUE(good_revisions.count(r)) << "revision " << r << " is not good";
  }
  std::cout << "100 reloads (50 rejected): " << answered.load()
            << " batches answered on " << seen.size() << " revisions, "
            << failed.load() << " failed\n";
}

}  // namespace
}  // namespace utilityd
