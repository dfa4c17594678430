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
  if (trace_) out_->path[slot].status = s;
  return s;
}

S Ticker::Precondition(const CompiledNode& n, const NodeState& s) const {
  auto holds = [this](const CompiledNode::Guard& g) {
    return g.factor >= 0 &&
           ComparisonHolds(g.op, agent_.factors[g.factor], g.value);
  };
  // BT.CPP's order: _failureIf, _successIf, _skipIf, then _while, the one
  // checked while the node runs.
  const bool stops = n.while_holds.factor >= 0 && !holds(n.while_holds);
  if (s.running) return stops ? S::kSkipped : S::kIdle;
  if (holds(n.failure_if)) return S::kFailure;
  if (holds(n.success_if)) return S::kSuccess;
  if (holds(n.skip_if) || stops) return S::kSkipped;
  return S::kIdle;
}

void Ticker::Halt(int id) {
  if (!st_[id].running) return;
  const CompiledNode& n = tree_.node(id);
  for (uint32_t i = 0; i < n.child_count; ++i) Halt(tree_.child(n, i));
  kOnHalt[static_cast<size_t>(n.kind)](*this, id);
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
  const TreeReset reset = DecodeTreeState(set, in.state, &states);
  before = states;
  clear();
  out->reset = reset;
  internal::Ticker ticker(set, agent, in, level, out, &states);
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
