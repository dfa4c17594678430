// Behaviour trees served statelessly (seed 001; docs/TREES.md).
//
// The game runs the leaves; utilityd decides which. A tick reads the agent's
// factors (its blackboard), the game time, the outcome of each leaf the game
// was running, and the tree state returned by the previous tick; it returns
// the leaves to run, the running leaves to stop, the root's status and the
// new state. Nothing is kept between calls.
//
//   const CompiledBehaviourSet& set = ...;          // set.tree() != nullptr
//   TreeInput in{.game_time = 12.5, .state = previous.state,
//                .outcomes = {{.leaf = 7, .status = NodeStatus::kSuccess}}};
//   TreeTick tick;                                  // reuse across agents
//   absl::Status s = TickTree(set, agent, in, ExplainLevel::kNone, &tick);
//   for (const TreeLeaf& leaf : tick.run) start_or_continue(leaf);
//   for (const TreeLeaf& leaf : tick.halted) stop(leaf);
//   previous.state = tick.state;
//
// Semantics are BehaviorTree.CPP v4's (Sequence, Fallback, ReactiveSequence,
// ReactiveFallback, Parallel, Inverter, ForceSuccess, ForceFailure, Repeat,
// RetryUntilSuccessful, Timeout) with the differences docs/TREES.md lists;
// `cooldown`, `condition` and `utility` are utilityd's own.
#ifndef UTILITYD_ENGINE_TREE_H_
#define UTILITYD_ENGINE_TREE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/engine/curve.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/definition.h"
#include "utilityd/engine/script.h"

namespace utilityd::engine {

class CompiledBehaviourSet;

// Returns "idle", "running", "success", "failure" or "skipped".
[[nodiscard]] const char* NodeStatusName(NodeStatus status);

// A node in its compiled, flat form: nodes are numbered in depth-first
// pre-order (the root is 0), which is also a leaf's id on the wire.
struct CompiledNode {
  NodeKind kind = NodeKind::kSequence;
  std::string name;
  int32_t parent = -1;
  uint32_t depth = 0;
  uint32_t first_child = 0;  // into CompiledTree::children
  uint32_t child_count = 0;
  int32_t success_threshold = 0;  // parallel, resolved (never -1)
  int32_t failure_threshold = 1;  // parallel
  int32_t count = 1;              // repeat times, retry attempts
  int64_t millis = 0;             // cooldown, timeout: seconds in ms
  // condition
  CompiledConsideration condition;
  float threshold = 0.5f;
  // action: index into the set's actions
  int32_t action = -1;
  // utility: its children scored as the actions of a set of their own
  Rescore rescore = Rescore::kOnEnter;
  OnChildFailure on_failure = OnChildFailure::kFail;
  std::shared_ptr<const CompiledBehaviourSet> choices;
  // utility: for each child, the set's action it stands for, or -1
  std::vector<int32_t> choice_actions;
  // switch: the factor (condition.factor) and the value of each child but
  // the last
  std::vector<float> cases;
  // Scripts, as indices into CompiledTree::scripts (-1: none).
  // Preconditions: checked while the node is not running, but
  // `while_holds`, checked while it runs too.
  int32_t failure_if = -1;
  int32_t success_if = -1;
  int32_t skip_if = -1;
  int32_t while_holds = -1;
  // Postconditions: run as the node answers success or failure (on_success
  // or on_failure, then post) or is halted (on_halted).
  int32_t post_success = -1;
  int32_t post_failure = -1;
  int32_t post_always = -1;
  int32_t post_halted = -1;
  // script, script_condition: the code
  int32_t code = -1;
  // loop: its values, the variable they go to (-1: none) and what it
  // answers with none left to start
  std::vector<double> values;
  int32_t variable = -1;
  NodeStatus if_empty = NodeStatus::kSuccess;
  bool Guarded() const {
    return failure_if >= 0 || success_if >= 0 || skip_if >= 0 ||
           while_holds >= 0;
  }
  bool HasPost() const {
    return post_success >= 0 || post_failure >= 0 || post_always >= 0;
  }
  // parallel: its success threshold was counted from all the children (a
  // negative one), so skipped children count towards it (as in BT.CPP)
  bool success_from_all = false;
  // run_once: SKIPPED after the first outcome instead of that outcome
  bool then_skip = false;
};

struct CompiledTree {
  std::vector<CompiledNode> nodes;
  std::vector<uint32_t> children;  // child node ids, by parent
  std::vector<CurvePoint> curve_points;
  std::vector<CompiledScript> scripts;
  // The tree-local variables: every name the tree's scripts assign, in the
  // order first assigned (pre-order, then each node's fields in the
  // format's order); they start at 0 (false) and travel in the state.
  std::vector<std::string> variables;
  // The state's header tags (tree_state.cc): hashes of the set's name and
  // of the tree's shape (node kinds, structure and action leaves; not
  // parameters), computed once.
  uint16_t name_tag = 0;
  uint16_t shape_tag = 0;

  const CompiledNode& node(int id) const { return nodes[id]; }
  int child(const CompiledNode& n, int i) const {
    return static_cast<int>(children[n.first_child + i]);
  }
};

// The outcome the game reports for a leaf it was running.
struct LeafOutcome {
  int32_t leaf = -1;  // node id
  NodeStatus status = NodeStatus::kRunning;
};

struct TreeInput {
  double game_time = 0;     // seconds; cooldowns and timeouts use it
  absl::string_view state;  // the previous tick's state; empty: fresh
  absl::Span<const LeafOutcome> outcomes;
};

// A leaf the game is to run (or stop).
struct TreeLeaf {
  int32_t node = -1;
  int32_t action = -1;  // index into the set's actions
  // Index into the agent's targets; -1 for none; kTargetGone when a running
  // leaf's target is past the end of this tick's targets (targets are
  // matched by position: keep their order while a per-target leaf runs).
  int32_t target = -1;
  bool started = false;  // run: starts now (else it continues)
};

// Why a tick started from a fresh tree instead of the state it was given.
enum class TreeReset : uint8_t {
  kNone,
  kMalformed,   // does not decode (truncated, bad encoding)
  kVersion,     // encoded by an unknown version
  kOtherSet,    // another behaviour set's state
  kOtherShape,  // this set's tree before a reload changed its shape
  kCorrupt,     // checksum mismatch
  kOutOfRange,  // names a node or child the tree does not have
};

// Returns the reset reason's name, e.g. "other_shape"; "" for kNone.
[[nodiscard]] const char* TreeResetName(TreeReset reason);

// One node ticked, in tick order (explain top and full).
struct TreeNodeTrace {
  int32_t node = -1;
  NodeStatus status = NodeStatus::kIdle;
  float value = 0;       // condition: the curve output
  int32_t utility = -1;  // utility: index into TreeTick::utility
};

// A utility node's scoring in this tick (explain top and full).
struct UtilityTrace {
  int32_t node = -1;
  Decision decision;  // actions are the node's children, in order
};

struct TreeTick {
  NodeStatus status = NodeStatus::kIdle;  // the root's
  std::vector<TreeLeaf> run;
  std::vector<TreeLeaf> halted;
  std::string state;  // to send back next tick; empty when nothing runs
  TreeReset reset = TreeReset::kNone;
  std::vector<TreeNodeTrace> path;
  std::vector<UtilityTrace> utility;
  int ticked_nodes = 0;
};

// Ticks `set`'s tree once for `agent`. INVALID_ARGUMENT (naming the field)
// when the set has no tree, the agent does not fit the set, or game_time is
// not a finite number >= 0 in a tree that uses time. State that cannot be
// used restarts the tree from the root, with the reason in `out->reset`; it
// is never an error. `out` is overwritten; reuse it to avoid allocation.
// `in.state` may point into `out->state` (the last answer fed back).
[[nodiscard]] absl::Status TickTree(const CompiledBehaviourSet& set,
                                    const AgentInput& agent,
                                    const TreeInput& in, ExplainLevel level,
                                    TreeTick* out);

// Per-node state, as the codec sees it (exposed for tests and the fuzzer).
struct NodeState {
  bool running = false;
  bool has_time = false;  // cooldown: ready at; timeout: started at
  uint32_t index = 0;     // sequence/fallback child; repeat/retry count;
                          // utility chosen child
  uint32_t target = 0;    // utility: chosen target + 1 (0: none)
  uint32_t mask_a = 0;    // parallel: succeeded; utility: children tried
  uint32_t mask_b = 0;    // parallel: failed
  int64_t millis = 0;
  // Idle, yet `index` outlives the reset: sequence_with_memory's place,
  // run_once's outcome (1 success, 2 failure).
  bool kept = false;
};

// Encodes `states` (one per node of `set`'s tree) and the tree's
// `variables` (one per CompiledTree::variables; none given: all 0); empty
// when no node holds anything and every variable is 0. Layout in
// docs/TREES.md.
[[nodiscard]] std::string EncodeTreeState(
    const CompiledBehaviourSet& set, absl::Span<const NodeState> states,
    absl::Span<const double> variables = {});
// The same into `out` (overwritten; its capacity is reused).
void EncodeTreeState(const CompiledBehaviourSet& set,
                     absl::Span<const NodeState> states,
                     absl::Span<const double> variables, std::string* out);
inline void EncodeTreeState(const CompiledBehaviourSet& set,
                            absl::Span<const NodeState> states,
                            std::string* out) {
  EncodeTreeState(set, states, {}, out);
}

// Wraps encoded `entries` in the header (version, set and revision tags,
// checksum) for `set`. What EncodeTreeState does last; the fuzzer uses it to
// reach the entry decoder past the checksum.
[[nodiscard]] std::string SealTreeState(const CompiledBehaviourSet& set,
                                        absl::string_view entries);

// The 16-bit tag of a set's name or revision in the state's header.
[[nodiscard]] uint16_t TreeStateTag(absl::string_view name_or_revision);

// Decodes `bytes` into `states` (resized to the tree's node count) and
// `variables` (resized to the tree's; may be null). Returns kNone on
// success (also for empty bytes), else why it cannot be used, with
// `states` all idle and the variables 0.
[[nodiscard]] TreeReset DecodeTreeState(
    const CompiledBehaviourSet& set, absl::string_view bytes,
    std::vector<NodeState>* states, std::vector<double>* variables = nullptr);

// Validation and compilation of a set's tree (called by Validate and
// Compile). Paths start at "tree".
void ValidateTree(const SetDefinition& def,
                  std::vector<ValidationIssue>* issues);
[[nodiscard]] absl::StatusOr<std::shared_ptr<const CompiledTree>> CompileTree(
    const SetDefinition& def, const CompiledBehaviourSet& set);

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_TREE_H_
