// One tick of a tree in progress: what a node kind's Tick (node_kinds.h)
// sees of it. The ticker owns the walk (tick a child, halt a subtree, reset
// a node) and the tick's answer; each kind's rule is in its block. Internal
// to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_TICKER_H_
#define UTILITYD_ENGINE_SRC_TREE_TICKER_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine::internal {

class Ticker {
 public:
  Ticker(const CompiledBehaviourSet& set, const AgentInput& agent,
         const TreeInput& in, ExplainLevel level, TreeTick* out,
         std::vector<NodeState>* states, double* variables)
      : tree_(*set.tree()),
        agent_(agent),
        in_(in),
        now_(static_cast<int64_t>(std::llround(in.game_time * 1000.0))),
        trace_(level != ExplainLevel::kNone),
        level_(level),
        out_(out),
        st_(*states),
        vars_(variables) {}

  // Ticks node `id`; `target` is the target a utility parent chose for it.
  // A node not running whose failure_if (success_if) holds answers failure
  // (success) without being ticked; skip_if holding or `while` not, it
  // answers skipped (halted first if it ran).
  NodeStatus Tick(int id, int target);

  // Stops node `id` and everything running under it (each kind's OnHalt
  // runs, children first), then resets it.
  void Halt(int id);

  // A node that finishes or is halted forgets everything but what its kind
  // keeps while idle (a pending cooldown).
  void Reset(int id);

  // Halts every child of `id` but child `keep` (-1: all).
  void HaltChildrenExcept(int id, int keep) {
    const CompiledNode& n = tree_.node(id);
    for (uint32_t i = 0; i < n.child_count; ++i) {
      if (static_cast<int>(i) != keep) Halt(tree_.child(n, i));
    }
  }

  // A node that runs at most one child (the one at its state's index)
  // halts it unless it is `keep`.
  void HaltRunningChildExcept(int id, int keep) {
    const NodeState& s = st_[id];
    if (s.running && static_cast<int>(s.index) != keep) {
      Halt(tree_.child(tree_.node(id), static_cast<int>(s.index)));
    }
  }

  // The outcome the game reported for `leaf`; running when none.
  NodeStatus Reported(int leaf) const {
    for (const LeafOutcome& o : in_.outcomes) {
      if (o.leaf == leaf) return o.status;
    }
    return NodeStatus::kRunning;
  }

  // The target a running leaf was given: its parent's choice (only a
  // utility node chooses one; others hold 0, none).
  int HaltTarget(int leaf) const {
    const int p = tree_.node(leaf).parent;
    return p < 0 ? -1 : static_cast<int>(st_[p].target) - 1;
  }

  // Runs script `index` of the tree (>= 0) over the agent's factors and
  // the tree's variables; returns its value.
  double Run(int32_t index) {
    return RunScript(tree_.scripts[index], agent_.factors.data(), vars_);
  }
  // Sets the tree's variable `index` (>= 0), as a loop does.
  void Assign(int32_t index, double v) { vars_[index] = v; }

  const CompiledTree& tree() const { return tree_; }
  const CompiledNode& node(int id) const { return tree_.node(id); }
  // Node id of child `i` of node `id`.
  int child(int id, int i) const { return tree_.child(tree_.node(id), i); }
  NodeState& state(int id) { return st_[id]; }
  int64_t now() const { return now_; }
  const AgentInput& agent() const { return agent_; }
  bool tracing() const { return trace_; }
  ExplainLevel level() const { return level_; }
  TreeTick& out() { return *out_; }

 private:
  // failure/success/skipped when a precondition of node `n` answers for it,
  // else idle (tick it).
  NodeStatus Precondition(const CompiledNode& n, const NodeState& s);
  // Runs node `n`'s postconditions for the status it answered.
  void Post(const CompiledNode& n, NodeStatus s);

  const CompiledTree& tree_;
  const AgentInput& agent_;
  const TreeInput& in_;
  const int64_t now_;
  const bool trace_;
  const ExplainLevel level_;
  TreeTick* out_;
  std::vector<NodeState>& st_;
  double* vars_;
};

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_TICKER_H_
