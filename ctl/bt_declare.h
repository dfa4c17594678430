// What an imported BehaviorTree.CPP tree reads and runs, declared on its
// set (docs/TREES.md, "BehaviorTree.CPP XML"). Internal to ctl/.
//
//   DeclareImported(mapping, literal_ports, actions, &set);
//   // set: its factors (the names its conditions and scripts read, ranges
//   // covering the constants compared with), target factors and actions
#ifndef UTILITYD_CTL_BT_DECLARE_H_
#define UTILITYD_CTL_BT_DECLARE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "ctl/bt_mapping.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::ctl {

// Declares on `set` (its tree and subtrees converted, any --into set's
// declarations kept) the factors the expanded tree reads, in the order first
// read, with the mapping's ranges or ranges covering the constants they are
// compared with; the target factors of per-target considerations; and
// `actions`. A comparison over a variable the scripts assign, or over a
// subtree port some use gives a literal (`literal_ports`), becomes a script
// condition: a condition reads a factor.
void DeclareImported(const Mapping& map,
                     const absl::flat_hash_set<std::string>& literal_ports,
                     const std::vector<std::string>& actions,
                     v1::BehaviourSet* set);

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_BT_DECLARE_H_
