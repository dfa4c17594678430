// Fuzzes the tree state decoder and the tick behind it: arbitrary bytes as
// an agent's tree state for the bundled guard tree and a tree holding every
// node kind. First byte even: the bytes as they come (the header checks);
// odd: the rest sealed with a valid header, so the entry decoder and the
// tick see them. Whatever the bytes, a tick succeeds, and the state it
// returns resumes without a reset.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"

namespace {

constexpr char kAllKinds[] = R"(
name: all_kinds
factors: [{name: a}, {name: b}]
target_factors: [{name: near}]
actions:
  - {name: x, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: y, considerations: [{name: k, factor: b}]}
  - name: hit
    per_target: true
    considerations: [{name: n, factor: near, per_target: true}]
tree:
  reactive_fallback:
    children:
      - reactive_sequence:
          children:
            - condition: {factor: a}
            - parallel:
                success_threshold: 1
                children:
                  - repeat: {times: 3, child: {action: x}}
                  - retry: {attempts: 2, child: {inverter: {child: {action: y}}}}
                  - cooldown: {seconds: 2, child: {force_success: {child: {action: x}}}}
      - timeout:
          seconds: 3
          child:
            utility:
              rescore: every_tick
              on_failure: next_best
              children:
                - action: hit
                - name: pair
                  considerations: [{name: k, factor: b}]
                  sequence: {children: [{action: x}, {force_failure: {child: {action: y}}}]}
      - if_then_else:
          children:
            - condition: {factor: b}
            - delay: {seconds: 1, child: {keep_running_until_failure: {child: {action: x}}}}
            - while_do_else:
                children:
                  - condition: {factor: a}
                  - switch: {factor: b, cases: [0, 1], children: [{action: y}, {action: x}, {action: y}]}
                  - action: x
      - sequence_with_memory:
          children:
            - run_once: {child: {action: y}}
            - subtree: {name: pair, remap: {p: b}}
            - fallback: {children: [{always_failure: {}}, {always_success: {}}]}
            - sleep: {seconds: 1.5}
            - {while: "a >= 0.5", skip_if: "b > 0.9", action: x}
            - run_once: {then_skip: true, child: {action: y}}
            - parallel_all:
                children:
                  - try_catch: {children: [{action: x}, {action: y}]}
                  - always_failure: {}
            - script: "n += 1; r := n / 3; big := n * 1e300"
            - {script_condition: "n > 2 ? r != 1 : big >= 0", on_success: "n := 0", post: "m := -n", on_halted: "m := 0.5"}
            - {skip_if: "m < -1", action: y}
            - loop: {values: [1, 2.5, 3], variable: v, if_empty: skipped, child: {skip_if: "v > 2", action: x}}
subtrees:
  - name: pair
    tree:
      sequence_with_memory:
        children: [{condition: {factor: p}}, {run_once: {child: {action: x}}}]
)";

const std::vector<std::shared_ptr<const utilityd::loader::LoadedSet>>& Sets() {
  static const auto* sets = [] {
    auto* v =
        new std::vector<std::shared_ptr<const utilityd::loader::LoadedSet>>;
    auto guard = utilityd::loader::LoadSetFile(
        std::string(UTILITYD_EXAMPLES_DIR) + "/guard_tree.yaml");
    auto all = utilityd::loader::LoadSetText(kAllKinds, "all_kinds.yaml");
    if (!guard.ok() || !all.ok()) {
      std::fprintf(stderr, "%s\n%s\n", guard.status().ToString().c_str(),
                   all.status().ToString().c_str());
      std::abort();
    }
    v->push_back(*guard);
    v->push_back(*all);
    return v;
  }();
  return *sets;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view bytes(reinterpret_cast<const char*>(data + 1),
                                size - 1);
  for (const auto& loaded : Sets()) {
    const utilityd::engine::CompiledBehaviourSet& set = loaded->compiled;
    const std::string state = data[0] % 2 == 0
                                  ? std::string(bytes)
                                  : utilityd::engine::SealTreeState(set, bytes);
    std::vector<float> factors(set.factor_count(), 0.5f);
    std::vector<float> target(set.target_factor_count(), 0.5f);
    std::vector<utilityd::engine::TargetInput> targets = {{target}};
    // Every action leaf reports an outcome chosen by the input's bytes.
    std::vector<utilityd::engine::LeafOutcome> outcomes;
    const utilityd::engine::CompiledTree& tree = *set.tree();
    for (size_t id = 0; id < tree.nodes.size(); ++id) {
      if (tree.nodes[id].kind != utilityd::engine::NodeKind::kAction) continue;
      const uint8_t b = size > id ? data[id] : 0;
      outcomes.push_back(
          {static_cast<int32_t>(id),
           static_cast<utilityd::engine::NodeStatus>(1 + b % 3)});
    }
    utilityd::engine::AgentInput agent{.factors = factors, .targets = targets};
    utilityd::engine::TreeTick tick;
    utilityd::engine::TreeInput in{.game_time = static_cast<double>(size),
                                   .state = state,
                                   .outcomes = outcomes};
    if (!utilityd::engine::TickTree(
             set, agent, in, utilityd::engine::ExplainLevel::kFull, &tick)
             .ok()) {
      std::abort();
    }
    utilityd::engine::TreeInput again{
        .game_time = static_cast<double>(size) + 1, .state = tick.state};
    if (!utilityd::engine::TickTree(
             set, agent, again, utilityd::engine::ExplainLevel::kNone, &tick)
             .ok() ||
        tick.reset != utilityd::engine::TreeReset::kNone) {
      std::abort();
    }
  }
  return 0;
}
