// The composite node kinds, one block each (node_kinds.h lists what a block
// states): the ordered ones (sequence, fallback, their reactive forms,
// sequence_with_memory), parallel, parallel_all, if_then_else,
// while_do_else, switch and try_catch.
// Internal to the engine.
#ifndef UTILITYD_ENGINE_SRC_TREE_COMPOSITE_KINDS_H_
#define UTILITYD_ENGINE_SRC_TREE_COMPOSITE_KINDS_H_

#include "tree/node_kind_contract.h"

namespace utilityd::engine::internal {

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
// abort when an earlier child now decides). A skipped child is passed over;
// when every child was skipped, the node answers skipped.
template <S kPass, bool kReactive>
struct Ordered : RunsOneChild {
  static constexpr NodeOrder kOrder =
      kReactive ? NodeOrder::kReactive : NodeOrder::kResumes;
  static constexpr S kGoOn = kPass;
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    const NodeState& s = t.state(id);
    const uint32_t first = !kReactive && s.running ? s.index : 0;
    uint32_t skipped = 0;
    for (uint32_t i = first; i < n.child_count; ++i) {
      const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
      if (c == S::kSkipped) {
        ++skipped;
        continue;
      }
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
    return skipped == n.child_count ? S::kSkipped : kGoOn;
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

// A composite ticking every unfinished child each tick (parallel,
// parallel_all): its state, the children that succeeded (mask_a) and
// failed (mask_b); at most kMaxParallelChildren children.
struct TicksAllChildren : NodeBase {
  static constexpr NodeArity kArity = NodeArity::kChildren;
  static constexpr size_t kStateBytes = 10;
  static void CheckChildren(const TreeNodeDefinition& n,
                            const NodeCheck& check) {
    const int children = static_cast<int>(n.children.size());
    if (children > kMaxParallelChildren) {
      check.Add(check.kind + ".children",
                absl::StrCat("at most ", kMaxParallelChildren,
                             " children, got ", children));
    }
  }
  // Ticks child `i` unless it finished in an earlier tick (then idle),
  // marking it in the masks when it finishes now.
  static S TickUnfinished(Ticker& t, int id, uint32_t i) {
    const uint32_t bit = 1u << i;
    if ((t.state(id).mask_a | t.state(id).mask_b) & bit) return S::kIdle;
    const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
    NodeState& s = t.state(id);
    if (c == S::kSuccess) s.mask_a |= bit;
    if (c == S::kFailure) s.mask_b |= bit;
    return c;
  }
  // A count of children, or a negative value counted from all of them,
  // must come to 1..children.
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
};

// parallel: every child not yet finished, each tick; succeeds once
// `success_threshold` children succeeded, fails once `failure_threshold`
// failed or success is out of reach; the rest are halted then.
struct ParallelNode : TicksAllChildren {
  static constexpr NodeKind kKind = NodeKind::kParallel;
  static constexpr const char* kName = "parallel";
  static constexpr std::array<NodeParam, 2> kParams = {
      {{"success_threshold", &TreeNodeDefinition::success_threshold},
       {"failure_threshold", &TreeNodeDefinition::failure_threshold}}};

  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    const int children = static_cast<int>(n.children.size());
    CheckChildren(n, check);
    Threshold(check, check.kind + ".success_threshold", n.success_threshold,
              children);
    Threshold(check, check.kind + ".failure_threshold", n.failure_threshold,
              children);
  }
  static absl::Status Compile(const TreeNodeDefinition& d, const NodeCompile&,
                              CompiledNode& c) {
    const int children = static_cast<int>(d.children.size());
    c.success_from_all = d.success_threshold < 0;
    c.success_threshold = ParallelThreshold(d.success_threshold, children);
    c.failure_threshold = ParallelThreshold(d.failure_threshold, children);
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    const int total = static_cast<int>(n.child_count);
    int skipped = 0;  // this tick: ticked again next tick
    for (uint32_t i = 0; i < n.child_count; ++i) {
      const S c = TickUnfinished(t, id, i);
      if (c == S::kIdle) continue;  // finished in an earlier tick
      if (c == S::kSkipped) ++skipped;
      const NodeState& s = t.state(id);
      const int ok = __builtin_popcount(s.mask_a);
      const int bad = __builtin_popcount(s.mask_b);
      // A threshold counted from all the children counts the skipped ones
      // as done (BT.CPP's rule).
      if (ok >= n.success_threshold ||
          (n.success_from_all && ok + skipped >= n.success_threshold)) {
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
    if (skipped == total) {
      t.Reset(id);
      return S::kSkipped;
    }
    t.state(id).running = true;
    return S::kRunning;
  }
};

// parallel_all: every child not yet finished, each tick, until all have
// finished (a skipped child counts as finished in the tick it skips); then
// failure when at least `max_failures` failed, else success
// (BehaviorTree.CPP's ParallelAll). All skipped in a tick: skipped.
struct ParallelAllNode : TicksAllChildren {
  static constexpr NodeKind kKind = NodeKind::kParallelAll;
  static constexpr const char* kName = "parallel_all";
  static constexpr std::array<NodeParam, 1> kParams = {
      {{"max_failures", &TreeNodeDefinition::max_failures}}};
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    CheckChildren(n, check);
    Threshold(check, check.kind + ".max_failures", n.max_failures,
              static_cast<int>(n.children.size()));
  }
  static absl::Status Compile(const TreeNodeDefinition& d, const NodeCompile&,
                              CompiledNode& c) {
    c.failure_threshold =
        ParallelThreshold(d.max_failures, static_cast<int>(d.children.size()));
    return absl::OkStatus();
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    uint32_t skipped = 0;
    for (uint32_t i = 0; i < n.child_count; ++i) {
      if (TickUnfinished(t, id, i) == S::kSkipped) ++skipped;
    }
    const NodeState& s = t.state(id);
    if (skipped == n.child_count) {
      t.Reset(id);
      return S::kSkipped;
    }
    const int done = __builtin_popcount(s.mask_a | s.mask_b);
    if (done + static_cast<int>(skipped) < static_cast<int>(n.child_count)) {
      t.state(id).running = true;
      return S::kRunning;
    }
    const bool failed = __builtin_popcount(s.mask_b) >= n.failure_threshold;
    t.Reset(id);
    return failed ? S::kFailure : S::kSuccess;
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
      if (c == S::kRunning || c == S::kSkipped) return c;  // skipped: so is it
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
    const S condition = t.Tick(t.child(id, 0), -1);
    if (condition == S::kSkipped) {  // so is the node, halting its branch
      t.HaltRunningChildExcept(id, -1);
      t.Reset(id);
      return condition;
    }
    const uint32_t branch = Branch(n, condition);
    t.HaltRunningChildExcept(id, static_cast<int>(branch));
    if (branch == 0) {
      t.Reset(id);
      return S::kFailure;
    }
    return RunChild(t, id, branch);
  }
  // Whether the subtree can answer running (a kind's kAnswersRunning).
  static bool CanRun(const TreeNodeDefinition& n) {
    if (NodeKindInfo(n.kind).answers_running) return true;
    for (const TreeNodeDefinition& c : n.children) {
      if (CanRun(c)) return true;
    }
    return false;
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
    const uint32_t first = t.state(id).index;
    uint32_t skipped = 0;
    for (uint32_t i = first; i < n.child_count; ++i) {
      const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
      if (c == S::kSkipped) {
        ++skipped;
        continue;
      }
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
    return skipped == n.child_count ? S::kSkipped : S::kSuccess;
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

// try_catch: the children but the last as a sequence (the try); when one
// fails, the last child runs (the catch), and the node fails once it has
// finished, whatever it answered (BehaviorTree.CPP's TryCatch, with
// catch_on_halt false). Skipped try children are passed over; all of them
// skipped, the node is skipped. Its state: the running child (the last:
// the catch).
struct TryCatchNode : RunsOneChild {
  static constexpr NodeKind kKind = NodeKind::kTryCatch;
  static constexpr const char* kName = "try_catch";
  static void Validate(const TreeNodeDefinition& n, const NodeCheck& check) {
    if (n.children.size() < 2) {
      check.Add(check.kind + ".children",
                absl::StrCat("needs at least 2 children (the try block and "
                             "the catch), got ",
                             n.children.size()));
    }
  }
  static S Tick(Ticker& t, int id, int, size_t) {
    const CompiledNode& n = t.node(id);
    const uint32_t last = n.child_count - 1;
    const uint32_t first = t.state(id).running ? t.state(id).index : 0;
    uint32_t i = first, skipped = 0;
    for (; i < last; ++i) {
      const S c = t.Tick(t.child(id, static_cast<int>(i)), -1);
      if (c == S::kSkipped) {
        ++skipped;
        continue;
      }
      if (c == S::kRunning) {
        t.state(id).running = true;
        t.state(id).index = i;
        return c;
      }
      if (c == S::kFailure) break;  // to the catch
    }
    if (i == last && first < last) {  // the try block went through
      t.Reset(id);
      return first == 0 && skipped == last ? S::kSkipped : S::kSuccess;
    }
    const S c = t.Tick(t.child(id, static_cast<int>(last)), -1);
    if (c == S::kRunning) {
      t.state(id).running = true;
      t.state(id).index = last;
      return c;
    }
    t.Reset(id);
    return S::kFailure;
  }
};

}  // namespace utilityd::engine::internal

#endif  // UTILITYD_ENGINE_SRC_TREE_COMPOSITE_KINDS_H_
