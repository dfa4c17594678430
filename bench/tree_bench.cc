// Behaviour-tree ticks against flat decisions (docs/TREES.md, docs/
// PERFORMANCE.md): a tick of guard_tree in combat (two conditions, a
// reactive fallback, the utility node scoring the three attacks with the
// player as target, the state decoded and handed back) against one flat
// decision over the same three attacks (a batch of one through the same
// decider); and the state codec alone (decode, then encode). Prints ns per
// tick and the state's size in bytes.
//
//   build/bench/tree_bench --benchmark_repetitions=12
//       --benchmark_enable_random_interleaving=true --benchmark_min_time=0.2
//   (one command line)
#include <cstdlib>
#include <vector>

#include "benchmark/benchmark.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd {
namespace {

const engine::CompiledBehaviourSet& Guard() {
  static const auto set = [] {
    auto s = loader::LoadSetFile(UTILITYD_EXAMPLES_DIR "/guard_tree.yaml");
    if (!s.ok()) std::abort();
    return *s;
  }();
  return set->compiled;
}

// A guard in combat: the player visible at 8 m, one target.
struct Combat {
  std::vector<float> factors = {1, 8, 90, 80};
  std::vector<float> player = {8, 100};
  std::vector<engine::TargetInput> targets = {{player}};
  engine::AgentInput agent{.factors = factors, .targets = targets, .seed = 3};
};

// The state after the first tick: attacking, the fireball running.
std::string AttackingState(const Combat& c) {
  engine::TreeTick tick;
  if (!engine::TickTree(Guard(), c.agent, {.game_time = 1},
                        engine::ExplainLevel::kNone, &tick)
           .ok()) {
    std::abort();
  }
  return tick.state;
}

void BM_GuardTreeTick(benchmark::State& state) {
  const Combat c;
  const std::string attacking = AttackingState(c);
  engine::TreeTick tick;
  double t = 2;
  for (auto _ : state) {
    engine::TreeInput in{.game_time = t, .state = attacking};
    if (!engine::TickTree(Guard(), c.agent, in, engine::ExplainLevel::kNone,
                          &tick)
             .ok()) {
      std::abort();
    }
    benchmark::DoNotOptimize(tick.state);
    t += 0.1;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["state_bytes"] = static_cast<double>(attacking.size());
  state.counters["nodes_ticked"] = tick.ticked_nodes;
}
BENCHMARK(BM_GuardTreeTick);

// One flat decision over the utility node's children: the same
// considerations, the same target, no tree.
void BM_FlatDecisionOverTheSameAttacks(benchmark::State& state) {
  const Combat c;
  const engine::CompiledTree& tree = *Guard().tree();
  const engine::CompiledBehaviourSet* attacks = nullptr;
  for (const engine::CompiledNode& n : tree.nodes) {
    if (n.kind == engine::NodeKind::kUtility) attacks = n.choices.get();
  }
  // A batch of one through the decider, as a tick's utility node scores
  // (the outcome only, no candidate list).
  engine::BatchDecider decider;
  engine::BatchDecision decision;
  engine::AgentInput in = c.agent;
  in.current_action = 0;
  in.current_target = 0;
  for (auto _ : state) {
    decider.Decide(*attacks, absl::MakeConstSpan(&in, 1),
                   engine::ExplainLevel::kNone, absl::MakeSpan(&decision, 1));
    if (decision.action < 0) std::abort();
    benchmark::DoNotOptimize(decision.action);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FlatDecisionOverTheSameAttacks);

void BM_TreeStateDecodeEncode(benchmark::State& state) {
  const Combat c;
  const std::string attacking = AttackingState(c);
  std::vector<engine::NodeState> states;
  std::string again;
  for (auto _ : state) {
    if (engine::DecodeTreeState(Guard(), attacking, &states) !=
        engine::TreeReset::kNone) {
      std::abort();
    }
    engine::EncodeTreeState(Guard(), states, &again);
    benchmark::DoNotOptimize(again);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["state_bytes"] = static_cast<double>(attacking.size());
}
BENCHMARK(BM_TreeStateDecodeEncode);

}  // namespace
}  // namespace utilityd

BENCHMARK_MAIN();
