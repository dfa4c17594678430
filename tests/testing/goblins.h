// A batch of arena goblins (examples/behaviour_sets/arena_goblin.yaml) for
// coordination tests: healthy and brave, goblin-i at 1 + i metres from
// mage-0, and 25 m from each of `far_mages` more mages (mage-1, ...). Alone,
// every one of them would attack mage-0.
#ifndef UTILITYD_TESTS_TESTING_GOBLINS_H_
#define UTILITYD_TESTS_TESTING_GOBLINS_H_

#include <string>

#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::testing {

inline v1::DecideRequest GoblinsAroundOneMage(int count, int far_mages = 0) {
  v1::DecideRequest r;
  for (int i = 0; i < count; ++i) {
    v1::AgentSnapshot* a = r.add_agents();
    a->set_agent_id("goblin-" + std::to_string(i));
    a->set_behaviour_set("arena_goblin");
    (*a->mutable_named_factors())["health"] = 28;
    (*a->mutable_named_factors())["courage"] = 0.8f;
    for (int m = 0; m <= far_mages; ++m) {
      v1::TargetSnapshot* t = a->add_targets();
      t->set_target_id("mage-" + std::to_string(m));
      (*t->mutable_named_factors())["distance"] = m == 0 ? 1.0f + i : 25.0f;
      (*t->mutable_named_factors())["mage_health"] = 80;
    }
  }
  return r;
}

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_GOBLINS_H_
