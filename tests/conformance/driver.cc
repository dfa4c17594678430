// The C++ SDK's driver for the client conformance suite
// (tests/conformance/conformance.py says the protocol): a fixed AI tick,
// B batches a tick over a stream or as unary calls, one JSON line per tick
// and per settled batch.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "utilityd/base/sync.h"
#include "utilityd/client/client.h"

ABSL_FLAG(std::string, target, "", "The replicas.");
ABSL_FLAG(int, agents, 64, "Agents in all.");
ABSL_FLAG(int, batches, 4, "Batches a tick (an agent is always in one).");
ABSL_FLAG(int, tick_ms, 100, "The AI tick.");
ABSL_FLAG(int, ticks, 60, "Ticks to run.");
ABSL_FLAG(std::string, mode, "stream", "stream or unary.");
ABSL_FLAG(bool, wait_ready, true,
          "false: the first batches go out before any replica was asked "
          "whether it serves.");

namespace utilityd::conformance {
namespace {

double NowMs() { return absl::ToUnixMicros(absl::Now()) / 1000.0; }

// stdout lines from several threads, whole.
utilityd::Mutex out_mu;
void Emit(const std::string& line) {
  utilityd::MutexLock lock(&out_mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string Quote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    out.push_back(c);
  }
  return out + "\"";
}

v1::DecideRequest Batch(int slot, int batches, int agents, int tick) {
  v1::DecideRequest request;
  for (int a = slot; a < agents; a += batches) {
    v1::AgentSnapshot* agent = request.add_agents();
    agent->set_agent_id(absl::StrCat("forager-", a));
    agent->set_behaviour_set("eat_hide_wander");
    auto& f = *agent->mutable_named_factors();
    f["hunger"] = static_cast<float>((a * 7 + tick) % 100) / 100.0f;
    f["danger"] = static_cast<float>((a * 3 + tick) % 50) / 100.0f;
    f["food_distance"] = static_cast<float>(a % 25);
    f["idle_time"] = static_cast<float>(tick % 20);
  }
  return request;
}

void Report(uint64_t id, int tick, int slot, double sent,
            const absl::Status& status, const client::CallInfo& info) {
  std::string line = absl::StrFormat(
      R"({"batch": %d, "tick": %d, "slot": %d, "sent": %.3f, "done": %.3f, )"
      R"("ok": %s, "attempts": %d, "replica": %s)",
      id, tick, slot, sent, NowMs(), status.ok() ? "true" : "false",
      info.attempts, Quote(info.replica));
  if (!status.ok())
    absl::StrAppend(&line, ", \"error\": ", Quote(status.ToString()));
  Emit(line + "}");
}

int Main() {
  client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  const int tick_ms = absl::GetFlag(FLAGS_tick_ms);
  options.ai_tick = absl::Milliseconds(tick_ms);
  auto connected = client::Client::Connect(options);
  if (!connected.ok()) {
    std::cerr << connected.status() << "\n";
    return 2;
  }
  std::unique_ptr<client::Client> client = std::move(*connected);
  if (absl::GetFlag(FLAGS_wait_ready) &&
      !client->WaitForReady(absl::Seconds(10))) {
    std::cerr << "no replica ready\n";
    return 2;
  }
  const int agents = absl::GetFlag(FLAGS_agents);
  const int batches = absl::GetFlag(FLAGS_batches);
  const int ticks = absl::GetFlag(FLAGS_ticks);
  const bool streamed = absl::GetFlag(FLAGS_mode) == "stream";
  // Warm the schema cache, as a game server does at start.
  if (!client->Schema("eat_hide_wander").ok()) {
    std::cerr << "no schema for eat_hide_wander\n";
    return 2;
  }

  struct Pending {
    uint64_t id;
    int tick, slot;
    double sent;
    std::future<client::BatchResult> result;
  };
  utilityd::Mutex mu;
  std::deque<Pending> pending;
  std::atomic<bool> done{false};
  std::unique_ptr<client::DecisionStream> stream;
  if (streamed) stream = client->OpenStream({.max_in_flight = 1024});
  // Settled futures are reported as they complete (polled every
  // millisecond), not in submission order.
  std::thread collector([&] {
    while (true) {
      // `done` is read before `pending`: once it is set, every batch is in
      // `pending`, so an empty one means all were reported. (Read after,
      // a last batch pushed between the two reads was never reported.)
      const bool finishing = done.load();
      std::vector<Pending> ready;
      bool empty;
      {
        utilityd::MutexLock lock(&mu);
        for (auto it = pending.begin(); it != pending.end();) {
          if (it->result.wait_for(std::chrono::seconds(0)) ==
              std::future_status::ready) {
            ready.push_back(std::move(*it));
            it = pending.erase(it);
          } else {
            ++it;
          }
        }
        empty = pending.empty();
      }
      for (Pending& p : ready) {
        client::BatchResult r = p.result.get();
        Report(p.id, p.tick, p.slot, p.sent, r.status, r.info);
      }
      if (empty && finishing) return;
      absl::SleepFor(absl::Milliseconds(1));
    }
  });

  const absl::Time start = absl::Now();
  uint64_t next_id = 1;
  for (int t = 0; t < ticks; ++t) {
    absl::SleepFor(start + absl::Milliseconds(t * tick_ms) - absl::Now());
    Emit(absl::StrFormat(R"({"tick": %d, "at": %.3f})", t, NowMs()));
    for (int s = 0; s < batches; ++s) {
      v1::DecideRequest request = Batch(s, batches, agents, t);
      const uint64_t id = next_id++;
      request.set_request_id(id);
      const double sent = NowMs();
      std::future<client::BatchResult> result;
      if (streamed) {
        result = stream->Submit(std::move(request));
      } else {
        result = std::async(std::launch::async, [&client, request, id] {
          client::CallInfo info;
          absl::StatusOr<v1::DecideResponse> r = client->Decide(request, &info);
          return client::BatchResult{
              id, r.status(), r.ok() ? *std::move(r) : v1::DecideResponse(),
              info};
        });
      }
      utilityd::MutexLock lock(&mu);
      pending.push_back({id, t, s, sent, std::move(result)});
    }
  }
  done = true;
  collector.join();
  if (stream) stream->Close();
  Emit(R"({"end": true})");
  return 0;
}

}  // namespace
}  // namespace utilityd::conformance

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return utilityd::conformance::Main();
}
