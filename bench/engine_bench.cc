// Engine throughput on the arena set (seed 002's battle-mage: 7 actions,
// 3-5 considerations, one per-target action) for batches of agents with
// random factors and two goblins each. Reports agent decisions per second
// (items_per_second, one core) and ns per decision.
//
//   build/bench/engine_bench --benchmark_repetitions=5
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/baseline_engine.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/arena.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/variants.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/curve.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/sensitivity.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd {
namespace {

std::shared_ptr<const loader::LoadedSet> Arena() {
  static const auto set = [] {
    auto s = loader::LoadSetFile(UTILITYD_EXAMPLES_DIR "/arena_mage.yaml");
    if (!s.ok()) std::abort();
    return *s;
  }();
  return set;
}

// Decisions per second and ns per decision, for `agents` per iteration.
void PerDecision(benchmark::State& state, int agents) {
  state.SetItemsProcessed(state.iterations() * agents);
  state.counters["ns_per_decision"] =
      benchmark::Counter(static_cast<double>(agents),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

// Agents with factors drawn uniformly over each factor's declared range.
struct Batch {
  std::vector<float> factors;         // agents x factors
  std::vector<float> target_factors;  // agents x 2 targets x target factors
  std::vector<engine::TargetInput> targets;
  std::vector<engine::AgentInput> inputs;
};

Batch MakeBatch(const engine::CompiledBehaviourSet& set, int agents) {
  std::mt19937 rng(2026);
  auto draw = [&](const engine::FactorDefinition& f) {
    return std::uniform_real_distribution<float>(f.min, f.max)(rng);
  };
  Batch b;
  const int nf = set.factor_count(), nt = set.target_factor_count();
  for (int a = 0; a < agents; ++a) {
    for (const auto& f : set.factors()) b.factors.push_back(draw(f));
    for (int t = 0; t < 2; ++t) {
      for (const auto& f : set.target_factors())
        b.target_factors.push_back(draw(f));
    }
  }
  for (int a = 0; a < agents; ++a) {
    for (int t = 0; t < 2; ++t) {
      b.targets.push_back({absl::MakeConstSpan(
          b.target_factors.data() + (a * 2 + t) * nt, nt)});
    }
  }
  for (int a = 0; a < agents; ++a) {
    b.inputs.push_back(
        {.factors = absl::MakeConstSpan(b.factors.data() + a * nf, nf),
         .current_action = a % set.action_count(),
         .targets = absl::MakeConstSpan(b.targets.data() + a * 2, 2),
         .seed = static_cast<uint64_t>(a)});
  }
  return b;
}

void BM_EngineDecide(benchmark::State& state, engine::ExplainLevel level) {
  const engine::CompiledBehaviourSet& set = Arena()->compiled;
  const int agents = static_cast<int>(state.range(0));
  const Batch batch = MakeBatch(set, agents);
  engine::Decision decision;
  for (auto _ : state) {
    for (const engine::AgentInput& in : batch.inputs) {
      if (!engine::Decide(set, in, level, &decision).ok()) std::abort();
      benchmark::DoNotOptimize(decision.action);
    }
  }
  PerDecision(state, agents);
}
BENCHMARK_CAPTURE(BM_EngineDecide, explain_none, engine::ExplainLevel::kNone)
    ->Arg(256);
BENCHMARK_CAPTURE(BM_EngineDecide, explain_full, engine::ExplainLevel::kFull)
    ->Arg(256);

// The batch path the service uses: columns per consideration, one curve
// kind per loop, identical results.
void BM_EngineBatch(benchmark::State& state, engine::ExplainLevel level) {
  const engine::CompiledBehaviourSet& set = Arena()->compiled;
  const int agents = static_cast<int>(state.range(0));
  const Batch batch = MakeBatch(set, agents);
  engine::BatchDecider decider;
  std::vector<engine::BatchDecision> out(agents);
  for (auto _ : state) {
    decider.Decide(set, batch.inputs, level, absl::MakeSpan(out));
    benchmark::DoNotOptimize(out.data());
  }
  PerDecision(state, agents);
}
BENCHMARK_CAPTURE(BM_EngineBatch, explain_none, engine::ExplainLevel::kNone)
    ->Arg(256);

// The batch's factors factor-major, as an ECS chunk (and a block of the
// columnar form) holds them.
std::vector<float> FactorMajor(const Batch& batch, int nf) {
  const size_t agents = batch.inputs.size();
  std::vector<float> columns(batch.factors.size());
  for (size_t a = 0; a < agents; ++a) {
    for (int f = 0; f < nf; ++f) {
      columns[f * agents + a] = batch.factors[a * nf + f];
    }
  }
  return columns;
}

// The same batch factor-major: the engine reads the columns in place
// instead of transposing rows; every other field from each AgentInput.
void BM_EngineFactorMajor(benchmark::State& state) {
  const engine::CompiledBehaviourSet& set = Arena()->compiled;
  const int agents = static_cast<int>(state.range(0));
  Batch batch = MakeBatch(set, agents);
  const std::vector<float> columns = FactorMajor(batch, set.factor_count());
  for (engine::AgentInput& in : batch.inputs) in.factors = {};
  engine::BatchDecider decider;
  std::vector<engine::BatchDecision> out(agents);
  for (auto _ : state) {
    decider.DecideFactorMajor(
        set, batch.inputs,
        {.data = columns.data(), .rows = static_cast<size_t>(agents)},
        absl::MakeSpan(out));
    benchmark::DoNotOptimize(out.data());
  }
  PerDecision(state, agents);
}
BENCHMARK(BM_EngineFactorMajor)->Arg(256)->Arg(1024);

// The same agents with every field a column, as a block carries them
// (DecideColumns): no AgentInput per row. Without `targets`, shaped as
// the block `utilityctl bench --form columnar` sends: factors and running
// actions, no targets or seeds (the per-target action then has no
// candidates).
void EngineColumns(benchmark::State& state, bool targets) {
  const engine::CompiledBehaviourSet& set = Arena()->compiled;
  const int agents = static_cast<int>(state.range(0));
  const Batch batch = MakeBatch(set, agents);
  const std::vector<float> columns = FactorMajor(batch, set.factor_count());
  std::vector<int32_t> running;
  std::vector<uint64_t> seeds;
  std::vector<uint32_t> offsets{0};
  for (const engine::AgentInput& in : batch.inputs) {
    running.push_back(in.current_action);
    seeds.push_back(in.seed);
    offsets.push_back(offsets.back() + in.targets.size());
  }
  engine::AgentColumns block{.rows = static_cast<size_t>(agents),
                             .factors = columns.data(),
                             .current_action = running};
  if (targets) {
    block.seeds = seeds;
    block.target_offsets = offsets;
    block.target_factors = batch.target_factors;
  }
  engine::BatchDecider decider;
  std::vector<engine::BatchDecision> out(agents);
  for (auto _ : state) {
    if (!decider.DecideColumns(set, block, absl::MakeSpan(out)).ok()) {
      std::abort();
    }
    benchmark::DoNotOptimize(out.data());
  }
  PerDecision(state, agents);
}
void BM_EngineColumns(benchmark::State& state) { EngineColumns(state, true); }
BENCHMARK(BM_EngineColumns)->Arg(256)->Arg(1024);
void BM_EngineColumnsAsSent(benchmark::State& state) {
  EngineColumns(state, false);
}
BENCHMARK(BM_EngineColumnsAsSent)->Arg(1024);

// How the cost per decision changes with the batch size.
BENCHMARK_CAPTURE(BM_EngineBatch, batch_size, engine::ExplainLevel::kNone)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Arg(1024)
    ->Arg(4096);

// A synthetic set: `actions` actions of `considerations` considerations each
// (logistic, polynomial, linear and step in turn), every other action per
// target, and agents with `targets` targets; batches of 256.
std::shared_ptr<const loader::LoadedSet> Synthetic(int actions,
                                                   int considerations) {
  v1::BehaviourSet def;
  def.set_name("synthetic");
  for (int f = 0; f < 8; ++f) {
    v1::Factor* factor = def.add_factors();
    factor->set_name("f" + std::to_string(f));
    factor->set_max(100);
  }
  for (int f = 0; f < 2; ++f) {
    v1::Factor* factor = def.add_target_factors();
    factor->set_name("t" + std::to_string(f));
    factor->set_max(50);
  }
  for (int a = 0; a < actions; ++a) {
    v1::Action* action = def.add_actions();
    action->set_name("a" + std::to_string(a));
    action->set_per_target(a % 2 == 1);
    for (int c = 0; c < considerations; ++c) {
      v1::Consideration* con = action->add_considerations();
      con->set_name("c" + std::to_string(c));
      const bool on_target = action->per_target() && c == 0;
      con->set_per_target(on_target);
      con->set_factor(on_target ? "t" + std::to_string(a % 2)
                                : "f" + std::to_string((a + c) % 8));
      switch (c % 4) {
        case 0:
          con->mutable_curve()->mutable_logistic()->set_steepness(8);
          break;
        case 1:
          con->mutable_curve()->mutable_polynomial()->set_exponent(2);
          break;
        case 2:
          con->mutable_curve()->mutable_linear();
          break;
        default:
          con->mutable_curve()->mutable_step()->set_threshold(0.1);
          break;
      }
    }
  }
  auto set = loader::LoadSetProto(def, "synthetic");
  if (!set.ok()) std::abort();
  return *set;
}

void BM_EngineBatchShape(benchmark::State& state) {
  const auto set = Synthetic(static_cast<int>(state.range(0)),
                             static_cast<int>(state.range(1)));
  const int targets = static_cast<int>(state.range(2));
  constexpr int kAgents = 256;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(0, 1);
  std::vector<float> factors(kAgents * 8), target_values(kAgents * targets * 2);
  for (float& v : factors) v = 100 * unit(rng);
  for (float& v : target_values) v = 50 * unit(rng);
  std::vector<engine::TargetInput> target_inputs;
  for (int i = 0; i < kAgents * targets; ++i) {
    target_inputs.push_back(
        {absl::MakeConstSpan(target_values.data() + i * 2, 2)});
  }
  std::vector<engine::AgentInput> inputs;
  for (int a = 0; a < kAgents; ++a) {
    inputs.push_back({.factors = absl::MakeConstSpan(factors.data() + a * 8, 8),
                      .current_action = a % set->compiled.action_count(),
                      .targets = absl::MakeConstSpan(
                          target_inputs.data() + a * targets, targets)});
  }
  engine::BatchDecider decider;
  std::vector<engine::BatchDecision> out(kAgents);
  for (auto _ : state) {
    decider.Decide(set->compiled, inputs, engine::ExplainLevel::kNone,
                   absl::MakeSpan(out));
    benchmark::DoNotOptimize(out.data());
  }
  PerDecision(state, kAgents);
}
// {actions, considerations per action, targets per agent}
BENCHMARK(BM_EngineBatchShape)
    ->Args({4, 4, 2})
    ->Args({8, 4, 2})
    ->Args({16, 4, 2})
    ->Args({32, 4, 2})
    ->Args({8, 2, 2})
    ->Args({8, 8, 2})
    ->Args({8, 16, 2})
    ->Args({8, 4, 0})
    ->Args({8, 4, 1})
    ->Args({8, 4, 4})
    ->Args({8, 4, 8});

// The straightforward scorer of bench/baseline_engine.h on the same agents:
// virtual curves, a std::function aggregate, factors looked up by name.
void BM_Baseline(benchmark::State& state) {
  const auto arena = Arena();
  const engine::CompiledBehaviourSet& set = arena->compiled;
  const baseline::Reasoner reasoner(loader::ToDefinition(arena->definition));
  const int agents = static_cast<int>(state.range(0));
  const Batch batch = MakeBatch(set, agents);
  std::vector<baseline::Snapshot> snapshots(agents);
  for (int a = 0; a < agents; ++a) {
    const engine::AgentInput& in = batch.inputs[a];
    baseline::Snapshot& s = snapshots[a];
    for (int f = 0; f < set.factor_count(); ++f)
      s.factors[set.factors()[f].name] = in.factors[f];
    for (size_t t = 0; t < in.targets.size(); ++t) {
      baseline::Target target{.id = "goblin-" + std::to_string(t)};
      for (int f = 0; f < set.target_factor_count(); ++f)
        target.factors[set.target_factors()[f].name] = in.targets[t].factors[f];
      s.targets.push_back(std::move(target));
    }
    s.current_action = set.actions()[in.current_action].name;
  }
  for (auto _ : state) {
    for (const baseline::Snapshot& s : snapshots) {
      benchmark::DoNotOptimize(reasoner.Decide(s));
    }
  }
  PerDecision(state, agents);
}
BENCHMARK(BM_Baseline)->Arg(256);

// The whole batch path the CLI and the service share: packed factors in a
// DecideRequest, resolution, scoring and the DecideResponse message.
// Coordination: 256 goblins (arena_goblin.yaml), each with four mages as
// targets (64 mages, two attack tokens each), decided through DecideBatch
// with the tokens allocated across the batch — against the same batch and
// the same set with its resources removed. Args: resources (1) or not (0);
// the full form (0) or the compact (1), which writes no per-agent
// coordination.
void BM_GoblinBatch(benchmark::State& state) {
  const bool coordinated = state.range(0) == 1;
  auto loaded = loader::LoadSetFile(UTILITYD_EXAMPLES_DIR "/arena_goblin.yaml");
  if (!loaded.ok()) std::abort();
  v1::BehaviourSet def = (*loaded)->definition;
  if (!coordinated) {
    def.clear_resources();
    for (v1::Action& a : *def.mutable_actions()) a.clear_uses();
  }
  auto set = loader::LoadSetProto(def, "bench");
  if (!set.ok()) std::abort();
  auto catalog = loader::Catalog::Of({*set});
  if (!catalog.ok()) std::abort();
  constexpr int kAgents = 256, kMages = 64;
  std::mt19937 rng(2026);
  v1::DecideRequest request;
  if (state.range(1) == 1) request.set_form(v1::DECISION_FORM_COMPACT);
  const int nf = (*set)->compiled.factor_count();
  for (int a = 0; a < kAgents; ++a) {
    v1::AgentSnapshot* s = request.add_agents();
    s->set_agent_id("goblin-" + std::to_string(a));
    s->set_behaviour_set("arena_goblin");
    s->add_factors(std::uniform_real_distribution<float>(5, 30)(rng));
    s->add_factors(std::uniform_real_distribution<float>(0, 1)(rng));
    if (s->factors_size() != nf) std::abort();
    for (int t = 0; t < 4; ++t) {
      v1::TargetSnapshot* ts = s->add_targets();
      ts->set_target_id("mage-" + std::to_string((a / 4 + t * 7) % kMages));
      ts->add_factors(std::uniform_real_distribution<float>(0, 30)(rng));
      ts->add_factors(std::uniform_real_distribution<float>(0, 100)(rng));
    }
  }
  std::vector<char> block(1 << 20);
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = block.data();
  arena_options.initial_block_size = block.size();
  int attackers = 0;
  for (auto _ : state) {
    google::protobuf::Arena response_arena(arena_options);
    auto* response = google::protobuf::Arena::CreateMessage<v1::DecideResponse>(
        &response_arena);
    codec::DecideBatch(*catalog, request, response);
    attackers = 0;
    for (const v1::Decision& d : response->decisions()) {
      attackers += d.action() == "attack";
    }
    for (int k : response->compact().action_index()) attackers += k == 0;
  }
  PerDecision(state, kAgents);
  state.counters["attackers"] = attackers;
}
BENCHMARK(BM_GoblinBatch)->ArgsProduct({{0, 1}, {0, 1}});

// One goblin seeing many mages, every mage's attack using a token: the
// coordinator lists its candidates best first until one uses nothing, so
// each of the N attacks is taken in turn. Reports nanoseconds per target;
// a flat figure across N is linear scaling (it once grew with N, a scan
// per pick: 0.51 s for 10,000 targets through the service, 7.5 s for
// 40,000).
void BM_GoblinManyTargets(benchmark::State& state) {
  auto loaded = loader::LoadSetFile(UTILITYD_EXAMPLES_DIR "/arena_goblin.yaml");
  if (!loaded.ok()) std::abort();
  auto catalog = loader::Catalog::Of({*loaded});
  if (!catalog.ok()) std::abort();
  const int targets = static_cast<int>(state.range(0));
  v1::DecideRequest request;
  v1::AgentSnapshot* s = request.add_agents();
  s->set_agent_id("goblin");
  s->set_behaviour_set("arena_goblin");
  s->add_factors(25);
  s->add_factors(0.8f);
  for (int t = 0; t < targets; ++t) {
    v1::TargetSnapshot* ts = s->add_targets();
    ts->set_target_id("mage-" + std::to_string(t));
    ts->add_factors(1.0f + static_cast<float>(t % 29));
    ts->add_factors(80);
  }
  for (auto _ : state) {
    v1::DecideResponse response;
    codec::DecideBatch(*catalog, request, &response);
    if (response.decisions(0).has_error()) std::abort();
    benchmark::DoNotOptimize(response.decisions(0).action_index());
  }
  state.counters["per_target"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * targets,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_GoblinManyTargets)->RangeMultiplier(4)->Range(64, 4096);

// Sensitivity (an explain option): per agent, every factor and the chosen
// target's factors, both ways. Reports agents analysed per second and the
// decisions the analysis made for each.
void BM_Sensitivity(benchmark::State& state) {
  const engine::CompiledBehaviourSet& set = Arena()->compiled;
  const int agents = static_cast<int>(state.range(0));
  const Batch batch = MakeBatch(set, agents);
  engine::SensitivityAnalyser analyser;
  std::vector<engine::FactorSensitivity> result;
  int64_t crossings = 0;
  for (auto _ : state) {
    for (const engine::AgentInput& in : batch.inputs) {
      if (!analyser.Analyse(set, in, &result).ok()) std::abort();
      for (const auto& s : result) crossings += s.below.found + s.above.found;
    }
  }
  state.SetItemsProcessed(state.iterations() * agents);
  state.counters["us_per_agent"] =
      benchmark::Counter(static_cast<double>(agents) * 1e-6,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
  state.counters["crossings_per_agent"] =
      benchmark::Counter(static_cast<double>(crossings) /
                         static_cast<double>(state.iterations() * agents));
}
BENCHMARK(BM_Sensitivity)->Arg(64)->Unit(benchmark::kMillisecond);

// Canary serving (docs/CANARY.md): state.range(1) is the canary's share in
// percent, -1 for no canary; the canary is a second load of the examples
// (other set objects, the same columns), so only the routing is measured.
codec::Variants CanaryVariants(const benchmark::State& state,
                               const loader::Catalog& canary) {
  if (state.range(1) < 0) return {};
  return {.canary = &canary, .share = state.range(1) / 100.0};
}

void BM_DecideBatchMessages(benchmark::State& state) {
  const auto arena = Arena();
  const engine::CompiledBehaviourSet& set = arena->compiled;
  const int agents = static_cast<int>(state.range(0));
  const Batch batch = MakeBatch(set, agents);
  v1::DecideRequest request;
  const int nf = set.factor_count(), nt = set.target_factor_count();
  for (int a = 0; a < agents; ++a) {
    v1::AgentSnapshot* s = request.add_agents();
    s->set_agent_id("agent-" + std::to_string(a));
    s->set_behaviour_set("arena_mage");
    for (int f = 0; f < nf; ++f) s->add_factors(batch.factors[a * nf + f]);
    for (int t = 0; t < 2; ++t) {
      v1::TargetSnapshot* ts = s->add_targets();
      ts->set_target_id("goblin-" + std::to_string(t));
      for (int f = 0; f < nt; ++f) {
        ts->add_factors(batch.target_factors[(a * 2 + t) * nt + f]);
      }
    }
    s->set_seed(a);
  }
  absl::StatusOr<loader::Catalog> catalog =
      loader::LoadCatalog({UTILITYD_EXAMPLES_DIR});
  absl::StatusOr<loader::Catalog> canary =
      loader::LoadCatalog({UTILITYD_EXAMPLES_DIR});
  if (!catalog.ok() || !canary.ok()) std::abort();
  const codec::Variants variants = CanaryVariants(state, *canary);
  // The response comes from an arena over one reused block, so that, like
  // the service's streams (which reuse their response messages), the path
  // measured does not allocate per decision once warm.
  std::vector<char> block(1 << 20);
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = block.data();
  arena_options.initial_block_size = block.size();
  for (auto _ : state) {
    google::protobuf::Arena response_arena(arena_options);
    auto* response = google::protobuf::Arena::CreateMessage<v1::DecideResponse>(
        &response_arena);
    codec::DecideBatch(*catalog, request, response, nullptr, variants);
    benchmark::DoNotOptimize(response->decisions_size());
  }
  PerDecision(state, agents);
}
BENCHMARK(BM_DecideBatchMessages)
    ->ArgNames({"agents", "canary_pct"})
    ->ArgsProduct({{256}, {-1, 0, 50, 100}});

// One factor-major block of `agents` arena rows (ids, factors, running
// actions, two targets a row as offsets and columns).
v1::DecideRequest ArenaBlockRequest(int agents) {
  const engine::CompiledBehaviourSet& set = Arena()->compiled;
  const Batch batch = MakeBatch(set, agents);
  const int nf = set.factor_count();
  v1::DecideRequest request;
  v1::AgentBlock* block = request.add_blocks();
  block->set_behaviour_set("arena_mage");
  block->set_layout(v1::FACTOR_LAYOUT_COLUMNS);
  for (int f = 0; f < nf; ++f) {
    for (int a = 0; a < agents; ++a) {
      block->add_factors(batch.factors[a * nf + f]);
    }
  }
  for (int a = 0; a < agents; ++a) {
    block->add_agent_ids(1000 + a);
    block->add_current_action(a % set.action_count());
    block->add_target_offsets(2 * a);
  }
  block->add_target_offsets(2 * agents);
  block->mutable_target_factors()->Add(batch.target_factors.begin(),
                                       batch.target_factors.end());
  return request;
}

// The codec on the block form: ArenaBlockRequest decided into a reused
// response, as a stream does. What it adds to BM_EngineFactorMajor is the
// codec's work per row.
void BM_DecideBlock(benchmark::State& state) {
  const int agents = static_cast<int>(state.range(0));
  const v1::DecideRequest request = ArenaBlockRequest(agents);
  absl::StatusOr<loader::Catalog> catalog =
      loader::LoadCatalog({UTILITYD_EXAMPLES_DIR});
  absl::StatusOr<loader::Catalog> canary =
      loader::LoadCatalog({UTILITYD_EXAMPLES_DIR});
  if (!catalog.ok() || !canary.ok()) std::abort();
  const codec::Variants variants = CanaryVariants(state, *canary);
  v1::DecideResponse response;
  for (auto _ : state) {
    response.Clear();
    codec::DecideBatch(*catalog, request, &response, nullptr, variants);
    benchmark::DoNotOptimize(response.blocks(0).score_size());
  }
  PerDecision(state, agents);
}
BENCHMARK(BM_DecideBlock)
    ->ArgNames({"agents", "canary_pct"})
    ->ArgsProduct({{256, 1024}, {-1}})
    ->ArgsProduct({{1024}, {0, 50, 100}});

// The answer's serialisation beside it: a block of 1,024 rows decided and
// written to bytes as the server sends it, its indices in the varint
// columns (fixed 0) or the fixed-width ones (fixed 1,
// AgentBlock.fixed_width_indices).
void BM_AnswerBlockBytes(benchmark::State& state) {
  const int agents = static_cast<int>(state.range(0));
  v1::DecideRequest request = ArenaBlockRequest(agents);
  request.mutable_blocks(0)->set_fixed_width_indices(state.range(1) != 0);
  absl::StatusOr<loader::Catalog> catalog =
      loader::LoadCatalog({UTILITYD_EXAMPLES_DIR});
  if (!catalog.ok()) std::abort();
  v1::DecideResponse response;
  std::string bytes;
  for (auto _ : state) {
    response.Clear();
    codec::DecideBatch(*catalog, request, &response, nullptr, {});
    response.SerializeToString(&bytes);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.counters["answer_bytes_per_decision"] =
      static_cast<double>(bytes.size()) / agents;
  PerDecision(state, agents);
}
BENCHMARK(BM_AnswerBlockBytes)
    ->ArgNames({"agents", "fixed"})
    ->ArgsProduct({{1024}, {0, 1}});

}  // namespace
}  // namespace utilityd

// UTILITYD_SIMD_TARGET=AVX2 (or SSE4, SCALAR, ...) measures one SIMD target
// (engine::UseSimdTarget); unset: the best this CPU has.
int main(int argc, char** argv) {
  if (const char* target = std::getenv("UTILITYD_SIMD_TARGET")) {
    if (absl::Status s = utilityd::engine::UseSimdTarget(target); !s.ok()) {
      std::fprintf(stderr, "engine_bench: %s\n",
                   std::string(s.message()).c_str());
      return 2;
    }
  }
  benchmark::AddCustomContext("simd_target", utilityd::engine::SimdTarget());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
