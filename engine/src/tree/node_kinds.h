// The behaviour-tree node kinds' registry: the one list of their blocks
// (docs/TREES.md). The blocks live by family in composite_kinds.h,
// decorator_kinds.h and leaf_kinds.h, written against the contract in
// node_kind_contract.h. A kind is a struct with
//   kKind      its NodeKind enumerator
//   kName      its name in the format (the field of utilityd.v1.TreeNode's
//              `kind` oneof; its proto message holds the parameters)
//   kArity     leaf, one child or children (the message's `child` or
//              `children`)
//   kParams    its numeric parameters: names and the TreeNodeDefinition
//              members that hold them (whose initial values are the
//              defaults); the loader reads and defaults them by name
//   kKeepsRunningChild  its state's `index` names the one child it runs
//              (a decoded state must run that child and no other)
//   kKeepsTimeIdle  its state's time outlives a reset (a cooldown pending)
//   kKeepsPlaceIdle  its state's `index` outlives a reset while `kept`
//              (sequence_with_memory's place, run_once's outcome)
//   kAnswersRunning  it may answer RUNNING whatever its children do (a
//              leaf the game runs, a utility node, a delay waiting, a
//              loop that restarts): the analysis's notion of a subtree
//              that can run across ticks is read from this
//   kOrder, kGoOn  how a composite goes through its children in order,
//              and the child status that moves on (NodeOrder, node_traits.h)
//   kChildEnteredWithIt  its child is ticked from idle only in a tick that
//              ticks it from idle (so its entry's conditions hold there)
//   MayAnswer  whether a compiled node of the kind can answer a status
//   TicksChildren  whether a compiled node of the kind ever ticks a child
//   kStateBytes  the most its state fields take encoded
//   Validate   appends an issue per bad parameter (NodeCheck)
//   Compile    fills its part of the CompiledNode (NodeCompile)
//   Tick       its rule for one tick, through the Ticker (ticker.h)
//   OnHalt     what halting it does besides halting its children
//   Read, Write  its state fields in the snapshot's tree state
// Families of kinds share a rule (Ordered for the sequences and fallbacks,
// Flip, Loop, Timed); a kind is then its enumerator, its name and its
// family.
//
// Validation, compilation, the tick, the state codec, the loader (through
// NodeParams and FindNodeKind), the traits every layer above reads
// (node_traits.h: the analysis's reach, the BT.CPP export) and the
// inspector (GET /api/v1/format) all read from NodeKinds below: adding a
// kind means its enumerator, its block in its family's header, its entry
// in NodeKinds and its proto message; a kind without every member above
// fails to compile (static_assert below). Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_NODE_KINDS_H_
#define UTILITYD_ENGINE_SRC_TREE_NODE_KINDS_H_

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>

#include "tree/composite_kinds.h"
#include "tree/decorator_kinds.h"
#include "tree/leaf_kinds.h"
#include "tree/node_kind_contract.h"

namespace utilityd::engine::internal {

// The registry: every kind, in the order of the NodeKind enumerators.
template <typename... K>
struct NodeKindList {};
using NodeKinds = NodeKindList<
    SequenceNode, FallbackNode, ReactiveSequenceNode, ReactiveFallbackNode,
    ParallelNode, InverterNode, ForceSuccessNode, ForceFailureNode, RepeatNode,
    RetryNode, CooldownNode, TimeoutNode, ConditionNode, ActionNode,
    UtilityNode, IfThenElseNode, WhileDoElseNode, KeepRunningUntilFailureNode,
    DelayNode, SwitchNode, SequenceWithMemoryNode, RunOnceNode,
    AlwaysSuccessNode, AlwaysFailureNode, SleepNode, ParallelAllNode,
    TryCatchNode, ScriptNode, ScriptConditionNode, LoopNode>;

template <typename... K>
constexpr bool InNodeEnumOrder(NodeKindList<K...>) {
  int i = 0;
  return ((static_cast<int>(K::kKind) == i++) && ...);
}
static_assert(InNodeEnumOrder(NodeKinds{}),
              "NodeKinds must follow the NodeKind order");

// Every kind provides every member the header lists.
template <typename K>
concept NodeKindBlock = requires(const TreeNodeDefinition& d,
                                 const NodeCheck& check, const NodeCompile& in,
                                 CompiledNode& c, Ticker& t, Reader& r,
                                 NodeState* s, char* at) {
  { K::kKind } -> std::convertible_to<NodeKind>;
  { K::kName } -> std::convertible_to<const char*>;
  { K::kArity } -> std::convertible_to<NodeArity>;
  K::kParams.size();
  { K::kKeepsRunningChild } -> std::convertible_to<bool>;
  { K::kKeepsTimeIdle } -> std::convertible_to<bool>;
  { K::kKeepsPlaceIdle } -> std::convertible_to<bool>;
  { K::kAnswersRunning } -> std::convertible_to<bool>;
  { K::kOrder } -> std::convertible_to<NodeOrder>;
  { K::kGoOn } -> std::convertible_to<NodeStatus>;
  { K::kChildEnteredWithIt } -> std::convertible_to<bool>;
  { K::kStateBytes } -> std::convertible_to<size_t>;
  { K::MayAnswer(c, NodeStatus::kSuccess) } -> std::same_as<bool>;
  { K::TicksChildren(c) } -> std::same_as<bool>;
  K::Validate(d, check);
  { K::Compile(d, in, c) } -> std::same_as<absl::Status>;
  { K::Tick(t, 0, -1, size_t{0}) } -> std::same_as<NodeStatus>;
  K::OnHalt(t, 0);
  { K::Read(c, r, s) } -> std::same_as<Fit>;
  { K::Write(c, *s, at) } -> std::same_as<char*>;
};
template <typename... K>
constexpr bool AllNodeBlocks(NodeKindList<K...>) {
  return (NodeKindBlock<K> && ...);
}
static_assert(
    AllNodeBlocks(NodeKinds{}),
    "every node kind needs kKind, kName, kArity, kParams, "
    "kKeepsRunningChild, kKeepsTimeIdle, kKeepsPlaceIdle, kAnswersRunning, "
    "kOrder, kGoOn, kChildEnteredWithIt, kStateBytes, MayAnswer, "
    "TicksChildren, Validate, Compile, Tick, OnHalt, Read and Write");

template <typename... K>
constexpr size_t CountKinds(NodeKindList<K...>) {
  return sizeof...(K);
}
inline constexpr size_t kNodeKinds = CountKinds(NodeKinds{});

// The most one state entry takes: a gap (node ids are below 2^32: 5
// bytes) and the longest fields of any kind.
template <typename... K>
constexpr size_t LongestFields(NodeKindList<K...>) {
  return std::max({K::kStateBytes...});
}
inline constexpr size_t kMaxEntry = 5 + LongestFields(NodeKinds{});

// One member of every kind, as a table indexed by NodeKind: for the tick,
// which dispatches per node and recurses (the state codec visits instead,
// so that each kind's small Read and Write inline).
template <typename... K>
constexpr auto TickTable(NodeKindList<K...>) {
  return std::array<S (*)(Ticker&, int, int, size_t), sizeof...(K)>{
      &K::Tick...};
}
template <typename... K>
constexpr auto HaltTable(NodeKindList<K...>) {
  return std::array<void (*)(Ticker&, int), sizeof...(K)>{&K::OnHalt...};
}
// Every kind's traits, indexed by NodeKind (node_traits.h).
template <typename... K>
constexpr std::array<NodeKindTraits, sizeof...(K)> TraitsTable(
    NodeKindList<K...>) {
  return {NodeKindTraits{.kind = K::kKind,
                         .name = K::kName,
                         .arity = K::kArity,
                         .answers_running = K::kAnswersRunning,
                         .keeps_running_child = K::kKeepsRunningChild,
                         .keeps_time_idle = K::kKeepsTimeIdle,
                         .keeps_place_idle = K::kKeepsPlaceIdle,
                         .order = K::kOrder,
                         .go_on = K::kGoOn,
                         .child_entered_with_it = K::kChildEnteredWithIt,
                         .params = absl::Span<const NodeParam>(K::kParams)}...};
}
inline constexpr auto kTraits = TraitsTable(NodeKinds{});

// An ordered kind moves on on success or failure; any other says kIdle.
template <typename... K>
constexpr bool OrderedKindsSayGoOn(NodeKindList<K...>) {
  return (((K::kOrder == NodeOrder::kNone) == (K::kGoOn == S::kIdle)) && ...);
}
static_assert(OrderedKindsSayGoOn(NodeKinds{}),
              "an ordered kind names the status that moves on (kGoOn), "
              "and only an ordered kind does");

// Calls visit(K{}) for the kind K of `kind` and returns what it returns
// (validation, compilation, the state codec).
template <typename Visit, typename First, typename... Rest>
decltype(auto) VisitNode(NodeKindList<First, Rest...>, NodeKind kind,
                         Visit&& visit) {
  if constexpr (sizeof...(Rest) == 0) {
    return visit(First{});
  } else {
    if (kind == First::kKind) return visit(First{});
    return VisitNode(NodeKindList<Rest...>{}, kind, std::forward<Visit>(visit));
  }
}
template <typename Visit>
decltype(auto) VisitNodeKind(NodeKind kind, Visit&& visit) {
  return VisitNode(NodeKinds{}, kind, std::forward<Visit>(visit));
}

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_NODE_KINDS_H_
