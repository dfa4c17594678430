// Many streams for a long time against one real utilityd: 1,000 concurrent
// DecideStream calls, each sending a batch a second for 60 s, must all be
// served with memory that stays flat; a client that stops reading must be
// stopped by flow control rather than buffered without bound. Prints the
// figures (resident size idle, per idle stream, under load).
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/sanitizers.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd {
namespace {

using ::utilityd::testing::IsOk;
using ::utilityd::testing::UtilitydProcess;
using ::utilityd::testing::WaitFor;

constexpr int kStreams = 1000;
constexpr int kChannels = 10;  // game servers, each with its connection
constexpr absl::Duration kSoak = absl::Seconds(60);

// Resident set size of a process in bytes, from /proc (0 if unreadable).
double ResidentBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  }
  return 0;
}

double MiB(double bytes) { return bytes / (1024.0 * 1024.0); }

// The bounds docs/RELIABILITY.md states: under steady load the resident
// size stays within 4 MiB from 10 s to the end (measured: +0.1 MiB); a
// client that never reads gets 4..32 MiB buffered before flow control
// holds it (measured: 8.3 MiB usually; 20.2 MiB once in CI, where gRPC's
// bandwidth-delay probe had grown the window).
constexpr double kFlatBound = 4.0 * 1024 * 1024;
constexpr double kWindowLow = 4.0 * 1024 * 1024;
constexpr double kWindowHigh = 32.0 * 1024 * 1024;

// The resident size once it has stopped moving: two readings 100 ms apart
// within 64 KiB (or the last reading after 5 s).
double SettledResidentBytes(pid_t pid) {
  double last = ResidentBytes(pid);
  WaitFor(
      [&] {
        const double now = ResidentBytes(pid);
        const bool settled = std::abs(now - last) < 64 * 1024;
        last = now;
        return settled;
      },
      absl::Seconds(5), absl::Milliseconds(100));
  return last;
}

v1::DecideRequest SmallBatch(int stream, int i) {
  v1::DecideRequest batch;
  batch.set_request_id(i + 1);
  for (int a = 0; a < 4; ++a) {
    v1::AgentSnapshot* agent = batch.add_agents();
    agent->set_agent_id(absl::StrCat("st", stream, "-a", a));
    agent->set_behaviour_set("eat_hide_wander");
    for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) agent->add_factors(v);
  }
  return batch;
}

// One stream on gRPC's callback API: no thread per stream. A driver thread
// writes a batch when the previous one has been answered.
class PacedStream
    : public grpc::ClientBidiReactor<v1::DecideRequest, v1::DecideResponse> {
 public:
  PacedStream(v1::DecisionService::Stub* stub, int index) : index_(index) {
    stub->async()->DecideStream(&context_, this);
    StartRead(&response_);
    StartCall();
  }

  // Sends the next batch unless one is still unanswered.
  bool MaybeSend() {
    if (awaiting_.exchange(true)) return false;
    request_ = SmallBatch(index_, sent_++);
    StartWrite(&request_);
    return true;
  }
  void Finish() { StartWritesDone(); }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    if (response_.request_id() != static_cast<uint64_t>(sent_) ||
        response_.decisions_size() != 4 ||
        response_.decisions(0).action() != "eat") {
      ++wrong_;
    }
    ++answered_;
    awaiting_ = false;
    StartRead(&response_);
  }
  void OnDone(const grpc::Status& s) override {
    absl::MutexLock lock(&mu_);
    status_ = s;
    done_ = true;
  }
  grpc::Status Await(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&done_), timeout);
    if (!done_) {
      context_.TryCancel();
      mu_.Await(absl::Condition(&done_));
    }
    return status_;
  }

  int sent() const { return sent_; }
  int answered() const { return answered_; }
  int wrong() const { return wrong_; }

 private:
  const int index_;
  grpc::ClientContext context_;
  v1::DecideRequest request_;
  v1::DecideResponse response_;
  std::atomic<bool> awaiting_{false};
  std::atomic<int> sent_{0}, answered_{0}, wrong_{0};
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<v1::DecisionService::Stub> NewStub(const std::string& address,
                                                   int channel) {
  grpc::ChannelArguments args;
  // A connection of its own, not one shared through the subchannel pool.
  args.SetInt("utilityd.test.channel", channel);
  return v1::DecisionService::NewStub(grpc::CreateCustomChannel(
      address, grpc::InsecureChannelCredentials(), args));
}

TEST(SoakTest, ThousandStreamsForAMinuteWithFlatMemory) {
  UtilitydProcess server({"--config_dir=examples/behaviour_sets"});
  ASSERT_THAT(server.StartServing(), IsOk());
  const double idle = SettledResidentBytes(server.pid());

  std::vector<std::unique_ptr<v1::DecisionService::Stub>> stubs;
  for (int c = 0; c < kChannels; ++c)
    stubs.push_back(NewStub(server.address(), c));
  std::vector<std::unique_ptr<PacedStream>> streams;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(
        std::make_unique<PacedStream>(stubs[i % kChannels].get(), i));
  }
  // Every stream is open (the server counts them) before any batch is
  // sent: the resident size then is the idle-stream cost.
  ASSERT_TRUE(WaitFor(
      [&] { return server.MetricTotal("utilityd_active_streams") == kStreams; },
      absl::Seconds(30), absl::Milliseconds(50)))
      << "not every stream opened";
  const double open_idle = SettledResidentBytes(server.pid());

  const absl::Time start = absl::Now();
  double at_10s = 0, peak = 0;
  int rounds = 0;
  while (absl::Now() - start < kSoak) {
    const absl::Time round = absl::Now();
    for (auto& s : streams) s->MaybeSend();
    ++rounds;
    const double rss = ResidentBytes(server.pid());
    peak = std::max(peak, rss);
    if (at_10s == 0 && absl::Now() - start >= absl::Seconds(10)) at_10s = rss;
    absl::SleepFor(round + absl::Seconds(1) - absl::Now());
  }
  // The last round's answers.
  EXPECT_TRUE(WaitFor(
      [&] {
        for (auto& s : streams) {
          if (s->answered() < s->sent()) return false;
        }
        return true;
      },
      absl::Seconds(30)));
  const double at_end = ResidentBytes(server.pid());

  int sent = 0, answered = 0, wrong = 0, failed = 0;
  for (auto& s : streams) s->Finish();
  for (auto& s : streams) {
    grpc::Status status = s->Await(absl::Seconds(30));
    if (!status.ok()) ++failed;
    sent += s->sent();
    answered += s->answered();
    wrong += s->wrong();
  }
  std::cout << kStreams << " streams on " << kChannels << " connections, "
            << rounds << " rounds in " << absl::FormatDuration(kSoak) << ": "
            << sent << " batches sent, " << answered << " answered, " << wrong
            << " wrong, " << failed << " streams failed\n"
            << "server resident size: idle " << MiB(idle) << " MiB; "
            << kStreams << " open idle streams " << MiB(open_idle) << " MiB ("
            << (open_idle - idle) / kStreams / 1024
            << " KiB per stream); under load at 10 s " << MiB(at_10s)
            << " MiB, peak " << MiB(peak) << " MiB, at the end " << MiB(at_end)
            << " MiB\n";
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(answered, sent) << "every batch sent was answered";
  // Every stream was served, most of the time (a loaded machine may skip a
  // round's send for a stream still awaiting its answer).
  EXPECT_GE(sent, kStreams * rounds * 9 / 10);
  // Bounded: no growth with time once warm. (Not under AddressSanitizer,
  // whose quarantine holds freed memory back by design.)
#ifndef UTILITYD_TESTING_ASAN
  EXPECT_LT(at_end - at_10s, kFlatBound)
      << "resident size grew under steady load";
#endif
  EXPECT_EQ(server.Health(), "SERVING");
}

TEST(SoakTest, ClientThatStopsReadingIsHeldByFlowControl) {
  UtilitydProcess server({"--config_dir=examples/behaviour_sets"});
  ASSERT_THAT(server.StartServing(), IsOk());
  const double before = ResidentBytes(server.pid());
  auto stub = NewStub(server.address(), 0);
  grpc::ClientContext context;
  auto stream = stub->DecideStream(&context);
  v1::DecideRequest big;
  for (int i = 0; i < 256; ++i) *big.add_agents() = SmallBatch(i, 0).agents(0);
  const size_t batch_bytes = big.ByteSizeLong();
  // Write without ever reading, on a thread: writes block once the server
  // stops reading this stream.
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; i < 20000; ++i) {
      big.set_request_id(i + 1);
      if (!stream->Write(big)) break;
      ++written;
    }
  });
  int last = -1;
  for (int i = 0; i < 50 && written.load() != last; ++i) {
    last = written.load();
    absl::SleepFor(absl::Milliseconds(200));  // until writes stop moving
  }
  const int held_at = written.load();
  const double during = ResidentBytes(server.pid());
  std::cout << "a client that never reads: its writes stopped after " << held_at
            << " batches (" << MiB(held_at * batch_bytes)
            << " MiB); server resident size " << MiB(before) << " -> "
            << MiB(during) << " MiB\n";
  EXPECT_LT(held_at, 20000) << "the writer was never held back";
  // What a non-reading client can make the server buffer is gRPC's
  // flow-control window: about 8 MiB to start with, and more once gRPC's
  // bandwidth-delay probe has grown it.
  EXPECT_GT(held_at * batch_bytes, kWindowLow) << "held back too early";
  EXPECT_LT(held_at * batch_bytes, kWindowHigh) << "held back too late";
#ifndef UTILITYD_TESTING_ASAN
  EXPECT_LT(during - before, 64.0 * 1024 * 1024);
#endif
  // Others are still served.
  auto other = NewStub(server.address(), 1);
  grpc::ClientContext unary;
  v1::DecideResponse response;
  EXPECT_TRUE(other->Decide(&unary, SmallBatch(0, 0), &response).ok());
  context.TryCancel();
  writer.join();
  (void)stream->Finish();
}

}  // namespace
}  // namespace utilityd
