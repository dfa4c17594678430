// Content at MMO scale (docs/PERFORMANCE.md, "Packages and archetypes"): a
// generated catalog of 500 archetypes composing 40 packages
// (bench/catalog_gen.h), against the same 500 sets written flat.
//
//   build/bench/catalog_bench --benchmark_repetitions=3
//
// - LoadCatalog: read, compose, validate and compile the whole directory
//   (what a server start and utilityctl validate do); counters: the sets,
//   the heap one loaded catalog holds (heap_MiB) and the text read
//   (yaml_MiB; the flat sets are written with every default spelled out).
// - Reload: one line of one package edited (its first action's weight),
//   then the directory loaded again against the previous catalog as the
//   server's hot reload does; counters: the sets recompiled, and the sets
//   composing that package (the two agree).
// - Decide: 256 agents of each of 50 archetypes through the batch engine,
//   composed and flat (the same sets: ns_per_decision should agree).
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "bench/catalog_gen.h"
#include "benchmark/benchmark.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/curve.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd {
namespace {

// The generated catalog, written once per run in the temporary directory
// (removed at exit).
const std::string& Dir() {
  static const std::string* dir = [] {
    const std::filesystem::path d =
        std::filesystem::temp_directory_path() /
        ("utilityd_catalog_bench_" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    auto* name = new std::string(d.string());
    if (!bench::WriteCatalog({}, *name).ok()) std::abort();
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(Dir(), ignored);
    });
    return name;
  }();
  return *dir;
}

std::string Path(const char* form) { return Dir() + "/" + form; }

// Heap in use, in MiB (glibc's count of allocated bytes).
double HeapMiB() {
  return static_cast<double>(::mallinfo2().uordblks) / (1 << 20);
}

loader::Catalog Load(const std::string& dir,
                     const loader::Catalog* previous = nullptr) {
  absl::StatusOr<loader::Catalog> c = loader::LoadCatalog({dir}, previous);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
    std::abort();
  }
  return *std::move(c);
}

void BM_LoadCatalog(benchmark::State& state, const char* form) {
  const std::string dir = Path(form);
  // The memory one loaded catalog holds, measured outside the timed loop.
  const double before = HeapMiB();
  auto held = std::make_unique<loader::Catalog>(Load(dir));
  const double heap = HeapMiB() - before;
  const size_t sets = held->sets().size();
  held.reset();
  for (auto _ : state) {
    loader::Catalog c = Load(dir);
    benchmark::DoNotOptimize(c.sets().size());
  }
  double bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    bytes += static_cast<double>(e.file_size());
  }
  state.counters["sets"] = static_cast<double>(sets);
  state.counters["heap_MiB"] = heap;
  state.counters["yaml_MiB"] = bytes / (1 << 20);
}
BENCHMARK_CAPTURE(BM_LoadCatalog, composed, "composed")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadCatalog, flat, "flat")->Unit(benchmark::kMillisecond);

void BM_ReloadAfterOnePackageLine(benchmark::State& state) {
  const std::string dir = Path("composed");
  const std::string file = dir + "/pkg_00.yaml";
  std::stringstream read;
  read << std::ifstream(file).rdbuf();
  const std::string original = read.str();
  const std::string edited = absl::StrReplaceAll(
      original, {{bench::kEditableLine, "    weight: 0.9\n"}});
  if (edited == original) std::abort();
  loader::Catalog previous = Load(dir);
  const size_t users = previous.packages().at("pkg_00").used_by.size();
  size_t compiled = 0;
  bool flip = false;
  for (auto _ : state) {
    state.PauseTiming();
    flip = !flip;
    std::ofstream(file) << (flip ? edited : original);
    state.ResumeTiming();
    loader::Catalog next = Load(dir, &previous);
    compiled = next.compiled().size();
    state.PauseTiming();
    previous = std::move(next);
    state.ResumeTiming();
  }
  std::ofstream(file) << original;
  state.counters["compiled"] = static_cast<double>(compiled);
  state.counters["users"] = static_cast<double>(users);
}
BENCHMARK(BM_ReloadAfterOnePackageLine)->Unit(benchmark::kMillisecond);

struct Agents {
  std::vector<float> factors;
  std::vector<engine::AgentInput> inputs;
};

Agents MakeAgents(const engine::CompiledBehaviourSet& set, int n) {
  std::mt19937 rng(7);
  Agents a;
  const int nf = set.factor_count();
  for (int i = 0; i < n; ++i) {
    for (const auto& f : set.factors()) {
      a.factors.push_back(std::uniform_real_distribution<float>(
          static_cast<float>(f.min), static_cast<float>(f.max))(rng));
    }
  }
  for (int i = 0; i < n; ++i) {
    a.inputs.push_back(
        {.factors = absl::MakeConstSpan(a.factors.data() + i * nf, nf),
         .seed = static_cast<uint64_t>(i)});
  }
  return a;
}

void BM_Decide(benchmark::State& state, const char* form) {
  constexpr int kSets = 50, kAgents = 256;
  const loader::Catalog catalog = Load(Path(form));
  std::vector<std::shared_ptr<const loader::LoadedSet>> sets;
  std::vector<Agents> agents;
  for (int i = 0; i < kSets; ++i) {
    sets.push_back(catalog.Find(absl::StrFormat("npc_%03d", i * 10)));
    agents.push_back(MakeAgents(sets.back()->compiled, kAgents));
  }
  engine::BatchDecider decider;
  std::vector<engine::BatchDecision> out(kAgents);
  for (auto _ : state) {
    for (int i = 0; i < kSets; ++i) {
      decider.Decide(sets[i]->compiled, agents[i].inputs,
                     engine::ExplainLevel::kNone, absl::MakeSpan(out));
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * kSets * kAgents);
  state.counters["ns_per_decision"] = benchmark::Counter(
      kSets * kAgents, benchmark::Counter::kIsIterationInvariantRate |
                           benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_Decide, composed, "composed");
BENCHMARK_CAPTURE(BM_Decide, flat, "flat");

}  // namespace
}  // namespace utilityd

int main(int argc, char** argv) {
  benchmark::AddCustomContext("simd_target", utilityd::engine::SimdTarget());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
