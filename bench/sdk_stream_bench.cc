// A game server's stream through the C++ SDK, with no fault: batches of
// --agents agents (named factors, packed by the SDK) over one
// DecisionStream for --seconds, either flat out with --in_flight batches
// unanswered or one at a time. Prints one JSON line: batches/s,
// decisions/s, and the p50/p99 of a batch's round trip (Submit to result).
//
// It uses only the API every SDK version since the stream has, so
// bench/sdk_overhead.sh can build it against an older SDK and compare the
// two in one run.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "utilityd/client/block.h"
#include "utilityd/client/client.h"

ABSL_FLAG(std::string, target, "", "The replicas.");
ABSL_FLAG(int, agents, 256, "Agents a batch.");
ABSL_FLAG(int, in_flight, 8, "Batches unanswered at once (1: one at a time).");
ABSL_FLAG(double, seconds, 5, "How long to measure.");
ABSL_FLAG(double, warmup, 1, "How long to run first, unmeasured.");
ABSL_FLAG(std::string, label, "", "Named in the JSON line.");
ABSL_FLAG(int, block_rows, 0,
          "When set: each batch is one block of this many foragers, "
          "factor-major, one at a time (Submit; --in_flight is ignored).");

// Every heap allocation of the process (all threads), and the bytes asked
// for, for allocations per batch comparable to Go's -benchmem and bytes per
// batch comparable to .NET's GC.GetTotalAllocatedBytes.
namespace {
std::atomic<int64_t> heap_allocations{0};
std::atomic<int64_t> heap_bytes{0};
void* Allocate(std::size_t n) {
  heap_allocations.fetch_add(1, std::memory_order_relaxed);
  heap_bytes.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t n) { return Allocate(n); }
void* operator new[](std::size_t n) { return Allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace utilityd::bench {
namespace {

v1::DecideRequest Batch(int agents, int round) {
  v1::DecideRequest request;
  for (int a = 0; a < agents; ++a) {
    v1::AgentSnapshot* agent = request.add_agents();
    agent->set_agent_id(absl::StrCat("forager-", a));
    agent->set_behaviour_set("eat_hide_wander");
    auto& f = *agent->mutable_named_factors();
    f["hunger"] = static_cast<float>((a * 7 + round) % 100) / 100.0f;
    f["danger"] = static_cast<float>((a * 3 + round) % 50) / 100.0f;
    f["food_distance"] = static_cast<float>(a % 25);
    f["idle_time"] = static_cast<float>(round % 20);
  }
  return request;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

// One block of `rows` foragers a batch, one at a time, as the Go SDK's
// BenchmarkBlock1024 sends it: decisions/s and allocations per batch.
int Blocks(client::Client& client, int rows) {
  std::vector<uint64_t> ids(rows);
  std::vector<float> factors(4 * rows);
  for (int r = 0; r < rows; ++r) {
    ids[r] = 1000 + r;
    factors[0 * rows + r] = (r % 10) / 10.0f;
    factors[1 * rows + r] = (r % 7) / 10.0f;
    factors[2 * rows + r] = r % 25;
    factors[3 * rows + r] = r % 20;
  }
  std::vector<int32_t> next(rows);
  std::unique_ptr<client::DecisionStream> stream = client.OpenStream();
  client::BlockColumns in;
  in.behaviour_set = "eat_hide_wander";
  in.agent_ids = ids;
  in.factors = factors;
  in.layout = v1::FACTOR_LAYOUT_COLUMNS;
  v1::DecideRequest request;
  const absl::Time measure_from =
      absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_warmup));
  const absl::Time end =
      measure_from + absl::Seconds(absl::GetFlag(FLAGS_seconds));
  int64_t batches = 0, failed = 0, allocations_at_start = 0, bytes_at_start = 0;
  bool measuring = false;
  absl::Time started;
  while (true) {
    const absl::Time now = absl::Now();
    if (now >= end) break;
    if (!measuring && now >= measure_from) {
      measuring = true;
      started = now;
      allocations_at_start = heap_allocations.load();
      bytes_at_start = heap_bytes.load();
    }
    request.Clear();
    client::WriteBlock(in, request.add_blocks());
    client::BatchResult r = stream->Submit(request).get();
    if (!r.status.ok() ||
        !client::ReadBlock(r.response.blocks(0), rows,
                           {.action_index = absl::MakeSpan(next)})
             .ok()) {
      ++failed;
    }
    if (measuring) ++batches;
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - started);
  const int64_t allocations = heap_allocations.load() - allocations_at_start;
  const int64_t bytes = heap_bytes.load() - bytes_at_start;
  stream->Close();
  std::printf(
      R"({"label": "%s", "block_rows": %d, "batches_per_second": %.1f, )"
      R"("decisions_per_second": %.0f, "allocations_per_batch": %.1f, )"
      R"("bytes_per_batch": %.0f, "failed": %lld})"
      "\n",
      absl::GetFlag(FLAGS_label).c_str(), rows, batches / seconds,
      batches * rows / seconds,
      batches > 0 ? static_cast<double>(allocations) / batches : 0.0,
      batches > 0 ? static_cast<double>(bytes) / batches : 0.0,
      static_cast<long long>(failed));
  return failed == 0 && batches > 0 ? 0 : 1;
}

int Main() {
  client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  auto connected = client::Client::Connect(options);
  if (!connected.ok()) {
    std::cerr << connected.status() << "\n";
    return 1;
  }
  std::unique_ptr<client::Client> client = *std::move(connected);
  if (absl::GetFlag(FLAGS_block_rows) > 0) {
    return Blocks(*client, absl::GetFlag(FLAGS_block_rows));
  }
  const int agents = absl::GetFlag(FLAGS_agents);
  const int in_flight = std::max(1, absl::GetFlag(FLAGS_in_flight));
  client::StreamOptions stream_options;
  stream_options.max_in_flight = in_flight;
  std::unique_ptr<client::DecisionStream> stream =
      client->OpenStream(stream_options);

  // Batches are built ahead: the figure is the SDK's and the service's,
  // not the building of snapshots.
  std::vector<v1::DecideRequest> batches;
  for (int r = 0; r < 16; ++r) batches.push_back(Batch(agents, r));

  struct Sent {
    absl::Time at;
    std::future<client::BatchResult> result;
  };
  std::deque<Sent> pending;
  std::vector<double> latencies_ms;
  int64_t answered = 0, failed = 0, round = 0;
  const absl::Time start = absl::Now();
  const absl::Time measure_from =
      start + absl::Seconds(absl::GetFlag(FLAGS_warmup));
  const absl::Time end =
      measure_from + absl::Seconds(absl::GetFlag(FLAGS_seconds));
  auto settle_oldest = [&] {
    Sent s = std::move(pending.front());
    pending.pop_front();
    const client::BatchResult r = s.result.get();
    const absl::Time now = absl::Now();
    if (s.at < measure_from || now > end) return;
    if (!r.status.ok()) {
      ++failed;
      return;
    }
    ++answered;
    latencies_ms.push_back(absl::ToDoubleMilliseconds(now - s.at));
  };
  while (absl::Now() < end) {
    while (static_cast<int>(pending.size()) >= in_flight) settle_oldest();
    v1::DecideRequest request = batches[round++ % batches.size()];
    const absl::Time at = absl::Now();
    pending.push_back({at, stream->Submit(std::move(request))});
  }
  while (!pending.empty()) settle_oldest();
  stream->Close();

  const double seconds = absl::GetFlag(FLAGS_seconds);
  std::printf(
      R"({"label": "%s", "agents": %d, "in_flight": %d, "batches_per_second": %.1f, )"
      R"("decisions_per_second": %.0f, "p50_ms": %.3f, "p99_ms": %.3f, "failed": %lld})"
      "\n",
      absl::GetFlag(FLAGS_label).c_str(), agents, in_flight, answered / seconds,
      answered * agents / seconds, Percentile(latencies_ms, 0.50),
      Percentile(latencies_ms, 0.99), static_cast<long long>(failed));
  return failed == 0 && answered > 0 ? 0 : 1;
}

}  // namespace
}  // namespace utilityd::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return utilityd::bench::Main();
}
