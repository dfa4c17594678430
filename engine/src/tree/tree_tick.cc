// One tick of a behaviour tree: the nodes' rules (docs/TREES.md).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "scoring/scoring_rules.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/random.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {
namespace {

using S = NodeStatus;

int PopCount(uint32_t m) { return __builtin_popcount(m); }

class Ticker {
 public:
  Ticker(const CompiledBehaviourSet& set, const AgentInput& agent,
         const TreeInput& in, ExplainLevel level, TreeTick* out,
         std::vector<NodeState>* states)
      : tree_(*set.tree()),
        agent_(agent),
        in_(in),
        now_(static_cast<int64_t>(std::llround(in.game_time * 1000.0))),
        trace_(level != ExplainLevel::kNone),
        level_(level),
        out_(out),
        st_(*states) {}

  // Ticks node `id`; `target` is the target a utility parent chose for it.
  S Tick(int id, int target) {
    ++out_->ticked_nodes;
    size_t slot = 0;
    if (trace_) {
      slot = out_->path.size();
      out_->path.push_back({.node = id});
    }
    const S s = TickKind(id, target, slot);
    if (trace_) out_->path[slot].status = s;
    return s;
  }

  // Stops node `id` and everything running under it; running action leaves
  // are reported as halted unless the game reported them finished.
  void Halt(int id) {
    NodeState& s = st_[id];
    if (!s.running) return;
    const CompiledNode& n = tree_.node(id);
    for (uint32_t i = 0; i < n.child_count; ++i) Halt(tree_.child(n, i));
    if (n.kind == NodeKind::kAction) {
      // Ticked earlier in this tick? Then it leaves the run list; one it
      // was to start never ran, so the game has nothing to stop.
      bool started_now = false;
      for (auto it = out_->run.begin(); it != out_->run.end(); ++it) {
        if (it->node == id) {
          started_now = it->started;
          out_->run.erase(it);
          break;
        }
      }
      const S reported = Reported(id);
      if (!started_now && reported != S::kSuccess && reported != S::kFailure) {
        out_->halted.push_back(
            {.node = id, .action = n.action, .target = HaltTarget(id)});
      }
    }
    Reset(id);
  }

 private:
  // A node that finishes or is halted forgets everything but a pending
  // cooldown.
  void Reset(int id) {
    NodeState& s = st_[id];
    const bool cooling =
        tree_.node(id).kind == NodeKind::kCooldown && s.has_time && !s.running;
    const int64_t until = s.millis;
    s = NodeState{};
    if (cooling) {
      s.has_time = true;
      s.millis = until;
    }
  }

  void HaltChildrenExcept(int id, int keep) {
    const CompiledNode& n = tree_.node(id);
    for (uint32_t i = 0; i < n.child_count; ++i) {
      if (static_cast<int>(i) != keep) Halt(tree_.child(n, i));
    }
  }

  // A reactive node runs at most one child (the one at its index, where
  // it was running when the tick started); halts it unless it is `keep`.
  void HaltRunningChildExcept(int id, int keep) {
    const NodeState& s = st_[id];
    if (s.running && static_cast<int>(s.index) != keep) {
      Halt(tree_.child(tree_.node(id), static_cast<int>(s.index)));
    }
  }

  S Reported(int leaf) const {
    for (const LeafOutcome& o : in_.outcomes) {
      if (o.leaf == leaf) return o.status;
    }
    return S::kRunning;
  }

  // The target a running leaf was given: its utility parent's choice.
  int HaltTarget(int leaf) const {
    const int p = tree_.node(leaf).parent;
    if (p < 0 || tree_.node(p).kind != NodeKind::kUtility) return -1;
    return static_cast<int>(st_[p].target) - 1;
  }

  S TickKind(int id, int target, size_t slot) {
    const CompiledNode& n = tree_.node(id);
    switch (n.kind) {
      case NodeKind::kSequence:
        return Memory(id, S::kSuccess);
      case NodeKind::kFallback:
        return Memory(id, S::kFailure);
      case NodeKind::kReactiveSequence:
        return Reactive(id, S::kSuccess);
      case NodeKind::kReactiveFallback:
        return Reactive(id, S::kFailure);
      case NodeKind::kParallel:
        return Parallel(id);
      case NodeKind::kInverter:
      case NodeKind::kForceSuccess:
      case NodeKind::kForceFailure:
        return Flip(id);
      case NodeKind::kRepeat:
        return Loop(id, S::kSuccess);
      case NodeKind::kRetry:
        return Loop(id, S::kFailure);
      case NodeKind::kCooldown:
        return Cooldown(id);
      case NodeKind::kTimeout:
        return Timeout(id);
      case NodeKind::kCondition:
        return Condition(n, slot);
      case NodeKind::kAction:
        return Action(id, target);
      case NodeKind::kUtility:
        return Utility(id, slot);
    }
    return S::kFailure;
  }

  // sequence (`go_on` = success) and fallback (`go_on` = failure): children
  // in order from the one running, remembered across ticks.
  S Memory(int id, S go_on) {
    const CompiledNode& n = tree_.node(id);
    NodeState& s = st_[id];
    for (uint32_t i = s.running ? s.index : 0; i < n.child_count; ++i) {
      const S c = Tick(tree_.child(n, i), -1);
      if (c == S::kRunning) {
        st_[id].running = true;
        st_[id].index = i;
        return S::kRunning;
      }
      if (c != go_on) {
        Reset(id);
        return c;
      }
    }
    Reset(id);
    return go_on;
  }

  // reactive_sequence / reactive_fallback: every child from the first, every
  // tick; a child running halts the others (a conditional abort when an
  // earlier child now decides).
  S Reactive(int id, S go_on) {
    const CompiledNode& n = tree_.node(id);
    for (uint32_t i = 0; i < n.child_count; ++i) {
      const S c = Tick(tree_.child(n, i), -1);
      if (c == S::kRunning) {
        HaltRunningChildExcept(id, static_cast<int>(i));
        st_[id].running = true;
        st_[id].index = i;
        return S::kRunning;
      }
      if (c != go_on) {
        HaltRunningChildExcept(id, static_cast<int>(i));
        Reset(id);
        return c;
      }
    }
    Reset(id);
    return go_on;
  }

  // parallel: every child not yet finished, each tick; succeeds once
  // `success_threshold` children succeeded, fails once `failure_threshold`
  // failed or success is out of reach; the rest are halted then.
  S Parallel(int id) {
    const CompiledNode& n = tree_.node(id);
    const int total = static_cast<int>(n.child_count);
    for (uint32_t i = 0; i < n.child_count; ++i) {
      NodeState& s = st_[id];
      const uint32_t bit = 1u << i;
      if ((s.mask_a | s.mask_b) & bit) continue;
      const S c = Tick(tree_.child(n, i), -1);
      if (c == S::kSuccess) st_[id].mask_a |= bit;
      if (c == S::kFailure) st_[id].mask_b |= bit;
      const int ok = PopCount(st_[id].mask_a), bad = PopCount(st_[id].mask_b);
      if (ok >= n.success_threshold) {
        HaltChildrenExcept(id, -1);
        Reset(id);
        return S::kSuccess;
      }
      if (bad >= n.failure_threshold || total - bad < n.success_threshold) {
        HaltChildrenExcept(id, -1);
        Reset(id);
        return S::kFailure;
      }
    }
    st_[id].running = true;
    return S::kRunning;
  }

  S Flip(int id) {
    const CompiledNode& n = tree_.node(id);
    const S c = Tick(tree_.child(n, 0), -1);
    st_[id].running = c == S::kRunning;
    if (c == S::kRunning) return c;
    switch (n.kind) {
      case NodeKind::kInverter:
        return c == S::kSuccess ? S::kFailure : S::kSuccess;
      case NodeKind::kForceSuccess:
        return S::kSuccess;
      default:
        return S::kFailure;
    }
  }

  // repeat (`again` = success) and retry (`again` = failure): the child
  // again, in the same tick, until `count` runs ended in `again` or one did
  // not.
  S Loop(int id, S again) {
    const CompiledNode& n = tree_.node(id);
    if (n.count == 0) return again;  // BehaviorTree.CPP's 0: never ticked
    uint32_t done = st_[id].running ? st_[id].index : 0;
    while (true) {
      const S c = Tick(tree_.child(n, 0), -1);
      if (c == S::kRunning) {
        st_[id].running = true;
        st_[id].index = done;
        return S::kRunning;
      }
      if (c != again) {
        Reset(id);
        return c;
      }
      if (++done >= static_cast<uint32_t>(n.count)) {
        Reset(id);
        return again;
      }
    }
  }

  // cooldown: after the child finishes, fails without ticking it until
  // `seconds` of game time have passed.
  S Cooldown(int id) {
    const CompiledNode& n = tree_.node(id);
    NodeState& s = st_[id];
    if (!s.running && s.has_time) {
      if (now_ < s.millis) return S::kFailure;
      s.has_time = false;
    }
    const S c = Tick(tree_.child(n, 0), -1);
    NodeState& after = st_[id];
    after.running = c == S::kRunning;
    if (c != S::kRunning) {
      after.has_time = true;
      after.millis = now_ + n.millis;
    }
    return c;
  }

  // timeout: fails, halting the child, once `seconds` of game time have
  // passed since it was entered (checked when the tick starts).
  S Timeout(int id) {
    const CompiledNode& n = tree_.node(id);
    NodeState& s = st_[id];
    if (s.running) {
      if (now_ - s.millis >= n.millis) {
        Halt(id);
        return S::kFailure;
      }
    } else {
      s.has_time = true;
      s.millis = now_;
    }
    const S c = Tick(tree_.child(n, 0), -1);
    if (c == S::kRunning) {
      st_[id].running = true;
      return c;
    }
    Reset(id);
    return c;
  }

  S Condition(const CompiledNode& n, size_t slot) {
    const CompiledConsideration& c = n.condition;
    const float raw = agent_.factors[c.factor];
    float y = 0;
    if (std::isfinite(raw)) {
      y = EvaluateCurve(c.curve,
                        internal::Normalise(raw, c.range_lo, c.range_span),
                        tree_.curve_points);
    }
    if (trace_) out_->path[slot].value = y;
    return std::isfinite(raw) && y >= n.threshold ? S::kSuccess : S::kFailure;
  }

  S Action(int id, int target) {
    const CompiledNode& n = tree_.node(id);
    NodeState& s = st_[id];
    if (s.running) {
      const S r = Reported(id);
      if (r == S::kSuccess || r == S::kFailure) {
        Reset(id);
        return r;
      }
      out_->run.push_back({.node = id, .action = n.action, .target = target});
      return S::kRunning;
    }
    s.running = true;
    out_->run.push_back(
        {.node = id, .action = n.action, .target = target, .started = true});
    return S::kRunning;
  }

  // Scores the utility node's children; `current` is the running child.
  // With a trace, or when `candidates` are asked for (to find the next
  // best), the whole decision is written; otherwise only its outcome.
  const BatchDecision& Score(int id, int current, int current_target,
                             size_t slot, bool candidates = false) {
    const CompiledNode& n = tree_.node(id);
    AgentInput in = agent_;
    in.current_action = current;
    in.current_target = current < 0 ? kAnyTarget : current_target;
    if (!agent_.seconds_since_action.empty()) {
      // Per thread, not per tick: each Score hands it to the decider and is
      // done with it before any other node scores.
      thread_local std::vector<float> since;
      since.clear();
      for (int32_t a : n.choice_actions) {
        since.push_back(a >= 0 ? agent_.seconds_since_action[a] : kNeverRan);
      }
      in.seconds_since_action = since;
    } else {
      in.seconds_since_action = {};
    }
    // Each utility node draws from its own stream of the agent's seed.
    in.seed = SplitMix64::Mix(
        agent_.seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(id + 1)));
    // The agent fits the set (checked by TickTree), so it fits the choices.
    if (trace_) {
      out_->utility.push_back({.node = id});
      out_->path[slot].utility = static_cast<int32_t>(out_->utility.size() - 1);
      Decision* d = &out_->utility.back().decision;
      (void)Decide(*n.choices, in, level_, d);
      return *d;
    }
    if (candidates) {
      thread_local Decision scratch;  // a tick allocates nothing here
      (void)Decide(*n.choices, in, ExplainLevel::kNone, &scratch);
      return scratch;
    }
    thread_local BatchDecider decider;
    thread_local BatchDecision outcome;
    decider.DecideChecked(*n.choices, absl::MakeConstSpan(&in, 1),
                          ExplainLevel::kNone, absl::MakeSpan(&outcome, 1));
    return outcome;
  }

  // The best eligible candidate not in `tried`: highest rank, then score,
  // then order. Returns its index into `d.candidates`, or -1.
  static int NextBest(const Decision& d, uint32_t tried,
                      const CompiledBehaviourSet& choices) {
    int best = -1;
    for (size_t i = 0; i < d.candidates.size(); ++i) {
      const CandidateTrace& c = d.candidates[i];
      if (!c.eligible || (tried & (1u << c.action))) continue;
      if (best < 0) {
        best = static_cast<int>(i);
        continue;
      }
      const CandidateTrace& b = d.candidates[best];
      const int rc = choices.actions()[c.action].rank;
      const int rb = choices.actions()[b.action].rank;
      if (rc > rb || (rc == rb && c.score > b.score))
        best = static_cast<int>(i);
    }
    return best;
  }

  // utility: runs the best-scoring child (and, for a per-target action, the
  // best target); `every_tick` re-scores and switches when another child
  // wins; `next_best` runs the best remaining child after a failure.
  S Utility(int id, size_t slot) {
    const CompiledNode& n = tree_.node(id);
    NodeState& s = st_[id];
    int child = -1, target = -1;
    uint32_t tried = 0;
    if (s.running) {
      child = static_cast<int>(s.index);
      target = static_cast<int>(s.target) - 1;
      // Targets are matched by position: one past the end of this tick's
      // targets has gone (the leaf continues without a target id).
      if (target >= static_cast<int>(agent_.targets.size()))
        target = kTargetGone;
      tried = s.mask_a;
      if (n.rescore == Rescore::kEveryTick) {
        const BatchDecision& d = Score(id, child, target, slot);
        if (d.action < 0) {  // nothing is worth running now, not even this
          Halt(tree_.child(n, child));
          Reset(id);
          return S::kFailure;
        }
        if (d.action != child || d.target != target) {
          Halt(tree_.child(n, child));
          child = d.action;
          target = d.target;
        }
      }
    } else {
      const BatchDecision& d = Score(id, -1, -1, slot);
      if (d.action < 0) return S::kFailure;
      child = d.action;
      target = d.target;
    }
    while (true) {
      const S c = Tick(tree_.child(n, child), target);
      if (c == S::kRunning) {
        NodeState& now = st_[id];
        now.running = true;
        now.index = static_cast<uint32_t>(child);
        now.target = static_cast<uint32_t>(std::max(target, -1) + 1);
        now.mask_a = tried;
        return c;
      }
      if (c == S::kSuccess || n.on_failure == OnChildFailure::kFail) {
        Reset(id);
        return c;
      }
      tried |= 1u << child;
      const auto& d = static_cast<const Decision&>(
          Score(id, -1, -1, slot, /*candidates=*/true));
      const int next = NextBest(d, tried, *n.choices);
      if (next < 0) {
        Reset(id);
        return S::kFailure;
      }
      child = d.candidates[next].action;
      target = d.candidates[next].target;
    }
  }

  const CompiledTree& tree_;
  const AgentInput& agent_;
  const TreeInput& in_;
  const int64_t now_;
  const bool trace_;
  const ExplainLevel level_;
  TreeTick* out_;
  std::vector<NodeState>& st_;
};

}  // namespace

const char* NodeStatusName(NodeStatus status) {
  switch (status) {
    case NodeStatus::kIdle:
      return "idle";
    case NodeStatus::kRunning:
      return "running";
    case NodeStatus::kSuccess:
      return "success";
    case NodeStatus::kFailure:
      return "failure";
  }
  return "?";
}

absl::Status TickTree(const CompiledBehaviourSet& set, const AgentInput& agent,
                      const TreeInput& in, ExplainLevel level, TreeTick* out) {
  // Everything but the state, which an error clears and a tick rewrites.
  auto clear = [out] {
    out->status = NodeStatus::kIdle;
    out->run.clear();
    out->halted.clear();
    out->reset = TreeReset::kNone;
    out->path.clear();
    out->utility.clear();
    out->ticked_nodes = 0;
  };
  if (set.tree() == nullptr) {
    clear();
    out->state.clear();
    return FieldError(
        absl::StatusCode::kInvalidArgument, ErrorReason::kOutOfRange,
        "tree_state",
        absl::StrCat("behaviour set ", set.name(), " has no tree"));
  }
  absl::Status s = CheckAgentInput(set, agent);
  if (s.ok() && (!std::isfinite(in.game_time) || in.game_time < 0 ||
                 in.game_time > 9e15 / 1000)) {
    s = FieldError(absl::StatusCode::kInvalidArgument, ErrorReason::kOutOfRange,
                   "game_time",
                   absl::StrCat("must be a finite number of seconds >= 0, got ",
                                in.game_time));
  }
  if (!s.ok()) {
    clear();
    out->state.clear();
    return s;
  }
  // `in.state` may point into out->state (the previous tick's answer fed
  // straight back): out->state is not touched before the end.
  thread_local std::vector<NodeState> states, before;
  const TreeReset reset = DecodeTreeState(set, in.state, &states);
  before = states;
  clear();
  out->reset = reset;
  Ticker ticker(set, agent, in, level, out, &states);
  out->status = ticker.Tick(0, -1);
  // A leaf usually runs for many ticks with nothing else changing: then the
  // state given is the state to return, and is not encoded again. (Compared
  // byte for byte, padding included: a false difference only re-encodes.)
  const bool unchanged = reset == TreeReset::kNone && !in.state.empty() &&
                         std::memcmp(static_cast<const void*>(before.data()),
                                     static_cast<const void*>(states.data()),
                                     states.size() * sizeof(NodeState)) == 0;
  if (!unchanged) {
    EncodeTreeState(set, states, &out->state);
  } else if (in.state.data() != out->state.data() ||
             in.state.size() != out->state.size()) {
    out->state.assign(in.state.data(), in.state.size());
  }
  return absl::OkStatus();
}

}  // namespace utilityd::engine
