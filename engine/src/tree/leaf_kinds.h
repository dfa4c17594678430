// The leaf node kinds and the utility node, one block each (node_kinds.h
// lists what a block states): condition, action and utility, the kinds
// that read factors or score; the constant leaves; sleep, which takes the
// timed decorators' parameter and state (decorator_kinds.h); script and
// script_condition. Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_LEAF_KINDS_H_
#define UTILITYD_ENGINE_SRC_TREE_LEAF_KINDS_H_

#include "tree/decorator_kinds.h"
#include "tree/node_kind_contract.h"

namespace utilityd::engine::internal {

// condition: one consideration's curve output against a threshold; never
// runs.
struct ConditionNode : NodeBase {
  static constexpr NodeKind kKind = NodeKind::kCondition;
  static constexpr const char* kName = "condition";
  static constexpr NodeArity kArity = NodeArity::kLeaf;
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    const ConditionDefinition& c = n.condition;
    const FactorDefinition* factor = nullptr;
    std::vector<std::string> names;
    for (const FactorDefinition& f : check.def.factors) {
      names.push_back(f.name);
      if (f.name == c.factor) factor = &f;
    }
    const std::string& at = check.kind;
    if (c.factor.empty()) {
      check.Add(at + ".factor", "is required");
    } else if (factor == nullptr) {
      check.Add(at + ".factor", UnknownNameMessage("factor", c.factor, names));
    }
    const double lo = c.range_min.value_or(factor ? factor->min : 0.0);
    const double hi = c.range_max.value_or(factor ? factor->max : 1.0);
    if (!IsFiniteFloat(lo) || !IsFiniteFloat(hi)) {
      check.Add(at + ".range", "bounds must be finite numbers");
    } else if (lo == hi) {
      check.Add(at + ".range",
                absl::StrCat("is empty: min and max are both ", lo));
    }
    ValidateCurve(c.curve, at + ".curve", check.issues);
    if (!std::isfinite(c.threshold) || c.threshold < 0 || c.threshold > 1) {
      check.Add(at + ".threshold",
                absl::StrCat("must be within 0..1, got ", c.threshold));
    }
  }
  static absl::Status Compile(const TreeNodeDefinition& n,
                              const NodeCompile& in, CompiledNode& c) {
    const ConditionDefinition& d = n.condition;
    const int f = in.set.FindFactor(d.factor);
    const FactorDefinition& factor = in.def.factors[f];
    const double lo = d.range_min.value_or(factor.min);
    const double hi = d.range_max.value_or(factor.max);
    c.condition.name = d.factor;
    c.condition.factor = f;
    c.condition.range_lo = static_cast<float>(lo);
    c.condition.range_span = static_cast<float>(hi - lo);
    c.condition.curve = CompileCurve(d.curve, &in.tree.curve_points);
    c.threshold = static_cast<float>(d.threshold);
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t slot) {
    const CompiledNode& n = t.node(id);
    const CompiledConsideration& c = n.condition;
    const float raw = t.agent().factors[c.factor];
    float y = 0;
    if (std::isfinite(raw)) {
      y = EvaluateCurve(c.curve, Normalise(raw, c.range_lo, c.range_span),
                        t.tree().curve_points);
    }
    if (t.tracing()) t.out().path[slot].value = y;
    return std::isfinite(raw) && y >= n.threshold ? S::kSuccess : S::kFailure;
  }
  static Fit Read(const CompiledNode&, Reader&, NodeState*) {
    return Fit::kOutOfRange;  // a condition never runs
  }
};

// action: a leaf the game runs; one of the set's actions.
struct ActionNode : NodeBase {
  static constexpr NodeKind kKind = NodeKind::kAction;
  static constexpr const char* kName = "action";
  static constexpr NodeArity kArity = NodeArity::kLeaf;
  static constexpr bool kAnswersRunning = true;  // the game says
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    const ActionDefinition* a = FindActionDef(check.def, n.action);
    if (n.action.empty()) {
      check.Add(check.kind, "names no action");
    } else if (a == nullptr) {
      std::vector<std::string> names;  // for the nearest-name hint
      for (const ActionDefinition& d : check.def.actions) {
        names.push_back(d.name);
      }
      check.Add(check.kind, UnknownNameMessage("action", n.action, names));
    } else if (a->per_target && check.parent != NodeKind::kUtility) {
      check.Add(check.kind,
                absl::StrCat("\"", n.action,
                             "\" is per_target: only a utility node can "
                             "choose its target (make it a child of one)"));
    }
  }
  static absl::Status Compile(const TreeNodeDefinition& d,
                              const NodeCompile& in, CompiledNode& c) {
    c.action = in.set.FindAction(d.action);
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int target, size_t) {
    const CompiledNode& n = t.node(id);
    NodeState& s = t.state(id);
    if (s.running) {
      const S r = t.Reported(id);
      if (r == S::kSuccess || r == S::kFailure) {
        t.Reset(id);
        return r;
      }
      t.out().run.push_back({.node = id, .action = n.action, .target = target});
      return S::kRunning;
    }
    s.running = true;
    t.out().run.push_back(
        {.node = id, .action = n.action, .target = target, .started = true});
    return S::kRunning;
  }
  // Ticked earlier in this tick? Then it leaves the run list; one it was to
  // start never ran, so the game has nothing to stop. Otherwise the game is
  // told to stop it, unless it reported the leaf finished.
  static void OnHalt(Ticker& t, int id) {
    std::vector<TreeLeaf>& run = t.out().run;
    bool started_now = false;
    for (auto it = run.begin(); it != run.end(); ++it) {
      if (it->node == id) {
        started_now = it->started;
        run.erase(it);
        break;
      }
    }
    const S reported = t.Reported(id);
    if (!started_now && reported != S::kSuccess && reported != S::kFailure) {
      t.out().halted.push_back({.node = id,
                                .action = t.node(id).action,
                                .target = t.HaltTarget(id)});
    }
  }
};

// utility: runs the best-scoring child (and, for a per-target action, the
// best target); rescore every_tick re-scores and switches when another
// child wins; on_failure next_best runs the best remaining child after a
// failure.
struct UtilityNode : NodeBase {
  static constexpr NodeKind kKind = NodeKind::kUtility;
  static constexpr const char* kName = "utility";
  static constexpr NodeArity kArity = NodeArity::kChildren;
  static constexpr bool kAnswersRunning = true;
  static constexpr bool kKeepsRunningChild = true;
  static constexpr size_t kStateBytes = 15;

  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    if (n.children.size() > static_cast<size_t>(kMaxUtilityChildren)) {
      check.Add(check.kind + ".children",
                absl::StrCat("at most ", kMaxUtilityChildren, " children, got ",
                             n.children.size()));
      return;
    }
    if (!ChildrenUsable(n, check)) return;
    // The children's own considerations, checked as a set's actions are;
    // issues come back under the child's path.
    const SetDefinition sub = ChoiceSet(check.def, n);
    for (const ValidationIssue& issue : ValidateFlat(sub)) {
      for (size_t i = 0; i < n.children.size(); ++i) {
        const std::string prefix = absl::StrCat("actions[", i, "]");
        const TreeNodeDefinition& child = n.children[i];
        const bool own =
            child.kind != NodeKind::kAction || !child.considerations.empty();
        if (!own || !absl::StartsWith(issue.path, prefix + ".")) continue;
        std::string rest = issue.path.substr(prefix.size());
        if (absl::StartsWith(rest, ".weight")) rest = ".weight";
        if (absl::StartsWith(rest, ".rank")) rest = ".rank";
        check.Add(ChildPath(check.at, n, i) + rest, issue.message);
      }
    }
  }
  static absl::Status Compile(const TreeNodeDefinition& n,
                              const NodeCompile& in, CompiledNode& c) {
    absl::StatusOr<CompiledBehaviourSet> choices =
        CompileFlat(ChoiceSet(in.def, n));
    if (!choices.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(in.at, ": ", choices.status().message()));
    }
    c.choices =
        std::make_shared<const CompiledBehaviourSet>(*std::move(choices));
    for (const TreeNodeDefinition& child : n.children) {
      c.choice_actions.push_back(child.kind == NodeKind::kAction
                                     ? in.set.FindAction(child.action)
                                     : -1);
    }
    c.rescore = n.rescore;
    c.on_failure = n.on_failure;
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t slot) {
    const CompiledNode& n = t.node(id);
    const NodeState& s = t.state(id);
    int child = -1, target = -1;
    uint32_t tried = 0;
    if (s.running) {
      child = static_cast<int>(s.index);
      target = static_cast<int>(s.target) - 1;
      // Targets are matched by position: one past the end of this tick's
      // targets has gone (the leaf continues without a target id).
      if (target >= static_cast<int>(t.agent().targets.size()))
        target = kTargetGone;
      tried = s.mask_a;
      if (n.rescore == Rescore::kEveryTick) {
        const BatchDecision& d = Score(t, id, child, target, slot);
        if (d.action < 0) {  // nothing is worth running now, not even this
          t.Halt(t.child(id, child));
          t.Reset(id);
          return S::kFailure;
        }
        if (d.action != child || d.target != target) {
          t.Halt(t.child(id, child));
          child = d.action;
          target = d.target;
        }
      }
    } else {
      const BatchDecision& d = Score(t, id, -1, -1, slot);
      if (d.action < 0) return S::kFailure;
      child = d.action;
      target = d.target;
    }
    while (true) {
      const S c = t.Tick(t.child(id, child), target);
      if (c == S::kRunning) {
        NodeState& now = t.state(id);
        now.running = true;
        now.index = static_cast<uint32_t>(child);
        now.target = static_cast<uint32_t>(std::max(target, -1) + 1);
        now.mask_a = tried;
        return c;
      }
      if (c == S::kSuccess || n.on_failure == OnChildFailure::kFail) {
        t.Reset(id);
        return c;
      }
      tried |= 1u << child;
      const auto& d = static_cast<const Decision&>(
          Score(t, id, -1, -1, slot, /*candidates=*/true));
      const int next = NextBest(d, tried, *n.choices);
      if (next < 0) {
        t.Reset(id);
        return S::kFailure;
      }
      child = d.candidates[next].action;
      target = d.candidates[next].target;
    }
  }
  // The chosen child, its target + 1 (0: none) and the children tried.
  static Fit Read(const CompiledNode& n, Reader& r, NodeState* s) {
    uint64_t a = 0, b = 0, c = 0;
    if (!r.Varint(&a) || !r.Varint(&b) || !r.Varint(&c)) {
      return Fit::kMalformed;
    }
    if (a >= n.child_count || b > 0xffff || (c & ~AllChildren(n))) {
      return Fit::kOutOfRange;
    }
    s->index = static_cast<uint32_t>(a);
    s->target = static_cast<uint32_t>(b);
    s->mask_a = static_cast<uint32_t>(c);
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutVarint(PutVarint(PutVarint(at, s.index), s.target), s.mask_a);
  }

 private:
  // Whether every child can be scored: named once, with considerations
  // unless it is an action leaf (whose action must exist).
  static bool ChildrenUsable(const TreeNodeDefinition& n,
                             const NodeCheck& check) {
    absl::flat_hash_set<std::string> seen;
    bool usable = true;
    for (size_t i = 0; i < n.children.size(); ++i) {
      const TreeNodeDefinition& child = n.children[i];
      const std::string cat = ChildPath(check.at, n, i);
      const std::string name = ChoiceName(child);
      if (name.empty()) {
        check.Add(cat + ".name",
                  "is required: a utility node's child that is not an action "
                  "goes by its name in scores and metrics");
        usable = false;
      } else if (!seen.insert(name).second) {
        check.Add(cat + ".name",
                  absl::StrCat("two children of this utility node are "
                               "called \"",
                               name, "\": label one with `name`"));
        usable = false;
      }
      if (child.kind != NodeKind::kAction && child.considerations.empty()) {
        check.Add(cat + ".considerations",
                  "a utility node's child that is not an action needs "
                  "considerations to be scored by");
        usable = false;
      }
      if (child.kind == NodeKind::kAction &&
          FindActionDef(check.def, child.action) == nullptr) {
        usable = false;  // reported by the action leaf
      }
    }
    return usable;
  }

  // Scores the node's children; `current` is the running child. With a
  // trace, or when `candidates` are asked for (to find the next best), the
  // whole decision is written; otherwise only its outcome.
  static const BatchDecision& Score(Ticker& t, int id, int current,
                                    int current_target, size_t slot,
                                    bool candidates = false) {
    const CompiledNode& n = t.node(id);
    const AgentInput& agent = t.agent();
    AgentInput in = agent;
    in.current_action = current;
    in.current_target = current < 0 ? kAnyTarget : current_target;
    if (!agent.seconds_since_action.empty()) {
      // Per thread, not per tick: each Score hands it to the decider and is
      // done with it before any other node scores.
      thread_local std::vector<float> since;
      since.clear();
      for (int32_t a : n.choice_actions) {
        since.push_back(a >= 0 ? agent.seconds_since_action[a] : kNeverRan);
      }
      in.seconds_since_action = since;
    } else {
      in.seconds_since_action = {};
    }
    // Each utility node draws from its own stream of the agent's seed.
    in.seed = SplitMix64::Mix(
        agent.seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(id + 1)));
    // The agent fits the set (checked by TickTree), so it fits the choices.
    if (t.tracing()) {
      TreeTick& out = t.out();
      out.utility.push_back({.node = id});
      out.path[slot].utility = static_cast<int32_t>(out.utility.size() - 1);
      Decision* d = &out.utility.back().decision;
      (void)Decide(*n.choices, in, t.level(), d);
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
};

// always_success, always_failure: BehaviorTree.CPP's AlwaysSuccess and
// AlwaysFailure, a leaf answering one status whenever it is ticked; never
// runs.
template <S kAnswer>
struct Constant : NodeBase {
  static constexpr NodeArity kArity = NodeArity::kLeaf;
  static bool MayAnswer(const CompiledNode&, S s) { return s == kAnswer; }
  static S Tick(Ticker&, int, int, size_t) { return kAnswer; }
  static Fit Read(const CompiledNode&, Reader&, NodeState*) {
    return Fit::kOutOfRange;  // it never runs
  }
};
struct AlwaysSuccessNode : Constant<S::kSuccess> {
  static constexpr NodeKind kKind = NodeKind::kAlwaysSuccess;
  static constexpr const char* kName = "always_success";
};
struct AlwaysFailureNode : Constant<S::kFailure> {
  static constexpr NodeKind kKind = NodeKind::kAlwaysFailure;
  static constexpr const char* kName = "always_failure";
};

// sleep: BehaviorTree.CPP's Sleep in game seconds, a leaf running until
// `seconds` after it was entered, then succeeding. Halted, it sleeps its
// whole time again. Its state, while it runs: when it wakes.
struct SleepNode : TimedRun {
  static constexpr NodeKind kKind = NodeKind::kSleep;
  static constexpr const char* kName = "sleep";
  static constexpr NodeArity kArity = NodeArity::kLeaf;
  static constexpr bool kAnswersRunning = true;
  static bool MayAnswer(const CompiledNode&, S s) {
    return s == S::kRunning || s == S::kSuccess;
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    NodeState& s = t.state(id);
    if (!s.running) {
      s.running = true;
      s.has_time = true;
      s.millis = t.now() + t.node(id).millis;
      return S::kRunning;
    }
    if (t.now() < s.millis) return S::kRunning;
    t.Reset(id);
    return S::kSuccess;
  }
};

// script: BehaviorTree.CPP's Script, a leaf that runs its statements
// (assigning the tree's variables) and succeeds; never runs.
struct ScriptNode : NodeBase {
  static constexpr NodeKind kKind = NodeKind::kScript;
  static constexpr const char* kName = "script";
  static constexpr NodeArity kArity = NodeArity::kLeaf;
  static bool MayAnswer(const CompiledNode&, S s) { return s == S::kSuccess; }
  static S Tick(Ticker& t, int id, int, size_t) {
    t.Run(t.node(id).code);
    return S::kSuccess;
  }
  static Fit Read(const CompiledNode&, Reader&, NodeState*) {
    return Fit::kOutOfRange;  // it never runs
  }
};

// script_condition: BehaviorTree.CPP's ScriptCondition, a leaf that
// succeeds when its expression holds (neither 0 nor NaN), else fails.
struct ScriptConditionNode : NodeBase {
  static constexpr NodeKind kKind = NodeKind::kScriptCondition;
  static constexpr const char* kName = "script_condition";
  static constexpr NodeArity kArity = NodeArity::kLeaf;
  static bool MayAnswer(const CompiledNode&, S s) {
    return s == S::kSuccess || s == S::kFailure;
  }
  static S Tick(Ticker& t, int id, int, size_t slot) {
    const double v = t.Run(t.node(id).code);
    if (t.tracing()) t.out().path[slot].value = static_cast<float>(v);
    return ScriptHolds(v) ? S::kSuccess : S::kFailure;
  }
  static Fit Read(const CompiledNode&, Reader&, NodeState*) {
    return Fit::kOutOfRange;  // it never runs
  }
};

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_LEAF_KINDS_H_
