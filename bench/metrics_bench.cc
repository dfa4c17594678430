// What recording a decision's metrics costs: the work of the service's
// batch recorder for a batch of 256 real arena decisions — each counted in
// the thread's DecisionTally (decisions by action, score and margin
// histogram buckets, switches), one at a time as snapshots are or as one
// block's rows, then the tally and the batch's veto counts handed to
// prometheus-cpp once — divided by 256. Beside it, the same counts made
// with prometheus-cpp directly per decision (Increment and two Observe
// calls), and the library's single primitives.
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
  static prometheus::Counter c;
  for (auto _ : state) c.Increment();
  benchmark::DoNotOptimize(c.Value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CounterIncrement)->Threads(1)->Threads(2);

void BM_HistogramObserve(benchmark::State& state) {
  prometheus::Histogram h(metrics::ExponentialBuckets(5e-6, 2, 19));
  double v = 1e-5;
  for (auto _ : state) {
    h.Observe(v);
    v = v < 1 ? v * 1.3 : 1e-5;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramObserve);

// 256 real arena decisions over random factors, two goblins each, and the
// set's metric handles.
struct Decisions {
  Decisions() {
    set = *loader::LoadSetFile(UTILITYD_EXAMPLES_DIR "/arena_mage.yaml");
    const engine::CompiledBehaviourSet& compiled = set->compiled;
    m = &service_metrics.ForSet(*set, v1::VARIANT_LIVE);
    std::mt19937 rng(7);
    for (int a = 0; a < kAgents; ++a) {
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
    decider.Decide(compiled, inputs, engine::ExplainLevel::kNone,
                   absl::MakeSpan(decisions));
  }
  static constexpr int kAgents = 256;
  std::shared_ptr<const loader::LoadedSet> set;
  prometheus::Registry registry;
  server::ServiceMetrics service_metrics{&registry};
  const server::SetMetrics* m = nullptr;
  std::vector<std::vector<float>> factors{kAgents}, targets{2 * kAgents};
  std::vector<engine::BatchDecision> decisions{kAgents};
  std::vector<engine::AgentInput> inputs{kAgents};
  std::vector<std::vector<engine::TargetInput>> target_inputs{kAgents};
  engine::BatchDecider decider;
};

void PerDecision(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * Decisions::kAgents);
  state.counters["ns_per_decision"] = benchmark::Counter(
      Decisions::kAgents, benchmark::Counter::kIsIterationInvariantRate |
                              benchmark::Counter::kInvert);
}

// The batch's veto counts, then the tally handed to prometheus-cpp.
void EndBatch(Decisions& d, server::DecisionTally& tally) {
  tally.AddVetoes(*d.m, d.decider.vetoes_by_action(),
                  d.decider.agents_with_invalid_input());
  tally.Flush(d.service_metrics);
}

// The snapshots' path: each decision counted as it is written.
void BM_RecordDecision(benchmark::State& state) {
  Decisions d;
  server::DecisionTally tally;
  for (auto _ : state) {
    for (int a = 0; a < Decisions::kAgents; ++a) {
      tally.Add(*d.m, d.inputs[a], d.decisions[a]);
    }
    EndBatch(d, tally);
  }
  PerDecision(state);
}
BENCHMARK(BM_RecordDecision);

// The block form's path: a block's rows counted in one call.
void BM_RecordBlock(benchmark::State& state) {
  Decisions d;
  server::DecisionTally tally;
  const std::vector<absl::Status> errors(Decisions::kAgents);
  std::vector<int> rows;
  std::vector<int32_t> running;
  for (int a = 0; a < Decisions::kAgents; ++a) {
    rows.push_back(a);
    running.push_back(d.inputs[a].current_action);
  }
  for (auto _ : state) {
    tally.AddRows(*d.m, rows, running, d.decisions, errors);
    EndBatch(d, tally);
  }
  PerDecision(state);
}
BENCHMARK(BM_RecordBlock);

// What the tally saves: the same counts made with prometheus-cpp per
// decision.
void BM_RecordDecisionDirect(benchmark::State& state) {
  Decisions d;
  const server::SetMetrics& m = *d.m;
  for (auto _ : state) {
    for (int a = 0; a < Decisions::kAgents; ++a) {
      const engine::BatchDecision& x = d.decisions[a];
      if (x.action < 0) {
        m.no_action->Increment();
        continue;
      }
      m.decisions[x.action]->Increment();
      m.selected_score->Observe(x.score);
      if (x.runner_up_action >= 0) {
        m.margin->Observe(x.score - x.runner_up_score);
      }
      if (x.switched) m.switches->Increment();
    }
  }
  PerDecision(state);
}
BENCHMARK(BM_RecordDecisionDirect);

}  // namespace
}  // namespace utilityd

BENCHMARK_MAIN();
