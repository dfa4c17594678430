// The decorator node kinds, one block each (node_kinds.h lists what a block
// states): inverter, force_success, force_failure, repeat, retry, cooldown,
// timeout, keep_running_until_failure, delay, run_once and loop. Internal to
// the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_DECORATOR_KINDS_H_
#define UTILITYD_ENGINE_SRC_TREE_DECORATOR_KINDS_H_

#include "tree/node_kind_contract.h"
#include "utilityd/engine/identifier.h"

namespace utilityd::engine::internal {

// A decorator: one child.
struct Decorator : NodeBase {
  static constexpr NodeArity kArity = NodeArity::kChild;
};

// inverter, force_success, force_failure: the child's outcome mapped;
// running and skipped pass through.
template <S kOnSuccess, S kOnFailure>
struct Flip : Decorator {
  static constexpr bool kChildEnteredWithIt = true;
  static bool MayAnswer(const CompiledNode&, S s) {
    return s == S::kRunning || s == kOnSuccess || s == kOnFailure;
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const S c = t.Tick(t.child(id, 0), -1);
    t.state(id).running = c == S::kRunning;
    if (c == S::kRunning || c == S::kSkipped) return c;
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
    if (c != S::kRunning && c != S::kSkipped) {  // a skipped child never ran
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
    t.state(id).running = true;  // success or skipped: again next tick
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

// run_once: ticks the child until it finishes once; from then on answers
// that outcome (then_skip false, utilityd's default) or skipped (then_skip
// true, BehaviorTree.CPP's default) without ticking it. Halted while the
// child runs, or the child skipped, it has not finished once. Its state: 0
// running, else the kept outcome (1 success, 2 failure).
struct RunOnceNode : Decorator {
  static constexpr NodeKind kKind = NodeKind::kRunOnce;
  static constexpr const char* kName = "run_once";
  static constexpr bool kKeepsPlaceIdle = true;
  static constexpr bool kChildEnteredWithIt = true;
  static constexpr size_t kStateBytes = 1;
  static absl::Status Compile(const TreeNodeDefinition& d, const NodeCompile&,
                              CompiledNode& c) {
    c.then_skip = d.then_skip;
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    if (t.state(id).kept) {
      if (t.node(id).then_skip) return S::kSkipped;
      return t.state(id).index == 1 ? S::kSuccess : S::kFailure;
    }
    const S c = t.Tick(t.child(id, 0), -1);
    NodeState& s = t.state(id);
    s.running = c == S::kRunning;
    if (c == S::kSuccess || c == S::kFailure) {
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

// loop: BehaviorTree.CPP's LoopInt, LoopDouble and LoopBool over a queue
// written in the tree. As it starts it takes its `values` afresh; each tick
// whose child is not running, it writes the next value to its variable (if
// it has one) and ticks the child; it answers running while values are
// left or the child runs, failure as soon as the child fails, and
// `if_empty` in the tick it finds none left to start (at once when it has
// none). So n values take n + 1 ticks when the child finishes each in one,
// as in BT.CPP, whose loop answers RUNNING after each value. Its state:
// the values started (index) and whether the child runs (mask_a).
struct LoopNode : Decorator {
  static constexpr NodeKind kKind = NodeKind::kLoop;
  static constexpr const char* kName = "loop";
  static constexpr bool kAnswersRunning = true;
  static constexpr size_t kStateBytes = 3;
  static bool MayAnswer(const CompiledNode& n, S s) {
    if (n.values.empty()) return s == n.if_empty;
    return s == S::kRunning || s == S::kFailure || s == n.if_empty;
  }
  static bool TicksChildren(const CompiledNode& n) { return !n.values.empty(); }
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    if (n.values.size() > static_cast<size_t>(kMaxRepeat)) {
      check.Add(check.kind + ".values",
                absl::StrCat("holds ", n.values.size(), " values; at most ",
                             kMaxRepeat));
    }
    for (size_t i = 0; i < n.values.size(); ++i) {
      if (!std::isfinite(n.values[i])) {
        check.Add(absl::StrCat(check.kind, ".values[", i, "]"),
                  "must be a finite number");
      }
    }
    if (n.if_empty != S::kSuccess && n.if_empty != S::kFailure &&
        n.if_empty != S::kSkipped) {
      check.Add(check.kind + ".if_empty",
                "must be success, failure or skipped");
    }
    if (n.variable.empty()) return;
    if (!IsIdentifier(n.variable)) {
      check.Add(check.kind + ".variable",
                absl::StrCat("\"", n.variable, "\" is not a valid name"));
      return;
    }
    const bool factor = std::any_of(
        check.def.factors.begin(), check.def.factors.end(),
        [&n](const FactorDefinition& f) { return f.name == n.variable; });
    const bool constant =
        std::any_of(check.def.enums.begin(), check.def.enums.end(),
                    [&n](const auto& e) { return e.first == n.variable; });
    if (factor || constant) {
      check.Add(check.kind + ".variable",
                absl::StrCat("\"", n.variable, "\" is ",
                             factor ? "a factor, which the game writes"
                                    : "an enum's name, a constant",
                             ": a loop writes a tree variable"));
    }
  }
  static absl::Status Compile(const TreeNodeDefinition& d,
                              const NodeCompile& in, CompiledNode& c) {
    c.values = d.values;
    c.if_empty = d.if_empty;
    const auto& vars = in.tree.variables;
    const auto it = std::find(vars.begin(), vars.end(), d.variable);
    if (!d.variable.empty() && it != vars.end()) {
      c.variable = static_cast<int32_t>(it - vars.begin());
    }
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    NodeState& s = t.state(id);
    if (!s.running) s.index = s.mask_a = 0;  // the values afresh
    if (s.mask_a == 0) {                     // the child is not running
      if (s.index >= n.values.size()) {
        t.Reset(id);
        return n.if_empty;
      }
      if (n.variable >= 0) t.Assign(n.variable, n.values[s.index]);
      ++s.index;
    }
    s.running = true;
    const S c = t.Tick(t.child(id, 0), -1);
    if (c == S::kFailure) {
      t.Reset(id);
      return c;
    }
    t.state(id).mask_a = c == S::kRunning ? 1 : 0;
    return S::kRunning;
  }
  // The values started, doubled, plus 1 while the child runs.
  static Fit Read(const CompiledNode& n, Reader& r, NodeState* s) {
    uint64_t a = 0;
    if (!r.Varint(&a)) return Fit::kMalformed;
    if (a / 2 > n.values.size() || a / 2 == 0) return Fit::kOutOfRange;
    s->running = true;
    s->index = static_cast<uint32_t>(a / 2);
    s->mask_a = static_cast<uint32_t>(a % 2);
    return Fit::kOk;
  }
  static char* Write(const CompiledNode&, const NodeState& s, char* at) {
    return PutVarint(at, uint64_t{s.index} * 2 + s.mask_a);
  }
};

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_DECORATOR_KINDS_H_
