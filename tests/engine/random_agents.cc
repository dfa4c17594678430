#include "tests/engine/random_agents.h"

#include <cmath>
#include <random>

namespace utilityd::engine {

std::vector<Agent> RandomAgents(const CompiledBehaviourSet& set, int count,
                                uint32_t seed, bool finite_only,
                                int targets_each) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  auto draw = [&](const FactorDefinition& f) -> float {
    const double r = unit(rng);
    if (!finite_only && r < 0.01) return NAN;
    if (!finite_only && r < 0.015) return INFINITY;
    if (r < 0.05) return static_cast<float>(f.min);  // exact ends
    const double span = f.max - f.min;
    return static_cast<float>(f.min - 0.1 * span + 1.2 * span * unit(rng));
  };
  std::vector<Agent> agents(count);
  for (Agent& a : agents) {
    for (const auto& f : set.factors()) a.factors.push_back(draw(f));
    const uint32_t drawn = rng() % 4;  // drawn either way: the same agents
    a.target_values.resize(targets_each >= 0 ? targets_each : drawn);
    for (auto& v : a.target_values)
      for (const auto& f : set.target_factors()) v.push_back(draw(f));
    for (auto& v : a.target_values) a.targets.push_back({v});
    if (rng() % 3 == 0) {
      for (int i = 0; i < set.action_count(); ++i)
        a.since.push_back(rng() % 2 ? kNeverRan
                                    : static_cast<float>(unit(rng) * 20));
    }
    a.input.factors = a.factors;
    a.input.targets = a.targets;
    a.input.seconds_since_action = a.since;
    a.input.current_action =
        static_cast<int>(rng() % (set.action_count() + 1)) - 1;
    const int n_targets = static_cast<int>(a.targets.size());
    a.input.current_target = n_targets > 0
                                 ? static_cast<int>(rng() % (n_targets + 2)) - 2
                                 : kAnyTarget;
    a.input.personality =
        static_cast<int>(rng() % (set.personality_count() + 1)) - 1;
    a.input.seed = rng();
  }
  return agents;
}

}  // namespace utilityd::engine
