// utilityd-sim: a small game server. It keeps a seeded world of agents,
// streams every agent's snapshot to utilityd each tick through the client
// SDK, applies the chosen actions to the world, and sends the current action
// and the time since each action back on the next tick (the service keeps no
// state). It reports decisions per second, switches per agent per minute and,
// for the arena, how long mages survive.
//
// With --form=columnar every world sends its agents as one block of
// columns, through the SDK's WriteBlock, ReadBlock, CarryTreeState and (the
// goblins' attack tokens) CarryHeld, as an ECS game server would; the same
// seed then runs the same game.
//
//   utilityd-sim --target=localhost:50051 --world=all --agents=100 --hz=10
//   utilityd-sim --world=forager --realtime=false --duration=300s --seed=3
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "utilityd/base/usage.h"
#include "utilityd/client/block.h"
#include "utilityd/client/client.h"
#include "utilityd/client/tree_tracker.h"
#include "world.h"

ABSL_FLAG(std::string, target, "localhost:50051", "utilityd to ask.");
ABSL_FLAG(std::string, world, "all",
          "villager, arena, guard (a behaviour tree), forager, goblins "
          "(attack tokens), or all (villager, arena and guard).");
ABSL_FLAG(std::string, form, "snapshots",
          "How worlds send their agents: snapshots (a message per agent) or "
          "columnar (a block of columns per world).");
ABSL_FLAG(bool, tokens, true,
          "goblins: two attack tokens per mage, allocated by the service; "
          "false offers as many tokens as there are goblins.");
ABSL_FLAG(int, agents, 100, "Agents per world.");
ABSL_FLAG(double, hz, 10, "Decisions per agent per second (world ticks).");
ABSL_FLAG(absl::Duration, duration, absl::ZeroDuration(),
          "Simulated time to run; 0 runs until Ctrl-C.");
ABSL_FLAG(bool, realtime, true,
          "Tick on the wall clock; false runs simulated time as fast as the "
          "service answers.");
ABSL_FLAG(uint64_t, seed, 1, "World seed: the same seed replays the same run.");
ABSL_FLAG(double, noise, 0.03,
          "Standard deviation of sensor noise on the forager's inputs.");
ABSL_FLAG(int, trace, 0,
          "Print agent 0 of each world (action, score, runner-up, summary) for "
          "this many ticks.");
ABSL_FLAG(absl::Duration, report_every, absl::Seconds(2),
          "Wall-clock interval between progress lines.");

namespace utilityd::sim {
namespace {

std::atomic<bool> stop_requested{false};
extern "C" void OnSignal(int) { stop_requested.store(true); }

// Waits (up to 30 s) for the service, then learns each set's factor order
// once. False, with the reason printed, when a set's schema never came.
bool BindWorlds(client::Client& client,
                std::vector<std::unique_ptr<World>>& worlds) {
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  for (auto& w : worlds) {
    absl::StatusOr<std::shared_ptr<const client::SetSchema>> schema;
    while (!(schema = client.Schema(w->set())).ok()) {
      if (absl::Now() > give_up || stop_requested.load()) {
        std::fprintf(stderr, "%s: %s\n", w->set().c_str(),
                     std::string(schema.status().message()).c_str());
        return false;
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    w->Bind(*schema);
  }
  return true;
}

// The progress lines: decisions per second since the last line and each
// world's switches per agent per minute; the final line's totals.
class Reporter {
 public:
  explicit Reporter(const std::vector<std::unique_ptr<World>>& worlds)
      : worlds_(worlds), start_(absl::Now()), last_(start_) {}

  void Count(int64_t decisions) {
    decisions_ += decisions;
    since_last_ += decisions;
  }
  absl::Time start() const { return start_; }

  void Print(double now, bool final) {
    const absl::Time t = absl::Now();
    const double wall = absl::ToDoubleSeconds(t - last_);
    std::string line = absl::StrFormat("      t=%.0fs decisions/s=%.0f", now,
                                       wall > 0 ? since_last_ / wall : 0.0);
    if (final) {
      line = absl::StrFormat(
          "final: %.0fs simulated, %d decisions, %.0f "
          "decisions/s overall",
          now, decisions_, decisions_ / absl::ToDoubleSeconds(t - start_));
    }
    for (const auto& w : worlds_) {
      const double minutes = now / 60.0;
      line += absl::StrFormat(
          " | %s switches/agent/min=%.1f%s", w->set(),
          minutes > 0 ? w->switches() / (minutes * w->agents()) : 0.0,
          w->Extra());
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    since_last_ = 0;
    last_ = t;
  }

 private:
  const std::vector<std::unique_ptr<World>>& worlds_;
  const absl::Time start_;
  absl::Time last_;
  int64_t decisions_ = 0, since_last_ = 0;
};

// --form: which worlds send blocks. False, with the reason printed, for a
// flag that does not fit.
bool ChooseForms(std::vector<std::unique_ptr<World>>& worlds) {
  const std::string form = absl::GetFlag(FLAGS_form);
  if (form != "snapshots" && form != "columnar") {
    std::fprintf(stderr, "--form: expected snapshots or columnar\n");
    return false;
  }
  if (form == "columnar" && absl::GetFlag(FLAGS_trace) > 0) {
    std::fprintf(stderr,
                 "--trace: blocks answer numbers only; use --form=snapshots\n");
    return false;
  }
  for (auto& w : worlds) {
    w->set_columnar(form == "columnar");
  }
  return true;
}

// Hands each world its part of one answer (its block, or its decisions in
// request order) and counts them.
void ApplyAnswer(const v1::DecideResponse& response, bool trace, double now,
                 double dt, std::vector<std::unique_ptr<World>>& worlds,
                 Reporter& reporter) {
  int first = 0, block = 0;
  for (auto& w : worlds) {
    if (w->columnar()) {
      w->ApplyBlock(response.blocks(block++), now, dt);
      reporter.Count(w->agents());
      continue;
    }
    if (trace) {
      const v1::Decision& d = response.decisions(first);
      std::printf("t=%.1f %s: %s\n", now, d.agent_id().c_str(),
                  d.explanation().summary().c_str());
    }
    w->Apply(response, first, now, dt);
    first += w->agents();
  }
  reporter.Count(response.decisions_size());
}

int Run() {
  client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  options.deadline = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<client::Client>> client =
      client::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(client.status().message()).c_str());
    return 2;
  }
  const int agents = absl::GetFlag(FLAGS_agents);
  std::vector<std::unique_ptr<World>> worlds =
      MakeWorlds(absl::GetFlag(FLAGS_world), agents, absl::GetFlag(FLAGS_seed),
                 absl::GetFlag(FLAGS_tokens),
                 static_cast<float>(absl::GetFlag(FLAGS_noise)));
  if (worlds.empty()) {
    std::fprintf(stderr,
                 "--world: expected villager, arena, guard, forager, goblins "
                 "or all\n");
    return 2;
  }
  if (!BindWorlds(**client, worlds)) return 1;

  const double hz = absl::GetFlag(FLAGS_hz);
  const double dt = 1.0 / hz;
  const bool realtime = absl::GetFlag(FLAGS_realtime);
  const double end = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_duration));
  if (!ChooseForms(worlds)) return 2;
  std::unique_ptr<client::DecisionStream> stream = (*client)->OpenStream();
  Reporter reporter(worlds);
  const absl::Time start = reporter.start();
  absl::Time next_report = start + absl::GetFlag(FLAGS_report_every);
  double now = 0;
  std::string blocks;
  for (auto& w : worlds) {
    if (w->columnar())
      absl::StrAppend(&blocks, blocks.empty() ? " (as blocks: " : ", ",
                      w->set());
  }
  std::printf(
      "utilityd-sim: %zu world(s) x %d agents at %.0f Hz against %s%s\n",
      worlds.size(), agents, hz, options.target.c_str(),
      blocks.empty() ? "" : (blocks + ")").c_str());
  std::fflush(stdout);
  for (uint64_t tick = 0; !stop_requested.load(); ++tick) {
    if (end > 0 && now >= end) break;
    // A batch the stream lends and reuses: no allocation per tick on
    // this thread once warm (docs/CLIENTS.md, "The game thread").
    client::StreamBatch* lent = stream->Borrow();
    v1::DecideRequest& batch = lent->request();
    for (auto& w : worlds) {
      if (w->columnar()) {
        w->FillBlock(now, tick, &batch);
      } else {
        w->Fill(now, tick, &batch);
      }
    }
    const bool trace = tick < static_cast<uint64_t>(absl::GetFlag(FLAGS_trace));
    if (trace) batch.set_explain(v1::EXPLAIN_FULL);
    stream->Send(lent);
    const client::BatchResult& result = stream->Wait(lent);
    if (!result.status.ok()) {
      std::fprintf(stderr, "tick %llu: %s\n",
                   static_cast<unsigned long long>(tick),
                   std::string(result.status.message()).c_str());
      stream->Return(lent);
      continue;
    }
    ApplyAnswer(result.response, trace, now, dt, worlds, reporter);
    stream->Return(lent);
    now += dt;
    if (realtime) {
      absl::SleepFor(start + absl::Seconds(now) - absl::Now());
    }
    if (absl::Now() >= next_report) {
      reporter.Print(now, false);
      next_report += absl::GetFlag(FLAGS_report_every);
    }
  }
  stream->Close();
  reporter.Print(now, true);
  return 0;
}

}  // namespace
}  // namespace utilityd::sim

int main(int argc, char** argv) {
  utilityd::SetUsage(
      "examples/sim/sim.cc", "utilityd-sim",
      "A game server that streams its agents to utilityd every tick.");
  absl::ParseCommandLine(argc, argv);
  signal(SIGINT, utilityd::sim::OnSignal);
  signal(SIGTERM, utilityd::sim::OnSignal);
  return utilityd::sim::Run();
}
