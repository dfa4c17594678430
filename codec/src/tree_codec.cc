// Behaviour trees on the wire: leaf outcomes in, leaves, state and path out;
// tree scenarios stepped tick by tick.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tree_wire.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/codec/trees.h"
#include "utilityd/codec/write.h"
#include "utilityd/engine/error_reason.h"

namespace utilityd::codec {

namespace internal {

v1::NodeStatus ToProto(engine::NodeStatus s) {
  switch (s) {
    case engine::NodeStatus::kRunning:
      return v1::NODE_STATUS_RUNNING;
    case engine::NodeStatus::kSuccess:
      return v1::NODE_STATUS_SUCCESS;
    case engine::NodeStatus::kFailure:
      return v1::NODE_STATUS_FAILURE;
    case engine::NodeStatus::kSkipped:
      return v1::NODE_STATUS_SKIPPED;
    default:
      return v1::NODE_STATUS_UNSPECIFIED;
  }
}

engine::NodeStatus FromProto(v1::NodeStatus s) {
  switch (s) {
    case v1::NODE_STATUS_SUCCESS:
      return engine::NodeStatus::kSuccess;
    case v1::NODE_STATUS_FAILURE:
      return engine::NodeStatus::kFailure;
    default:
      return engine::NodeStatus::kRunning;
  }
}

absl::Status ReadLeafOutcome(const loader::LoadedSet& set, int leaf,
                             v1::NodeStatus status,
                             const std::string& leaf_field,
                             const std::string& status_field,
                             engine::LeafOutcome* out) {
  const engine::CompiledTree& tree = *set.compiled.tree();
  if (leaf < 0 || leaf >= static_cast<int>(tree.nodes.size()) ||
      tree.nodes[leaf].kind != engine::NodeKind::kAction) {
    return engine::FieldError(
        absl::StatusCode::kInvalidArgument, engine::ErrorReason::kOutOfRange,
        leaf_field,
        absl::StrCat("node ", leaf, " is not an action leaf of ", set.name(),
                     "'s tree (", tree.nodes.size(), " nodes)"));
  }
  if (status != v1::NODE_STATUS_RUNNING && status != v1::NODE_STATUS_SUCCESS &&
      status != v1::NODE_STATUS_FAILURE) {
    return engine::FieldError(absl::StatusCode::kInvalidArgument,
                              engine::ErrorReason::kOutOfRange, status_field,
                              "is required: running, success or failure");
  }
  *out = {.leaf = leaf, .status = FromProto(status)};
  return absl::OkStatus();
}

}  // namespace internal

namespace {

using internal::FromProto;
using internal::ToProto;

void WriteLeaf(const engine::CompiledBehaviourSet& set,
               const v1::AgentSnapshot& snapshot, const engine::TreeLeaf& leaf,
               v1::TreeLeaf* out) {
  out->set_node(leaf.node);
  out->set_action(set.actions()[leaf.action].name);
  out->set_action_index(leaf.action);
  if (leaf.target >= 0 && leaf.target < snapshot.targets_size()) {
    out->set_target_id(snapshot.targets(leaf.target).target_id());
  }
  out->set_started(leaf.started);
}

std::vector<std::string> LeafNames(
    const engine::CompiledBehaviourSet& set,
    const std::vector<engine::TreeLeaf>& leaves) {
  std::vector<std::string> names;
  for (const engine::TreeLeaf& l : leaves)
    names.push_back(LeafName(set, l.node));
  return names;
}

// The action leaf called `name`; -1 when none is, -2 when several are.
int FindLeaf(const engine::CompiledBehaviourSet& set, const std::string& name) {
  const engine::CompiledTree& tree = *set.tree();
  int found = -1;
  for (size_t id = 0; id < tree.nodes.size(); ++id) {
    if (tree.nodes[id].kind != engine::NodeKind::kAction) continue;
    if (LeafName(set, static_cast<int>(id)) != name) continue;
    if (found >= 0) return -2;
    found = static_cast<int>(id);
  }
  return found;
}

// Steps one tree scenario; returns its problems.
std::vector<std::string> StepScenario(const loader::LoadedSet& loaded,
                                      const v1::Scenario& scenario) {
  const engine::CompiledBehaviourSet& set = loaded.compiled;
  std::vector<std::string> problems;
  v1::AgentSnapshot snapshot = ScenarioSnapshot(loaded.name(), scenario);
  AgentScratch scratch;
  std::string state;
  for (int k = 0; k < scenario.ticks_size(); ++k) {
    const v1::TreeStep& step = scenario.ticks(k);
    const std::string at =
        absl::StrCat(loaded.source, ": scenario \"", scenario.name(),
                     "\": ticks[", k, "]: ");
    if (absl::Status s = ApplyTreeStep(loaded, step, state, &snapshot);
        !s.ok()) {
      problems.push_back(absl::StrCat(at, s.message()));
      break;
    }
    engine::AgentInput input;
    engine::TreeInput in;
    absl::Status s = ResolveAgent(loaded, snapshot, &scratch, &input);
    if (s.ok()) s = ResolveTree(loaded, snapshot, &scratch, &in);
    if (s.ok()) {
      s = engine::TickTree(set, input, in, engine::ExplainLevel::kNone,
                           &scratch.tick);
    }
    if (!s.ok()) {
      problems.push_back(absl::StrCat(at, s.message()));
      break;
    }
    const engine::TreeTick& tick = scratch.tick;
    const std::vector<std::string> run = LeafNames(set, tick.run);
    const std::vector<std::string> halted = LeafNames(set, tick.halted);
    const std::vector<std::string> want_run(step.expected_run().begin(),
                                            step.expected_run().end());
    const std::vector<std::string> want_halted(step.expected_halted().begin(),
                                               step.expected_halted().end());
    auto list = [](const std::vector<std::string>& v) {
      return v.empty() ? std::string("nothing") : absl::StrJoin(v, ", ");
    };
    if (!want_run.empty() && run != want_run) {
      problems.push_back(absl::StrCat(at, "expected ", list(want_run),
                                      " to run, got ", list(run)));
    }
    if (!want_halted.empty() && halted != want_halted) {
      problems.push_back(absl::StrCat(at, "expected ", list(want_halted),
                                      " to be halted, got ", list(halted)));
    }
    if (step.expected_status() != v1::NODE_STATUS_UNSPECIFIED &&
        ToProto(tick.status) != step.expected_status()) {
      problems.push_back(absl::StrCat(
          at, "expected the root to be ",
          engine::NodeStatusName(FromProto(step.expected_status())), ", got ",
          engine::NodeStatusName(tick.status)));
    }
    state = tick.state;
  }
  return problems;
}

}  // namespace

absl::Status ApplyTreeStep(const loader::LoadedSet& loaded,
                           const v1::TreeStep& step, absl::string_view state,
                           v1::AgentSnapshot* snapshot) {
  for (const auto& [name, value] : step.factors()) {
    (*snapshot->mutable_named_factors())[name] = static_cast<float>(value);
  }
  snapshot->set_game_time(step.game_time());
  snapshot->set_tree_state(std::string(state));
  snapshot->clear_leaf_outcomes();
  for (const auto& [name, status] : step.outcomes()) {
    const int leaf = FindLeaf(loaded.compiled, name);
    if (leaf < 0) {
      return engine::FieldError(
          absl::StatusCode::kInvalidArgument, engine::ErrorReason::kOutOfRange,
          "outcomes",
          leaf == -1 ? absl::StrCat("no action leaf is called \"", name, "\"")
                     : absl::StrCat("several action leaves are called \"", name,
                                    "\" (label them with `name`)"));
    }
    v1::LeafOutcome* o = snapshot->add_leaf_outcomes();
    o->set_leaf(leaf);
    o->set_status(status);
  }
  return absl::OkStatus();
}

const std::string& LeafName(const engine::CompiledBehaviourSet& set, int node) {
  const engine::CompiledNode& n = set.tree()->node(node);
  if (!n.name.empty() || n.action < 0) return n.name;
  return set.actions()[n.action].name;
}

absl::Status ResolveTree(const loader::LoadedSet& loaded,
                         const v1::AgentSnapshot& snapshot,
                         AgentScratch* scratch, engine::TreeInput* in) {
  scratch->outcomes.clear();
  for (int k = 0; k < snapshot.leaf_outcomes_size(); ++k) {
    const v1::LeafOutcome& o = snapshot.leaf_outcomes(k);
    engine::LeafOutcome outcome;
    const std::string at = absl::StrCat("leaf_outcomes[", k, "]");
    UTILITYD_RETURN_IF_ERROR(internal::ReadLeafOutcome(
        loaded, o.leaf(), o.status(), at + ".leaf", at + ".status", &outcome));
    scratch->outcomes.push_back(outcome);
  }
  in->game_time = snapshot.game_time();
  in->state = snapshot.tree_state();
  in->outcomes = scratch->outcomes;
  return absl::OkStatus();
}

void WriteTick(const loader::LoadedSet& loaded,
               const v1::AgentSnapshot& snapshot, const engine::TreeTick& tick,
               v1::Explain explain, v1::Decision* out) {
  const engine::CompiledBehaviourSet& set = loaded.compiled;
  const engine::CompiledTree& tree = *set.tree();
  out->set_agent_id(snapshot.agent_id());
  out->set_revision(loaded.revision());
  out->set_action_index(-1);
  if (!tick.run.empty()) {
    const engine::TreeLeaf& first = tick.run.front();
    out->set_action(set.actions()[first.action].name);
    out->set_action_index(first.action);
    if (first.target >= 0 && first.target < snapshot.targets_size()) {
      out->set_target_id(snapshot.targets(first.target).target_id());
    }
  }
  for (const engine::TreeLeaf& l : tick.run) {
    out->set_switched(out->switched() || l.started);
    WriteLeaf(set, snapshot, l, out->add_run_leaves());
  }
  for (const engine::TreeLeaf& l : tick.halted) {
    WriteLeaf(set, snapshot, l, out->add_halted_leaves());
  }
  out->set_tree_state(tick.state);
  out->set_tree_status(ToProto(tick.status));
  out->set_tree_reset(engine::TreeResetName(tick.reset));
  for (const engine::TreeNodeTrace& t : tick.path) {
    const engine::CompiledNode& n = tree.node(t.node);
    v1::TreeNodeTrace* p = out->add_tree_path();
    p->set_node(t.node);
    p->set_kind(engine::NodeKindName(n.kind));
    p->set_name(n.kind == engine::NodeKind::kAction ? LeafName(set, t.node)
                                                    : n.name);
    p->set_status(ToProto(t.status));
    if (n.kind == engine::NodeKind::kCondition) p->set_value(t.value);
    if (t.utility >= 0) {
      const engine::UtilityTrace& u = tick.utility[t.utility];
      WriteExplanation(*n.choices, snapshot, u.decision, explain,
                       p->mutable_utility());
    }
  }
}

std::vector<std::string> CheckTreeScenarios(const loader::LoadedSet& loaded) {
  std::vector<std::string> problems;
  if (loaded.compiled.tree() == nullptr) return problems;
  for (const v1::Scenario& scenario : loaded.definition.scenarios()) {
    for (std::string& p : StepScenario(loaded, scenario)) {
      problems.push_back(std::move(p));
    }
  }
  return problems;
}

}  // namespace utilityd::codec
