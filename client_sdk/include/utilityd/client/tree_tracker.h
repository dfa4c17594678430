// Keeps each agent's behaviour-tree state between calls, so that a game
// server only reports how its leaves went (docs/TREES.md).
//
// Example (compiled by tests/client_sdk/header_examples.cmake):
//   TreeTracker trees;
//   v1::DecideRequest batch;
//   v1::AgentSnapshot* guard = batch.add_agents();  // factors, game_time
//   guard->set_agent_id("guard-1");
//   guard->set_behaviour_set("guard_tree");
//   trees.Prepare(guard);  // its tree state and leaf outcomes go in
//   absl::StatusOr<v1::DecideResponse> r = client.Decide(batch);
//   if (!r.ok()) return;
//   const v1::Decision& decision = r->decisions(0);
//   trees.Update(decision);  // the new state is kept
//   for (const v1::TreeLeaf& leaf : decision.run_leaves()) {
//     if (leaf.started()) StartLeaf("guard-1", leaf);
//   }
//   for (const v1::TreeLeaf& leaf : decision.halted_leaves()) {
//     StopLeaf("guard-1", leaf);
//   }
//   // Later, when a leaf the game runs ends:
//   trees.Report("guard-1", decision.run_leaves(0).node(),
//                v1::NODE_STATUS_SUCCESS);
//   trees.Forget("guard-1");  // the agent despawned
//
// Not thread-safe: use one per game-server thread, or guard it.
#ifndef UTILITYD_CLIENT_TREE_TRACKER_H_
#define UTILITYD_CLIENT_TREE_TRACKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::client {

class TreeTracker {
 public:
  // Writes the agent's tree state and the outcomes reported since its last
  // decision into `snapshot` (by its agent_id). An agent not seen before
  // starts with an empty state: the tree starts from its root.
  void Prepare(v1::AgentSnapshot* snapshot) const;

  // Takes a decision for an agent: its new state and the leaves running.
  // Reported outcomes are cleared once a decision without an error took
  // them; after an error they are sent again with the same state.
  void Update(const v1::Decision& decision);

  // Records how a leaf (TreeLeaf.node) of the agent went; sent with the
  // agent's next Prepare. A leaf not reported is still running.
  void Report(absl::string_view agent_id, int32_t leaf, v1::NodeStatus status);

  // The leaves the agent's last decision runs.
  const std::vector<v1::TreeLeaf>& Running(absl::string_view agent_id) const;

  // Drops an agent (despawned); its next decision starts the tree afresh.
  void Forget(absl::string_view agent_id) { agents_.erase(agent_id); }

  size_t size() const { return agents_.size(); }

 private:
  struct Agent {
    std::string state;
    std::vector<v1::TreeLeaf> running;
    std::vector<v1::LeafOutcome> outcomes;
  };
  absl::flat_hash_map<std::string, Agent> agents_;
};

}  // namespace utilityd::client

#endif  // UTILITYD_CLIENT_TREE_TRACKER_H_
