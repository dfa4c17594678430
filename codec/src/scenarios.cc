// A set's scenarios decided and checked against their expected winners;
// the summary ListBehaviourSets reports.
#include "utilityd/codec/scenarios.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/time_util.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/trees.h"
#include "utilityd/codec/write.h"

namespace utilityd::codec {
namespace {}  // namespace

v1::AgentSnapshot ScenarioSnapshot(absl::string_view set_name,
                                   const v1::Scenario& scenario) {
  v1::AgentSnapshot s;
  s.set_agent_id(scenario.name());
  s.set_behaviour_set(std::string(set_name));
  for (const auto& [name, value] : scenario.factors()) {
    (*s.mutable_named_factors())[name] = static_cast<float>(value);
  }
  for (const v1::ScenarioTarget& t : scenario.targets()) {
    v1::TargetSnapshot* ts = s.add_targets();
    ts->set_target_id(t.id());
    for (const auto& [name, value] : t.factors()) {
      (*ts->mutable_named_factors())[name] = static_cast<float>(value);
    }
  }
  for (const auto& [name, seconds] : scenario.seconds_since_action()) {
    (*s.mutable_seconds_since_action())[name] = static_cast<float>(seconds);
  }
  s.set_current_action(scenario.current_action());
  s.set_current_target(scenario.current_target());
  s.set_personality(scenario.personality());
  return s;
}

std::vector<std::string> CheckScenarios(const loader::LoadedSet& loaded) {
  if (loaded.compiled.tree() != nullptr) return CheckTreeScenarios(loaded);
  std::vector<std::string> problems;
  AgentScratch scratch;
  for (const v1::Scenario& scenario : loaded.definition.scenarios()) {
    if (scenario.expected_action().empty()) continue;
    const v1::AgentSnapshot snapshot =
        ScenarioSnapshot(loaded.name(), scenario);
    engine::AgentInput input;
    absl::Status s = ResolveAgent(loaded, snapshot, &scratch, &input);
    if (s.ok()) {
      s = engine::Decide(loaded.compiled, input, engine::ExplainLevel::kFull,
                         &scratch.decision);
    }
    const std::string at =
        absl::StrCat(loaded.source, ": scenario \"", scenario.name(), "\": ");
    if (!s.ok()) {
      problems.push_back(absl::StrCat(at, s.message()));
      continue;
    }
    v1::Decision d;
    WriteDecision(loaded, snapshot, scratch.decision, v1::EXPLAIN_FULL, &d);
    const bool target_ok = scenario.expected_target().empty() ||
                           scenario.expected_target() == d.target_id();
    if (d.action() != scenario.expected_action() || !target_ok) {
      std::string expected = scenario.expected_action();
      if (!scenario.expected_target().empty()) {
        absl::StrAppend(&expected, "@", scenario.expected_target());
      }
      std::string got = d.action().empty() ? "no action" : d.action();
      if (!d.target_id().empty()) absl::StrAppend(&got, "@", d.target_id());
      problems.push_back(absl::StrCat(
          at, "expected ", expected, " to win, got ", got,
          absl::StrFormat(" (%.3f): ", d.score()), d.explanation().summary()));
    }
  }
  return problems;
}

v1::BehaviourSetSummary Summarise(const loader::LoadedSet& set,
                                  absl::Time loaded_at) {
  v1::BehaviourSetSummary s;
  const v1::BehaviourSet& d = set.definition;
  s.set_name(d.name());
  s.set_revision(d.revision());
  s.set_description(d.description());
  s.set_version(d.version());
  for (const auto& f : d.factors()) s.add_factors(f.name());
  for (const auto& f : d.target_factors()) s.add_target_factors(f.name());
  for (const auto& a : d.actions()) s.add_actions(a.name());
  for (const auto& p : d.personalities()) s.add_personalities(p.name());
  for (const auto& r : d.resources()) s.add_resources(r.name());
  *s.mutable_loaded_at() =
      google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
          absl::ToUnixNanos(loaded_at));
  return s;
}

}  // namespace utilityd::codec
