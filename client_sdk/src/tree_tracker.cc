#include "utilityd/client/tree_tracker.h"

namespace utilityd::client {

void TreeTracker::Prepare(v1::AgentSnapshot* snapshot) const {
  snapshot->clear_leaf_outcomes();
  auto it = agents_.find(snapshot->agent_id());
  if (it == agents_.end()) {
    snapshot->clear_tree_state();
    return;
  }
  snapshot->set_tree_state(it->second.state);
  for (const v1::LeafOutcome& o : it->second.outcomes) {
    *snapshot->add_leaf_outcomes() = o;
  }
}

void TreeTracker::Update(const v1::Decision& decision) {
  if (decision.has_error()) return;
  Agent& agent = agents_[decision.agent_id()];
  agent.state = decision.tree_state();
  agent.running.assign(decision.run_leaves().begin(),
                       decision.run_leaves().end());
  agent.outcomes.clear();
}

void TreeTracker::Report(absl::string_view agent_id, int32_t leaf,
                         v1::NodeStatus status) {
  Agent& agent = agents_[agent_id];
  for (v1::LeafOutcome& o : agent.outcomes) {
    if (o.leaf() == leaf) {
      o.set_status(status);
      return;
    }
  }
  v1::LeafOutcome& o = agent.outcomes.emplace_back();
  o.set_leaf(leaf);
  o.set_status(status);
}

const std::vector<v1::TreeLeaf>& TreeTracker::Running(
    absl::string_view agent_id) const {
  static const std::vector<v1::TreeLeaf>* const kNone =
      new std::vector<v1::TreeLeaf>();
  auto it = agents_.find(agent_id);
  return it == agents_.end() ? *kNone : it->second.running;
}

}  // namespace utilityd::client
