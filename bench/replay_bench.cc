// Replay throughput (utilityctl replay, docs/REPLAY.md): logged arena
// decisions in the binary log form, read from memory and decided again
// with a candidate (take_cover at half weight), against the logged
// decisions or against baseline sets as well. One core; items_per_second
// is logged decisions replayed per second.
//
//   build/bench/replay_bench --benchmark_repetitions=5
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "benchmark/benchmark.h"
#include "utilityd/codec/batch.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/replay/replay.h"

namespace utilityd {
namespace {

constexpr int kEntries = 8192;

std::shared_ptr<const loader::LoadedSet> Load(bool halve) {
  std::ifstream in(UTILITYD_EXAMPLES_DIR "/arena_mage.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  if (halve) {
    yaml = absl::StrReplaceAll(yaml,
                               {{"  - name: take_cover\n",
                                 "  - name: take_cover\n    weight: 0.5\n"}});
  }
  auto set = loader::LoadSetText(yaml, "arena_mage.yaml");
  if (!set.ok()) std::abort();
  return *set;
}

// kEntries log entries as the server writes them in the binary form: the
// snapshot (packed factors, two goblins, the current action, a seed) and
// the decision the logged set made.
std::string MakeLog(const loader::Catalog& logged) {
  const auto set = logged.Find("arena_mage");
  const engine::CompiledBehaviourSet& c = set->compiled;
  std::mt19937 rng(2026);
  auto draw = [&](const engine::FactorDefinition& f) {
    return std::uniform_real_distribution<float>(f.min, f.max)(rng);
  };
  v1::DecideRequest request;
  for (int i = 0; i < kEntries; ++i) {
    v1::AgentSnapshot* a = request.add_agents();
    a->set_agent_id(absl::StrCat("mage-", i));
    a->set_behaviour_set("arena_mage");
    for (const auto& f : c.factors()) a->add_factors(draw(f));
    for (int t = 0; t < 2; ++t) {
      v1::TargetSnapshot* target = a->add_targets();
      target->set_target_id(absl::StrCat("goblin-", t));
      for (const auto& f : c.target_factors()) target->add_factors(draw(f));
    }
    a->set_current_action(c.actions()[i % c.action_count()].name);
    a->set_seed(static_cast<uint64_t>(i));
  }
  v1::DecideResponse response;
  codec::DecideBatch(logged, request, &response);
  std::string log;
  for (int i = 0; i < kEntries; ++i) {
    const v1::AgentSnapshot& a = request.agents(i);
    const v1::Decision& d = response.decisions(i);
    v1::DecisionLogEntry e;
    e.mutable_time()->set_seconds(1764633600 + i / 256);
    e.set_decision_id(d.decision_id().empty() ? absl::StrCat(i)
                                              : d.decision_id());
    e.set_agent_id(a.agent_id());
    e.set_behaviour_set("arena_mage");
    e.set_revision(set->revision());
    e.set_current_action(a.current_action());
    *e.mutable_snapshot() = a;
    e.set_action(d.action());
    e.set_target_id(d.target_id());
    e.set_score(d.score());
    e.set_switched(d.switched());
    replay::AppendDelimited(e, &log);
  }
  return log;
}

// state.range(0): 1 compares with baseline sets, 0 with the log.
void BM_ReplayBinary(benchmark::State& state) {
  const auto logged = *loader::Catalog::Of({Load(false)});
  const auto candidate = *loader::Catalog::Of({Load(true)});
  const std::string log = MakeLog(logged);
  for (auto _ : state) {
    replay::LogReader reader("bench", std::make_unique<std::istringstream>(log),
                             nullptr);
    replay::Replayer replayer({.candidate = replay::InCatalog(candidate),
                               .baseline = state.range(0) != 0
                                               ? replay::InCatalog(logged)
                                               : replay::SetLookup()});
    while (true) {
      v1::DecisionLogEntry* e = replayer.NewEntry();
      if (!*reader.Next(e)) break;
      replayer.Add(e);
    }
    const v1::ReplayReport r = replayer.Report();
    if (r.replayed() != kEntries) state.SkipWithError("not all replayed");
    benchmark::DoNotOptimize(r.churn());
  }
  state.SetItemsProcessed(state.iterations() * kEntries);
  state.counters["log_bytes_per_entry"] =
      static_cast<double>(log.size()) / kEntries;
}
BENCHMARK(BM_ReplayBinary)
    ->ArgName("baseline_sets")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// Reading alone: the binary log parsed into one entry, nothing decided.
void BM_ReadBinary(benchmark::State& state) {
  const auto logged = *loader::Catalog::Of({Load(false)});
  const std::string log = MakeLog(logged);
  for (auto _ : state) {
    replay::LogReader reader("bench", std::make_unique<std::istringstream>(log),
                             nullptr);
    v1::DecisionLogEntry e;  // read into again and again
    int64_t n = 0;
    while (*reader.Next(&e)) ++n;
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * kEntries);
}
BENCHMARK(BM_ReadBinary)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace utilityd

BENCHMARK_MAIN();
