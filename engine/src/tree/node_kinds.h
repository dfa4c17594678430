// The behaviour-tree node kinds, one block each, and the one list that
// registers them (docs/TREES.md). A kind is a struct with
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
// NodeParams and FindNodeKind) and the inspector (GET /api/v1/format) all
// read from NodeKinds below: adding a kind means its enumerator, its block,
// its entry in NodeKinds and its proto message; a kind without every member
// above fails to compile (static_assert below). Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_NODE_KINDS_H_
#define UTILITYD_ENGINE_SRC_TREE_NODE_KINDS_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "set/flat_set.h"
#include "tree/state_codec.h"
#include "tree/ticker.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/node_traits.h"
#include "utilityd/engine/random.h"
#include "utilityd/engine/scoring_rules.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine::internal {

using S = NodeStatus;

// What a kind's Validate sees: the node's place and a way to report.
struct NodeCheck {
  const SetDefinition& def;
  const std::string& at;    // the node, e.g. "tree.sequence.children[1]"
  const std::string& kind;  // at + "." + its kind's name
  NodeKind parent;          // the root's parent counts as a sequence
  std::vector<ValidationIssue>* issues;

  void Add(std::string path, std::string message) const {
    issues->push_back({std::move(path), std::move(message)});
  }
};

// What a kind's Compile sees: the definition, the compiled flat set (for
// action and factor indices) and the tree being built (for curve points).
struct NodeCompile {
  const SetDefinition& def;
  const CompiledBehaviourSet& set;
  CompiledTree& tree;
  const std::string& at;
};

// Helpers the blocks share (tree_compile.cc).
// The field path of child `i` of the node at `at`, as the format writes it:
// "tree.fallback.children[1]", "tree.inverter.child".
std::string ChildPath(const std::string& at, const TreeNodeDefinition& n,
                      size_t i);
// The name a utility node's child goes by: its label, or its action's name.
std::string ChoiceName(const TreeNodeDefinition& child);
const ActionDefinition* FindActionDef(const SetDefinition& def,
                                      const std::string& name);
// The set a utility node chooses in: its children as actions, with the
// set's factors, scoring, selection (without the fallback) and
// personalities (restricted to these actions).
SetDefinition ChoiceSet(const SetDefinition& def,
                        const TreeNodeDefinition& node);
// The bits of node `n`'s children.
inline uint64_t AllChildren(const CompiledNode& n) {
  return n.child_count >= 64 ? ~0ull : (1ull << n.child_count) - 1;
}

// The defaults every block starts from: no parameters, nothing kept, no
// state fields, nothing to check or compile, nothing extra on halt.
struct NodeBase {
  static constexpr std::array<NodeParam, 0> kParams = {};
  static constexpr bool kKeepsRunningChild = false;
  static constexpr bool kKeepsTimeIdle = false;
  static constexpr bool kKeepsPlaceIdle = false;
  static constexpr bool kAnswersRunning = false;
  static constexpr NodeOrder kOrder = NodeOrder::kNone;
  static constexpr S kGoOn = S::kIdle;
  static constexpr bool kChildEnteredWithIt = false;
  static constexpr size_t kStateBytes = 0;
  static bool MayAnswer(const CompiledNode&, S) { return true; }
  static bool TicksChildren(const CompiledNode&) { return true; }
  static void Validate(const TreeNodeDefinition&, const NodeCheck&) {}
  static absl::Status Compile(const TreeNodeDefinition&, const NodeCompile&,
                              CompiledNode&) {
    return absl::OkStatus();
  }
  static void OnHalt(Ticker&, int) {}
  static Fit Read(const CompiledNode&, Reader&, NodeState*) { return Fit::kOk; }
  static char* Write(const CompiledNode&, const NodeState&, char* at) {
    return at;
  }
};

// A composite whose state is the running child's index.
struct RunsOneChild : NodeBase {
  static constexpr NodeArity kArity = NodeArity::kChildren;
  static constexpr bool kKeepsRunningChild = true;
  static constexpr size_t kStateBytes = 5;
  static Fit Read(const CompiledNode& n, Reader& r, NodeState* s) {
    uint64_t a = 0;
    if (!r.Varint(&a)) return Fit::kMalformed;
    if (a >= n.child_count) return Fit::kOutOfRange;
    s->index = static_cast<uint32_t>(a);
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutVarint(at, s.index);
  }
  // Ticks child `i` and answers as it does: running, the node runs it;
  // finished, the node is done.
  static S RunChild(Ticker& t, int id, uint32_t i) {
    const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
    if (c == S::kRunning) {
      t.state(id).running = true;
      t.state(id).index = i;
      return c;
    }
    t.Reset(id);
    return c;
  }
};

// Children in order: sequence and reactive_sequence go on while a child
// succeeds (`kGoOn` success), fallback and reactive_fallback while one
// fails. The plain kinds start from the running child, remembered across
// ticks; the reactive ones tick every child from the first, every tick, and
// a child that runs or decides halts the one running before (a conditional
// abort when an earlier child now decides).
template <S kPass, bool kReactive>
struct Ordered : RunsOneChild {
  static constexpr NodeOrder kOrder =
      kReactive ? NodeOrder::kReactive : NodeOrder::kResumes;
  static constexpr S kGoOn = kPass;
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    const NodeState& s = t.state(id);
    for (uint32_t i = !kReactive && s.running ? s.index : 0; i < n.child_count;
         ++i) {
      const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
      // (Running is never kGoOn: this is "runs or decides".)
      if (kReactive && c != kGoOn) {
        t.HaltRunningChildExcept(id, static_cast<int>(i));
      }
      if (c == S::kRunning) {
        t.state(id).running = true;
        t.state(id).index = i;
        return S::kRunning;
      }
      if (c != kGoOn) {
        t.Reset(id);
        return c;
      }
    }
    t.Reset(id);
    return kGoOn;
  }
};
struct SequenceNode : Ordered<S::kSuccess, false> {
  static constexpr NodeKind kKind = NodeKind::kSequence;
  static constexpr const char* kName = "sequence";
};
struct FallbackNode : Ordered<S::kFailure, false> {
  static constexpr NodeKind kKind = NodeKind::kFallback;
  static constexpr const char* kName = "fallback";
};
struct ReactiveSequenceNode : Ordered<S::kSuccess, true> {
  static constexpr NodeKind kKind = NodeKind::kReactiveSequence;
  static constexpr const char* kName = "reactive_sequence";
};
struct ReactiveFallbackNode : Ordered<S::kFailure, true> {
  static constexpr NodeKind kKind = NodeKind::kReactiveFallback;
  static constexpr const char* kName = "reactive_fallback";
};

// parallel: every child not yet finished, each tick; succeeds once
// `success_threshold` children succeeded, fails once `failure_threshold`
// failed or success is out of reach; the rest are halted then.
struct ParallelNode : NodeBase {
  static constexpr NodeKind kKind = NodeKind::kParallel;
  static constexpr const char* kName = "parallel";
  static constexpr NodeArity kArity = NodeArity::kChildren;
  static constexpr std::array<NodeParam, 2> kParams = {
      {{"success_threshold", &TreeNodeDefinition::success_threshold},
       {"failure_threshold", &TreeNodeDefinition::failure_threshold}}};
  static constexpr size_t kStateBytes = 10;

  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    const int children = static_cast<int>(n.children.size());
    if (children > kMaxParallelChildren) {
      check.Add(check.kind + ".children",
                absl::StrCat("at most ", kMaxParallelChildren,
                             " children, got ", children));
    }
    Threshold(check, check.kind + ".success_threshold", n.success_threshold,
              children);
    Threshold(check, check.kind + ".failure_threshold", n.failure_threshold,
              children);
  }
  static absl::Status Compile(const TreeNodeDefinition& d, const NodeCompile&,
                              CompiledNode& c) {
    const int children = static_cast<int>(d.children.size());
    c.success_threshold = ParallelThreshold(d.success_threshold, children);
    c.failure_threshold = ParallelThreshold(d.failure_threshold, children);
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    const int total = static_cast<int>(n.child_count);
    for (uint32_t i = 0; i < n.child_count; ++i) {
      const uint32_t bit = 1u << i;
      if ((t.state(id).mask_a | t.state(id).mask_b) & bit) continue;
      const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
      NodeState& s = t.state(id);
      if (c == S::kSuccess) s.mask_a |= bit;
      if (c == S::kFailure) s.mask_b |= bit;
      const int ok = __builtin_popcount(s.mask_a);
      const int bad = __builtin_popcount(s.mask_b);
      if (ok >= n.success_threshold) {
        t.HaltChildrenExcept(id, -1);
        t.Reset(id);
        return S::kSuccess;
      }
      if (bad >= n.failure_threshold || total - bad < n.success_threshold) {
        t.HaltChildrenExcept(id, -1);
        t.Reset(id);
        return S::kFailure;
      }
    }
    t.state(id).running = true;
    return S::kRunning;
  }
  static Fit Read(const CompiledNode& n, Reader& r, NodeState* s) {
    uint64_t a = 0, b = 0;
    if (!r.Varint(&a) || !r.Varint(&b)) return Fit::kMalformed;
    const uint64_t all = AllChildren(n);
    if ((a & ~all) || (b & ~all) || (a & b)) return Fit::kOutOfRange;
    s->mask_a = static_cast<uint32_t>(a);
    s->mask_b = static_cast<uint32_t>(b);
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutVarint(PutVarint(at, s.mask_a), s.mask_b);
  }

 private:
  static void Threshold(const NodeCheck& check, const std::string& at, int v,
                        int children) {
    const int count = ParallelThreshold(v, children);
    if (count < 1 || count > children) {
      check.Add(at,
                absl::StrCat("must come to 1..", children,
                             " (the number of children): a count, or a "
                             "negative value counted from all (-1 = all, "
                             "-2 = all but one), got ",
                             v, v < 0 ? absl::StrCat(" (", count, ")") : ""));
    }
  }
};

// A decorator: one child.
struct Decorator : NodeBase {
  static constexpr NodeArity kArity = NodeArity::kChild;
};

// inverter, force_success, force_failure: the child's outcome mapped;
// running passes through.
template <S kOnSuccess, S kOnFailure>
struct Flip : Decorator {
  static constexpr bool kChildEnteredWithIt = true;
  static bool MayAnswer(const CompiledNode&, S s) {
    return s == S::kRunning || s == kOnSuccess || s == kOnFailure;
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const S c = t.Tick(t.child(id, 0), -1);
    t.state(id).running = c == S::kRunning;
    if (c == S::kRunning) return c;
    return c == S::kSuccess ? kOnSuccess : kOnFailure;
  }
};
struct InverterNode : Flip<S::kFailure, S::kSuccess> {
  static constexpr NodeKind kKind = NodeKind::kInverter;
  static constexpr const char* kName = "inverter";
};
struct ForceSuccessNode : Flip<S::kSuccess, S::kSuccess> {
  static constexpr NodeKind kKind = NodeKind::kForceSuccess;
  static constexpr const char* kName = "force_success";
};
struct ForceFailureNode : Flip<S::kFailure, S::kFailure> {
  static constexpr NodeKind kKind = NodeKind::kForceFailure;
  static constexpr const char* kName = "force_failure";
};

// repeat (`kAgain` success) and retry (`kAgain` failure): the child again,
// in the same tick, until `count` runs ended in `kAgain` or one did not.
// 0 is BehaviorTree.CPP's "do not tick the child"; -1 (for ever) is
// refused, see docs/TREES.md.
template <typename Self, S kAgain>
struct Loop : Decorator {
  static constexpr size_t kStateBytes = 5;
  // A count of 0 answers kAgain without ticking the child.
  static bool MayAnswer(const CompiledNode& n, S s) {
    return n.count != 0 || s == kAgain;
  }
  static bool TicksChildren(const CompiledNode& n) { return n.count != 0; }
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    const NodeParam& count = Self::kParams[0];
    const int v = n.*count.integer;
    if (v < 0 || v > kMaxRepeat) {
      check.Add(absl::StrCat(check.kind, ".", count.name),
                absl::StrCat("must be within 0..", kMaxRepeat, ", got ", v,
                             v < 0 ? " (no endless repeat: every run of the "
                                     "child costs the game a tick)"
                                   : ""));
    }
  }
  static absl::Status Compile(const TreeNodeDefinition& d, const NodeCompile&,
                              CompiledNode& c) {
    c.count = d.*Self::kParams[0].integer;
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    if (n.count == 0) return kAgain;  // never ticked
    uint32_t done = t.state(id).running ? t.state(id).index : 0;
    while (true) {
      const S c = t.Tick(t.child(id, 0), -1);
      if (c == S::kRunning) {
        t.state(id).running = true;
        t.state(id).index = done;
        return S::kRunning;
      }
      if (c != kAgain) {
        t.Reset(id);
        return c;
      }
      if (++done >= static_cast<uint32_t>(n.count)) {
        t.Reset(id);
        return kAgain;
      }
    }
  }
  static Fit Read(const CompiledNode& n, Reader& r, NodeState* s) {
    uint64_t a = 0;
    if (!r.Varint(&a)) return Fit::kMalformed;
    if (a >= static_cast<uint64_t>(n.count)) return Fit::kOutOfRange;
    s->index = static_cast<uint32_t>(a);
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutVarint(at, s.index);
  }
};
struct RepeatNode : Loop<RepeatNode, S::kSuccess> {
  static constexpr NodeKind kKind = NodeKind::kRepeat;
  static constexpr const char* kName = "repeat";
  static constexpr std::array<NodeParam, 1> kParams = {
      {{"times", &TreeNodeDefinition::times}}};
};
struct RetryNode : Loop<RetryNode, S::kFailure> {
  static constexpr NodeKind kKind = NodeKind::kRetry;
  static constexpr const char* kName = "retry";
  static constexpr std::array<NodeParam, 1> kParams = {
      {{"attempts", &TreeNodeDefinition::attempts}}};
};

// A decorator timed in game seconds (cooldown, timeout).
struct Timed : Decorator {
  static constexpr std::array<NodeParam, 1> kParams = {
      {{"seconds", nullptr, &TreeNodeDefinition::seconds}}};
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    if (!std::isfinite(n.seconds) || n.seconds <= 0 || n.seconds > 1e9) {
      check.Add(check.kind + ".seconds",
                absl::StrCat("must be a number of seconds above 0 (at most "
                             "1e9), got ",
                             n.seconds));
    }
  }
  static absl::Status Compile(const TreeNodeDefinition& d, const NodeCompile&,
                              CompiledNode& c) {
    c.millis = static_cast<int64_t>(std::llround(d.seconds * 1000.0));
    return absl::OkStatus();
  }
};

// A timed decorator whose state, while it runs, is one game time.
struct TimedRun : Timed {
  static constexpr size_t kStateBytes = 10;
  static Fit Read(const CompiledNode&, Reader& r, NodeState* s) {
    s->has_time = true;
    return r.Time(&s->millis) ? Fit::kOk : Fit::kMalformed;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutTime(at, s.millis);
  }
};

// cooldown: after the child finishes, fails without ticking it until
// `seconds` of game time have passed.
struct CooldownNode : Timed {
  static constexpr NodeKind kKind = NodeKind::kCooldown;
  static constexpr const char* kName = "cooldown";
  static constexpr bool kKeepsTimeIdle = true;
  static constexpr bool kChildEnteredWithIt = true;
  static constexpr size_t kStateBytes = 1 + 10;
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    NodeState& s = t.state(id);
    if (!s.running && s.has_time) {
      if (t.now() < s.millis) return S::kFailure;
      s.has_time = false;
    }
    const S c = t.Tick(t.child(id, 0), -1);
    NodeState& after = t.state(id);
    after.running = c == S::kRunning;
    if (c != S::kRunning) {
      after.has_time = true;
      after.millis = t.now() + n.millis;
    }
    return c;
  }
  // Flags (1 running, 2 a time follows), then the time it is ready at.
  static Fit Read(const CompiledNode&, Reader& r, NodeState* s) {
    uint64_t a = 0;
    if (!r.Varint(&a)) return Fit::kMalformed;
    if (a == 0 || a > 3) return Fit::kOutOfRange;
    s->running = (a & 1) != 0;
    s->has_time = (a & 2) != 0;
    if (s->has_time && !r.Time(&s->millis)) return Fit::kMalformed;
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    at = PutVarint(at, (s.running ? 1u : 0u) | (s.has_time ? 2u : 0u));
    return s.has_time ? PutTime(at, s.millis) : at;
  }
};

// timeout: fails, halting the child, once `seconds` of game time have
// passed since it was entered (checked when the tick starts). Its time:
// when it was entered.
struct TimeoutNode : TimedRun {
  static constexpr NodeKind kKind = NodeKind::kTimeout;
  static constexpr const char* kName = "timeout";
  static constexpr bool kChildEnteredWithIt = true;
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    NodeState& s = t.state(id);
    if (s.running) {
      if (t.now() - s.millis >= n.millis) {
        t.Halt(id);
        return S::kFailure;
      }
    } else {
      s.has_time = true;
      s.millis = t.now();
    }
    const S c = t.Tick(t.child(id, 0), -1);
    if (c == S::kRunning) {
      t.state(id).running = true;
      return c;
    }
    t.Reset(id);
    return c;
  }
};

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

// if_then_else and while_do_else: 2 or 3 children, the first a condition.
struct Branching : RunsOneChild {
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    if (n.children.size() < 2 || n.children.size() > 3) {
      check.Add(check.kind + ".children",
                absl::StrCat("needs 2 or 3 children (the condition, the "
                             "branch it chooses on success and, optionally, "
                             "the one on failure), got ",
                             n.children.size()));
    }
  }
  // The branch a condition's outcome chooses: 1 on success, 2 on failure
  // (0: none, the node fails).
  static uint32_t Branch(const CompiledNode& n, S condition) {
    if (condition == S::kSuccess) return 1;
    return n.child_count == 3 ? 2 : 0;
  }
};

// if_then_else: the condition (child 0) is ticked until it decides; the
// branch it chose runs to its end, the condition not ticked meanwhile.
struct IfThenElseNode : Branching {
  static constexpr NodeKind kKind = NodeKind::kIfThenElse;
  static constexpr const char* kName = "if_then_else";
  static S Tick(Ticker& t, int id, int, size_t) {
    const NodeState& s = t.state(id);
    uint32_t branch = s.running ? s.index : 0;
    if (branch == 0) {
      const S c = RunChild(t, id, 0);
      if (c == S::kRunning) return c;
      branch = Branch(t.node(id), c);
      if (branch == 0) return S::kFailure;  // (reset by RunChild)
    }
    return RunChild(t, id, branch);
  }
};

// while_do_else: the condition (child 0) every tick chooses the branch,
// halting the other one if it runs. The condition must decide in one tick
// (a running condition would leave a branch running unticked, which the
// state, one running child per node, does not hold).
struct WhileDoElseNode : Branching {
  static constexpr NodeKind kKind = NodeKind::kWhileDoElse;
  static constexpr const char* kName = "while_do_else";
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    Branching::Validate(n, check);
    if (!n.children.empty() && CanRun(n.children[0])) {
      check.Add(check.kind + ".children[0]",
                "the condition must decide in one tick: no action, utility, "
                "delay or keep_running_until_failure under it");
    }
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    const uint32_t branch = Branch(n, t.Tick(t.child(id, 0), -1));
    t.HaltRunningChildExcept(id, static_cast<int>(branch));
    if (branch == 0) {
      t.Reset(id);
      return S::kFailure;
    }
    return RunChild(t, id, branch);
  }
  // Whether the subtree can answer running (a kind's kAnswersRunning).
  static bool CanRun(const TreeNodeDefinition& n) {
    if (NodeKindAnswersRunning(n.kind)) return true;
    for (const TreeNodeDefinition& c : n.children) {
      if (CanRun(c)) return true;
    }
    return false;
  }
};

// keep_running_until_failure: running while the child succeeds (it starts
// over next tick); failure when it fails.
struct KeepRunningUntilFailureNode : Decorator {
  static constexpr NodeKind kKind = NodeKind::kKeepRunningUntilFailure;
  static constexpr const char* kName = "keep_running_until_failure";
  static constexpr bool kAnswersRunning = true;
  static S Tick(Ticker& t, int id, int, size_t) {
    const S c = t.Tick(t.child(id, 0), -1);
    if (c == S::kFailure) {
      t.Reset(id);
      return c;
    }
    t.state(id).running = true;
    return S::kRunning;
  }
};

// delay: running for `seconds` of game time after it is entered, the child
// not ticked; then ticks the child and answers as it does. Its time: when
// the child may start.
struct DelayNode : TimedRun {
  static constexpr NodeKind kKind = NodeKind::kDelay;
  static constexpr const char* kName = "delay";
  static constexpr bool kAnswersRunning = true;
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    NodeState& s = t.state(id);
    if (!s.running) {
      s.running = true;
      s.has_time = true;
      s.millis = t.now() + n.millis;  // when the child may start
    }
    if (t.now() < s.millis) return S::kRunning;
    const S c = t.Tick(t.child(id, 0), -1);
    if (c != S::kRunning) t.Reset(id);
    return c;
  }
};

// switch: child i when the factor equals case i, the last child when it
// equals none (or is NaN); chosen every tick, a change halting the running
// child.
struct SwitchNode : RunsOneChild {
  static constexpr NodeKind kKind = NodeKind::kSwitch;
  static constexpr const char* kName = "switch";
  static constexpr int kMaxCases = 16;
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    std::vector<std::string> names;
    bool known = false;
    for (const FactorDefinition& f : check.def.factors) {
      names.push_back(f.name);
      known = known || f.name == n.factor;
    }
    if (n.factor.empty()) {
      check.Add(check.kind + ".factor", "is required");
    } else if (!known) {
      check.Add(check.kind + ".factor",
                UnknownNameMessage("factor", n.factor, names));
    }
    const size_t cases = n.cases.size();
    if (cases < 1 || cases > static_cast<size_t>(kMaxCases)) {
      check.Add(check.kind + ".cases",
                absl::StrCat("needs 1..", kMaxCases, " values, got ", cases));
    } else if (n.children.size() != cases + 1) {
      check.Add(check.kind + ".children",
                absl::StrCat("needs one child per case and one for none of "
                             "them: ",
                             cases + 1, ", got ", n.children.size()));
    }
    for (size_t i = 0; i < cases; ++i) {
      const double v = n.cases[i];
      const bool repeated = std::find(n.cases.begin(), n.cases.begin() + i,
                                      v) != n.cases.begin() + i;
      if (!IsFiniteFloat(v) || repeated) {
        check.Add(absl::StrCat(check.kind, ".cases[", i, "]"),
                  absl::StrCat(repeated ? "repeats an earlier case: "
                                        : "must be a finite number: ",
                               v));
      }
    }
  }
  static absl::Status Compile(const TreeNodeDefinition& d,
                              const NodeCompile& in, CompiledNode& c) {
    c.condition.name = d.factor;
    c.condition.factor = in.set.FindFactor(d.factor);
    c.cases.assign(d.cases.begin(), d.cases.end());
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    const float v = t.agent().factors[n.condition.factor];
    const auto hit = std::find(n.cases.begin(), n.cases.end(), v);
    const int match = static_cast<int>(hit - n.cases.begin());  // or last
    t.HaltRunningChildExcept(id, match);
    return RunChild(t, id, static_cast<uint32_t>(match));
  }
};

// sequence_with_memory: a sequence that keeps its place when a child fails
// or it is halted: the next tick starts from that child again, not from the
// first (BehaviorTree.CPP's SequenceWithMemory); it starts over from the
// first child once every child has succeeded. Its state: the place, with a
// flag for running (an idle place is kept).
struct SequenceWithMemoryNode : RunsOneChild {
  static constexpr NodeKind kKind = NodeKind::kSequenceWithMemory;
  static constexpr const char* kName = "sequence_with_memory";
  static constexpr bool kKeepsPlaceIdle = true;
  static constexpr NodeOrder kOrder = NodeOrder::kKeepsPlace;
  static constexpr S kGoOn = S::kSuccess;
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    for (uint32_t i = t.state(id).index; i < n.child_count; ++i) {
      const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
      NodeState& s = t.state(id);
      s.index = i;
      s.kept = false;
      if (c == S::kRunning) {
        s.running = true;
        return c;
      }
      if (c == S::kFailure) {
        s.running = false;
        s.kept = i > 0;
        if (!s.kept) t.Reset(id);
        return c;
      }
    }
    t.Reset(id);
    return S::kSuccess;
  }
  // Halted: idle, its place kept (its children are halted already).
  static void OnHalt(Ticker& t, int id) {
    NodeState& s = t.state(id);
    s.running = false;
    s.kept = s.index > 0;
  }
  static Fit Read(const CompiledNode& n, Reader& r, NodeState* s) {
    uint64_t a = 0;
    if (!r.Varint(&a)) return Fit::kMalformed;
    const uint64_t place = a >> 1;
    s->running = (a & 1) != 0;
    if (place >= n.child_count || (!s->running && place == 0)) {
      return Fit::kOutOfRange;
    }
    s->kept = !s->running;
    s->index = static_cast<uint32_t>(place);
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutVarint(at, (uint64_t{s.index} << 1) | (s.running ? 1u : 0u));
  }
};

// run_once: ticks the child until it finishes once; from then on answers
// that outcome without ticking it (BehaviorTree.CPP's RunOnce with
// then_skip false; docs/TREES.md says why not its default). Halted while
// the child runs, it has not finished once. Its state: 0 running, else the
// kept outcome (1 success, 2 failure).
struct RunOnceNode : Decorator {
  static constexpr NodeKind kKind = NodeKind::kRunOnce;
  static constexpr const char* kName = "run_once";
  static constexpr bool kKeepsPlaceIdle = true;
  static constexpr bool kChildEnteredWithIt = true;
  static constexpr size_t kStateBytes = 1;
  static S Tick(Ticker& t, int id, int, size_t) {
    if (t.state(id).kept) {
      return t.state(id).index == 1 ? S::kSuccess : S::kFailure;
    }
    const S c = t.Tick(t.child(id, 0), -1);
    NodeState& s = t.state(id);
    s.running = c == S::kRunning;
    if (c != S::kRunning) {
      s.kept = true;
      s.index = c == S::kSuccess ? 1 : 2;
    }
    return c;
  }
  static Fit Read(const CompiledNode&, Reader& r, NodeState* s) {
    uint64_t a = 0;
    if (!r.Varint(&a)) return Fit::kMalformed;
    if (a > 2) return Fit::kOutOfRange;
    s->running = a == 0;
    s->kept = a != 0;
    s->index = static_cast<uint32_t>(a);
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutVarint(at, s.kept ? s.index : 0);
  }
};

// The registry: every kind, in the order of the NodeKind enumerators.
template <typename... K>
struct NodeKindList {};
using NodeKinds = NodeKindList<
    SequenceNode, FallbackNode, ReactiveSequenceNode, ReactiveFallbackNode,
    ParallelNode, InverterNode, ForceSuccessNode, ForceFailureNode, RepeatNode,
    RetryNode, CooldownNode, TimeoutNode, ConditionNode, ActionNode,
    UtilityNode, IfThenElseNode, WhileDoElseNode, KeepRunningUntilFailureNode,
    DelayNode, SwitchNode, SequenceWithMemoryNode, RunOnceNode>;

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
