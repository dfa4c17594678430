// Load for make test-container's Kubernetes checks (container_test.sh,
// "kube"): a game server's traffic through the C++ SDK's round robin over
// the replicas (--target "addr:port,addr:port,..."), streams and unary
// calls, while the script removes a pod and brings it back. Counts every
// batch's answers and prints one JSON line:
//
//   {"submitted":N,"answered":N,"duplicates":0,"failed":0,"unary":N,
//    "unary_failed":0,"reconnects":N,"slowest_ms":N}
//
// Exits 0 only when every stream batch got exactly one OK answer with a
// decision for each agent, and every unary call succeeded (the SDK retries
// refused and unavailable calls on the next replica).
#include <atomic>
#include <cstdio>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "utilityd/client/client.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051",
          "the replicas: addr:port, comma-separated");
ABSL_FLAG(int, streams, 3, "streams, each submitting batches in turn");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(20), "how long to load");
ABSL_FLAG(absl::Duration, interval, absl::Milliseconds(20),
          "pause between a stream's batches, and between unary calls");

namespace {

using utilityd::client::BatchResult;
using utilityd::v1::DecideRequest;

constexpr int kAgents = 16;

DecideRequest Batch(int stream, int i) {
  DecideRequest batch;
  for (int a = 0; a < kAgents; ++a) {
    auto* agent = batch.add_agents();
    agent->set_agent_id(absl::StrCat("s", stream, "-b", i, "-a", a));
    agent->set_behaviour_set("eat_hide_wander");
    for (float v : {0.1f * (a % 10), 0.05f, 5.0f, 2.0f}) agent->add_factors(v);
  }
  return batch;
}

struct Counts {
  std::atomic<int> submitted{0}, answered{0}, duplicates{0}, failed{0};
  std::atomic<int> unary{0}, unary_failed{0}, reconnects{0};
  std::atomic<int64_t> slowest_ms{0};

  void Slowest(absl::Duration d) {
    const int64_t ms = absl::ToInt64Milliseconds(d);
    int64_t seen = slowest_ms.load();
    while (ms > seen && !slowest_ms.compare_exchange_weak(seen, ms)) {
    }
  }
};

// Counts stream s's answer to batch i.
void Check(int s, int i, const BatchResult& r, std::set<uint64_t>& ids,
           Counts& counts) {
  if (!ids.insert(r.request_id).second) counts.duplicates.fetch_add(1);
  if (!r.status.ok() || r.response.decisions_size() != kAgents ||
      r.response.decisions(0).has_error()) {
    std::fprintf(stderr, "stream %d batch %d: %s\n", s, i,
                 r.status.ToString().c_str());
    counts.failed.fetch_add(1);
    return;
  }
  counts.answered.fetch_add(1);
}

// One stream: submits until `end` while a consumer checks every answer as
// it arrives (so the slowest round trip is measured).
void RunStream(utilityd::client::Client& client, int s, absl::Time end,
               Counts& counts) {
  auto stream = client.OpenStream({.max_in_flight = 4});
  struct Sent {
    std::future<BatchResult> result;
    absl::Time at;
  };
  // Sized up front: the consumer reads entries while more are written.
  std::vector<Sent> sent(
      absl::GetFlag(FLAGS_duration) / absl::GetFlag(FLAGS_interval) + 16);
  std::atomic<int> submitted{0};
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    std::set<uint64_t> ids;
    for (int i = 0;; ++i) {
      while (submitted.load() <= i && !done.load()) {
        absl::SleepFor(absl::Microseconds(200));
      }
      if (submitted.load() <= i) return;
      Sent& x = sent[i];
      if (x.result.wait_for(std::chrono::seconds(60)) !=
          std::future_status::ready) {
        std::fprintf(stderr, "stream %d batch %d: no answer\n", s, i);
        counts.failed.fetch_add(1);
        continue;
      }
      const BatchResult r = x.result.get();
      counts.Slowest(absl::Now() - x.at);
      Check(s, i, r, ids, counts);
    }
  });
  for (size_t i = 0; i < sent.size() && absl::Now() < end; ++i) {
    sent[i].at = absl::Now();
    sent[i].result = stream->Submit(Batch(s, static_cast<int>(i)));
    submitted.fetch_add(1);
    counts.submitted.fetch_add(1);
    absl::SleepFor(absl::GetFlag(FLAGS_interval));
  }
  done.store(true);
  consumer.join();
  counts.reconnects.fetch_add(stream->reconnects());
  stream->Close();
}
}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  utilityd::client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  auto client = utilityd::client::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "fleet_load: %s\n",
                 client.status().ToString().c_str());
    return 2;
  }
  if (!(*client)->WaitForReady(absl::Seconds(10))) {
    std::fprintf(stderr, "fleet_load: no replica ready within 10 s\n");
    return 2;
  }
  for (int i = 0; i < 6; ++i) (void)(*client)->Decide(Batch(98, i));
  Counts counts;
  const absl::Time end = absl::Now() + absl::GetFlag(FLAGS_duration);
  std::vector<std::thread> threads;
  for (int s = 0; s < absl::GetFlag(FLAGS_streams); ++s) {
    threads.emplace_back([&, s] { RunStream(**client, s, end, counts); });
  }
  // Unary calls spread over every ready replica (a returning pod gets its
  // share at once; streams keep the replica they connected to).
  threads.emplace_back([&] {
    for (int i = 0; absl::Now() < end; ++i) {
      auto r = (*client)->Decide(Batch(99, i));
      counts.unary.fetch_add(1);
      if (!r.ok()) {
        std::fprintf(stderr, "unary %d: %s\n", i,
                     r.status().ToString().c_str());
        counts.unary_failed.fetch_add(1);
      }
      absl::SleepFor(absl::GetFlag(FLAGS_interval));
    }
  });
  for (std::thread& t : threads) t.join();
  std::printf(
      "{\"submitted\":%d,\"answered\":%d,\"duplicates\":%d,\"failed\":%d,"
      "\"unary\":%d,\"unary_failed\":%d,\"reconnects\":%d,\"slowest_ms\":%lld}"
      "\n",
      counts.submitted.load(), counts.answered.load(), counts.duplicates.load(),
      counts.failed.load(), counts.unary.load(), counts.unary_failed.load(),
      counts.reconnects.load(),
      static_cast<long long>(counts.slowest_ms.load()));
  const bool ok = counts.submitted.load() > 0 &&
                  counts.answered.load() == counts.submitted.load() &&
                  counts.duplicates.load() == 0 && counts.failed.load() == 0 &&
                  counts.unary_failed.load() == 0;
  return ok ? 0 : 1;
}
