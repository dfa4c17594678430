// A set's scenarios (its worked examples) as snapshots and checked against
// their expected winners; a loaded set's summary.
#ifndef UTILITYD_CODEC_SCENARIOS_H_
#define UTILITYD_CODEC_SCENARIOS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

// Returns the snapshot a scenario of set `set_name` describes (agent id =
// scenario name).
[[nodiscard]] v1::AgentSnapshot ScenarioSnapshot(absl::string_view set_name,
                                                 const v1::Scenario& scenario);

// Returns the summary of a loaded set as ListBehaviourSets reports it.
[[nodiscard]] v1::BehaviourSetSummary Summarise(const loader::LoadedSet& set,
                                                absl::Time loaded_at);

// Decides every scenario that names an expected action, and steps every
// tree scenario through its ticks, and returns one message per scenario
// that does not hold; empty when all hold.
[[nodiscard]] std::vector<std::string> CheckScenarios(
    const loader::LoadedSet& set);

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_SCENARIOS_H_
