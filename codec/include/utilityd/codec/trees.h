// Behaviour trees on the wire (docs/TREES.md): a snapshot's tree fields in,
// a tick out, and a set's tree scenarios stepped through their ticks.
#ifndef UTILITYD_CODEC_TREES_H_
#define UTILITYD_CODEC_TREES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

// Reads the snapshot's tree fields into `in`, whose outcomes point into
// `scratch`. INVALID_ARGUMENT naming the field for an outcome without a
// status or naming a node that is not an action leaf.
[[nodiscard]] absl::Status ResolveTree(const loader::LoadedSet& set,
                                       const v1::AgentSnapshot& snapshot,
                                       AgentScratch* scratch,
                                       engine::TreeInput* in);

// Fills `out` from a tick of `set`'s tree: the first leaf to run as the
// decision's action, the leaves, the state, and at explain top and full the
// path with the utility nodes' scoring.
void WriteTick(const loader::LoadedSet& set, const v1::AgentSnapshot& snapshot,
               const engine::TreeTick& tick, v1::Explain explain,
               v1::Decision* out);

// Applies a scenario's tick to `snapshot`: its factor changes, game time and
// leaf outcomes (by leaf name), with `state` as the tree state.
// INVALID_ARGUMENT for an outcome naming no leaf, or several.
[[nodiscard]] absl::Status ApplyTreeStep(const loader::LoadedSet& set,
                                         const v1::TreeStep& step,
                                         absl::string_view state,
                                         v1::AgentSnapshot* snapshot);

// Steps every scenario of a set with a tree through its ticks and returns
// one message per expectation that does not hold.
[[nodiscard]] std::vector<std::string> CheckTreeScenarios(
    const loader::LoadedSet& set);

// Returns a tree leaf's name: the node's `name`, or its action's.
[[nodiscard]] const std::string& LeafName(
    const engine::CompiledBehaviourSet& set, int node);

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_TREES_H_
