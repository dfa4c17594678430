// One tick of a behaviour tree (docs/TREES.md): the walk; each kind's rule
// is its block in node_kinds.h.
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tree/node_kinds.h"
#include "tree/ticker.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/tree.h"

namespace utilityd::engine {
namespace internal {
namespace {

constexpr auto kTick = TickTable(NodeKinds{});
constexpr auto kOnHalt = HaltTable(NodeKinds{});

}  // namespace

S Ticker::Tick(int id, int target) {
  ++out_->ticked_nodes;
  size_t slot = 0;
  if (trace_) {
    slot = out_->path.size();
    out_->path.push_back({.node = id});
  }
  const CompiledNode& n = tree_.node(id);
  S s = Precondition(n, st_[id]);
  if (s == S::kSkipped && st_[id].running) Halt(id);  // `while` stopped
  if (s == S::kIdle) {
    s = kTick[static_cast<size_t>(n.kind)](*this, id, target, slot);
  }
  if (n.HasPost()) Post(n, s);
  if (trace_) out_->path[slot].status = s;
  return s;
}

S Ticker::Precondition(const CompiledNode& n, const NodeState& s) {
  if (!n.Guarded()) return S::kIdle;
  auto holds = [this](int32_t script) {
    return script >= 0 && ScriptHolds(Run(script));
  };
  // BT.CPP's order: _failureIf, _successIf, _skipIf, then _while, the one
  // checked while the node runs.
  if (s.running) {
    return n.while_holds >= 0 && !holds(n.while_holds) ? S::kSkipped : S::kIdle;
  }
  if (holds(n.failure_if)) return S::kFailure;
  if (holds(n.success_if)) return S::kSuccess;
  if (holds(n.skip_if)) return S::kSkipped;
  if (n.while_holds >= 0 && !holds(n.while_holds)) return S::kSkipped;
  return S::kIdle;
}

// BT.CPP's checkPostConditions: after a node answers success or failure
// (from its tick or a precondition), _onSuccess or _onFailure, then _post.
void Ticker::Post(const CompiledNode& n, S s) {
  if (s != S::kSuccess && s != S::kFailure) return;
  const int32_t first = s == S::kSuccess ? n.post_success : n.post_failure;
  if (first >= 0) Run(first);
  if (n.post_always >= 0) Run(n.post_always);
}

void Ticker::Halt(int id) {
  if (!st_[id].running) return;
  const CompiledNode& n = tree_.node(id);
  for (uint32_t i = 0; i < n.child_count; ++i) Halt(tree_.child(n, i));
  kOnHalt[static_cast<size_t>(n.kind)](*this, id);
  if (n.post_halted >= 0)
    Run(n.post_halted);  // BT.CPP's haltNode: after halt()
  Reset(id);
}

void Ticker::Reset(int id) {
  NodeState& s = st_[id];
  const size_t kind = static_cast<size_t>(tree_.node(id).kind);
  const bool keep_time =
      kTraits[kind].keeps_time_idle && s.has_time && !s.running;
  const bool keep_place =
      kTraits[kind].keeps_place_idle && s.kept && !s.running;
  const int64_t until = s.millis;
  const uint32_t place = s.index;
  s = NodeState{};
  if (keep_time) {
    s.has_time = true;
    s.millis = until;
  }
  if (keep_place) {
    s.kept = true;
    s.index = place;
  }
}

}  // namespace internal

namespace {

// Whether two vectors of the same length hold the same bytes (padding
// included). An empty vector's data() may be null, which memcmp must not see.
template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(static_cast<const void*>(a.data()),
                                   static_cast<const void*>(b.data()),
                                   a.size() * sizeof(T)) == 0);
}

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
    case NodeStatus::kSkipped:
      return "skipped";
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
  thread_local std::vector<double> variables, variables_before;
  const TreeReset reset = DecodeTreeState(set, in.state, &states, &variables);
  before = states;
  variables_before = variables;
  clear();
  out->reset = reset;
  internal::Ticker ticker(set, agent, in, level, out, &states,
                          variables.data());
  out->status = ticker.Tick(0, -1);
  // A leaf usually runs for many ticks with nothing else changing: then the
  // state given is the state to return, and is not encoded again. (Compared
  // byte for byte, padding included: a false difference only re-encodes.)
  const bool unchanged = reset == TreeReset::kNone && !in.state.empty() &&
                         SameBytes(before, states) &&
                         SameBytes(variables_before, variables);
  if (!unchanged) {
    EncodeTreeState(set, states, variables, &out->state);
  } else if (in.state.data() != out->state.data() ||
             in.state.size() != out->state.size()) {
    out->state.assign(in.state.data(), in.state.size());
  }
  return absl::OkStatus();
}

}  // namespace utilityd::engine
