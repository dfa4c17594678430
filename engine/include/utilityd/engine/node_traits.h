// What the engine's block for each behaviour-tree node kind says about it
// (src/tree/node_kinds.h), for the layers that reason about trees without
// ticking them: the analysis's reach, the BehaviorTree.CPP export, the
// inspector's format. Each fact is read from the kind's block, which must
// state it to compile; nothing above the engine lists kinds by property.
//
//   const NodeKindTraits& k = NodeKindInfo(node.kind);
//   if (k.order == NodeOrder::kReactive) { ... every child, every tick ... }
//   if (!NodeMayAnswer(node, NodeStatus::kSuccess)) { ... never succeeds ... }
#ifndef UTILITYD_ENGINE_NODE_TRAITS_H_
#define UTILITYD_ENGINE_NODE_TRAITS_H_

#include "absl/types/span.h"
#include "utilityd/engine/definition.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {

// How a composite goes through its children in one tick.
enum class NodeOrder {
  kNone,        // not in order (parallel, utility, switch, decorators...)
  kResumes,     // in order from the running child, else from the first
                // (sequence, fallback)
  kReactive,    // in order from the first child every tick, halting the
                // running one when an earlier child runs or decides
  kKeepsPlace,  // in order from the child it stopped at, which outlives a
                // failure or a halt (sequence_with_memory)
};

struct NodeKindTraits {
  NodeKind kind;
  const char* name;  // in the format, e.g. "reactive_sequence"
  NodeArity arity;
  // May answer RUNNING whatever its children do (an action leaf, a
  // utility node, delay, keep_running_until_failure): a subtree with none
  // of these decides within one tick.
  bool answers_running;
  // Its state's `index` names the one child it runs.
  bool keeps_running_child;
  // Its state's time outlives a reset (a cooldown pending).
  bool keeps_time_idle;
  // Its state's `index` outlives a reset (sequence_with_memory's place,
  // run_once's outcome).
  bool keeps_place_idle;
  // Ordered composites: how they go through their children, and the
  // child status that moves on to the next child (success for the
  // sequences, failure for the fallbacks; kIdle when not ordered).
  NodeOrder order;
  NodeStatus go_on;
  // A decorator whose child is ticked from idle only in a tick that ticks
  // this node from idle (inverter, force_*, cooldown, timeout, run_once):
  // what holds when the node is entered holds when its child is.
  bool child_entered_with_it;
  // Its numeric parameters, with their defaults (definition.h).
  absl::Span<const NodeParam> params;
};

// The traits of `kind`, from its block.
[[nodiscard]] const NodeKindTraits& NodeKindInfo(NodeKind kind);

// Whether `node` can ever answer `status` (success or failure), given its
// kind and parameters: force_success never fails, retry with 0 attempts
// never succeeds. A precondition (failure_if, success_if) answers for the
// node besides: that is the caller's to add.
[[nodiscard]] bool NodeMayAnswer(const CompiledNode& node, NodeStatus status);

// Whether `node` ever ticks its children (repeat and retry with a count of
// 0 do not).
[[nodiscard]] bool NodeTicksChildren(const CompiledNode& node);

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_NODE_TRAITS_H_
