// Design-time analysis on the example sets (docs/ANALYSIS.md, "Cost";
// docs/PERFORMANCE.md, "Analysis"): `utilityctl analyse` on each set with
// the command's defaults (20,000 boxes per action, 20,000 coverage
// samples), and `utilityctl tune` on arena_mage at a margin its scenarios
// miss, exactly (action weights) and by the local search (weights,
// bookends and curves). Prints milliseconds per run.
//
//   build/bench/analysis_bench --benchmark_repetitions=3
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd {
namespace {

const loader::LoadedSet& Example(const std::string& name) {
  static const auto* catalog = [] {
    auto c = loader::LoadCatalog({UTILITYD_EXAMPLES_DIR});
    if (!c.ok()) std::abort();
    return new loader::Catalog(*std::move(c));
  }();
  const auto set = catalog->Find(name);
  if (set == nullptr) std::abort();
  return *set;
}

void BM_Analyse(benchmark::State& state, const char* name) {
  const loader::LoadedSet& set = Example(name);
  for (auto _ : state) {
    auto a = analysis::Analyse(set, {});
    if (!a.ok()) std::abort();
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK_CAPTURE(BM_Analyse, arena_mage, "arena_mage")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Analyse, arena_goblin, "arena_goblin")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Analyse, eat_hide_wander, "eat_hide_wander")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Analyse, villager_needs, "villager_needs")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Analyse, guard_tree, "guard_tree")
    ->Unit(benchmark::kMillisecond);

void BM_Tune(benchmark::State& state, const char* unlock) {
  const loader::LoadedSet& set = Example("arena_mage");
  analysis::TuneOptions o;
  o.margin = 0.1;
  if (!analysis::ParseUnlock(unlock, &o).ok()) std::abort();
  for (auto _ : state) {
    auto r = analysis::Tune(set, o);
    if (!r.ok() || !r->feasible()) std::abort();
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK_CAPTURE(BM_Tune, action_weights, "action_weights")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Tune, weights_bookends_curves, "weights+bookends+curves")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace utilityd

BENCHMARK_MAIN();
