// Random agents for a compiled set, for tests that compare the engine with
// an independent computation: factors spread over 1.2x each declared range
// (so past both bookends), with exact ends, NaN and infinity now and then;
// up to three targets; sometimes cooldown times; a random current action,
// current target, personality and seed.
#ifndef UTILITYD_TESTS_ENGINE_RANDOM_AGENTS_H_
#define UTILITYD_TESTS_ENGINE_RANDOM_AGENTS_H_

#include <cstdint>
#include <vector>

#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::engine {

// One agent; `input`'s spans point into the other members (do not copy an
// Agent after RandomAgents returns it inside its vector).
struct Agent {
  std::vector<float> factors;
  std::vector<std::vector<float>> target_values;
  std::vector<TargetInput> targets;
  std::vector<float> since;
  AgentInput input;
};

// `count` agents from a generator seeded with `seed`. With `finite_only`,
// no NaN or infinity is drawn; with `targets_each` >= 0, every agent has
// that many targets (else 0 to 3).
std::vector<Agent> RandomAgents(const CompiledBehaviourSet& set, int count,
                                uint32_t seed, bool finite_only = false,
                                int targets_each = -1);

}  // namespace utilityd::engine

#endif  // UTILITYD_TESTS_ENGINE_RANDOM_AGENTS_H_
