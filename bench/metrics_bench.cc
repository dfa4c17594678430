// What recording a decision's metrics costs: the work of the service's
// batch recorder for a batch of 256 real arena decisions — each counted in
// the thread's DecisionTally (decisions by action, score and margin
// histogram buckets, switches), then the tally and the batch's veto counts
// added to the shared metrics once — divided by 256. Also the single
// primitives.
//
//   build/bench/metrics_bench
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "server/src/service_metrics.h"
#include "utilityd/engine/decide.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/metrics/metrics.h"

namespace utilityd {
namespace {

void BM_CounterIncrement(benchmark::State& state) {
  metrics::Counter c;
  for (auto _ : state) c.Increment();
  benchmark::DoNotOptimize(c.Value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CounterIncrement)->Threads(1)->Threads(2);

void BM_HistogramObserve(benchmark::State& state) {
  metrics::Histogram h(metrics::ExponentialBuckets(5e-6, 2, 19));
  double v = 1e-5;
  for (auto _ : state) {
    h.Observe(v);
    v = v < 1 ? v * 1.3 : 1e-5;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramObserve);

void BM_RecordDecision(benchmark::State& state) {
  auto set = loader::LoadSetFile(UTILITYD_EXAMPLES_DIR "/arena_mage.yaml");
  if (!set.ok()) std::abort();
  const engine::CompiledBehaviourSet& compiled = (*set)->compiled;
  metrics::Registry registry;
  server::ServiceMetrics service_metrics(&registry);
  const server::SetMetrics& m = service_metrics.ForSet(**set, v1::VARIANT_LIVE);
  // 256 real decisions over random factors, two goblins each.
  std::mt19937 rng(7);
  std::vector<std::vector<float>> factors(256), targets(512);
  std::vector<engine::BatchDecision> decisions(256);
  std::vector<engine::AgentInput> inputs(256);
  std::vector<std::vector<engine::TargetInput>> target_inputs(256);
  for (int a = 0; a < 256; ++a) {
    for (const auto& f : compiled.factors()) {
      factors[a].push_back(
          std::uniform_real_distribution<float>(f.min, f.max)(rng));
    }
    for (int t = 0; t < 2; ++t) {
      for (const auto& f : compiled.target_factors()) {
        targets[a * 2 + t].push_back(
            std::uniform_real_distribution<float>(f.min, f.max)(rng));
      }
      target_inputs[a].push_back({targets[a * 2 + t]});
    }
    inputs[a] = {.factors = factors[a],
                 .current_action = a % 7,
                 .targets = target_inputs[a]};
  }
  engine::BatchDecider decider;
  decider.Decide(compiled, inputs, engine::ExplainLevel::kNone,
                 absl::MakeSpan(decisions));
  server::DecisionTally tally;
  for (auto _ : state) {
    for (int a = 0; a < 256; ++a) tally.Add(m, inputs[a], decisions[a]);
    tally.Flush();
    server::ServiceMetrics::RecordVetoes(m, decider.vetoes_by_action(),
                                         decider.agents_with_invalid_input());
  }
  state.SetItemsProcessed(state.iterations() * 256);
  state.counters["ns_per_decision"] =
      benchmark::Counter(256, benchmark::Counter::kIsIterationInvariantRate |
                                  benchmark::Counter::kInvert);
}
BENCHMARK(BM_RecordDecision);

}  // namespace
}  // namespace utilityd

BENCHMARK_MAIN();
