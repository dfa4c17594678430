// Writing engine decisions back as messages: the decision, its
// explanation at each level, sensitivity, errors.
#include "utilityd/codec/write.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "target_id.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/explain.h"

namespace utilityd::codec {
namespace {}  // namespace

namespace {

// The runner-up, strategy, draw and rank: what explain top adds.
void WriteTopExplanation(const engine::CompiledBehaviourSet& set,
                         const v1::AgentSnapshot& snapshot,
                         const engine::BatchDecision& d, v1::Explanation* x) {
  if (d.runner_up_action >= 0) {
    x->set_runner_up_action(set.actions()[d.runner_up_action].name);
    x->set_runner_up_target(TargetId(snapshot, d.runner_up_target));
    x->set_runner_up_score(d.runner_up_score);
    x->set_margin(d.score - d.runner_up_score);
  }
  x->set_strategy(engine::StrategyName(set.selection().strategy));
  if (d.draw >= 0) x->set_draw(d.draw);
  x->set_rank(d.rank);
}

// Every candidate and consideration, and the summary: what explain full
// adds.
void WriteFullExplanation(const engine::CompiledBehaviourSet& set,
                          const v1::AgentSnapshot& snapshot,
                          const engine::Decision& d, v1::Explanation* x) {
  auto target_id = [&](int t) -> const std::string& {
    return TargetId(snapshot, t);
  };
  std::vector<std::string> target_ids;
  for (const auto& t : snapshot.targets()) target_ids.push_back(t.target_id());
  for (const engine::CandidateTrace& c : d.candidates) {
    const engine::CompiledAction& action = set.actions()[c.action];
    v1::ActionScore* a = x->add_actions();
    a->set_action(action.name);
    a->set_action_index(c.action);
    a->set_target_id(target_id(c.target));
    a->set_score(c.score);
    a->set_aggregate(c.aggregate);
    a->set_compensated(c.compensated);
    a->set_weight(c.weight);
    a->set_cooldown_factor(c.cooldown_factor);
    a->set_commitment_factor(c.commitment_factor);
    a->set_rank(action.rank);
    a->set_vetoed(c.veto != engine::VetoReason::kNone);
    if (c.vetoed_by >= 0) {
      a->set_vetoed_by(
          set.considerations()[action.first_consideration + c.vetoed_by].name);
    } else if (c.veto == engine::VetoReason::kNoTargets) {
      a->set_vetoed_by("(no targets)");
    }
    a->set_eligible(c.eligible);
    a->set_probability(c.probability);
    if (c.veto == engine::VetoReason::kNoTargets) continue;
    for (uint32_t k = 0; k < action.consideration_count; ++k) {
      const engine::CompiledConsideration& cc =
          set.considerations()[action.first_consideration + k];
      const engine::ConsiderationTrace& t = d.considerations[c.first_trace + k];
      v1::ConsiderationScore* cs = a->add_considerations();
      cs->set_consideration(cc.name);
      cs->set_factor(cc.per_target ? set.target_factors()[cc.factor].name
                                   : set.factors()[cc.factor].name);
      cs->set_raw(t.raw);
      cs->set_normalised(t.normalised);
      cs->set_curved(t.curved);
      cs->set_output(t.output);
      cs->set_contribution(t.contribution);
      cs->set_invalid_input(t.invalid_input);
    }
  }
  x->set_summary(engine::FormatSummary(set, d, target_ids));
}

}  // namespace

void WriteDecision(const loader::LoadedSet& loaded,
                   const v1::AgentSnapshot& snapshot,
                   const engine::BatchDecision& d, v1::Explain explain,
                   v1::Decision* out) {
  const engine::CompiledBehaviourSet& set = loaded.compiled;
  out->set_agent_id(snapshot.agent_id());
  out->set_revision(loaded.revision());
  out->set_action_index(d.action);
  if (d.action >= 0) out->set_action(set.actions()[d.action].name);
  out->set_target_id(TargetId(snapshot, d.target));
  out->set_score(d.score);
  out->set_switched(d.switched);
  out->set_fallback(d.fallback);
  if (ToExplainLevel(explain) == engine::ExplainLevel::kNone) return;
  WriteTopExplanation(set, snapshot, d, out->mutable_explanation());
}

void WriteDecision(const loader::LoadedSet& loaded,
                   const v1::AgentSnapshot& snapshot, const engine::Decision& d,
                   v1::Explain explain, v1::Decision* out) {
  WriteDecision(loaded, snapshot, static_cast<const engine::BatchDecision&>(d),
                explain, out);
  if (ToExplainLevel(explain) != engine::ExplainLevel::kFull) return;
  WriteFullExplanation(loaded.compiled, snapshot, d,
                       out->mutable_explanation());
}

void WriteExplanation(const engine::CompiledBehaviourSet& set,
                      const v1::AgentSnapshot& snapshot,
                      const engine::Decision& d, v1::Explain explain,
                      v1::Explanation* out) {
  const engine::ExplainLevel level = ToExplainLevel(explain);
  if (level == engine::ExplainLevel::kNone) return;
  WriteTopExplanation(set, snapshot, d, out);
  if (level == engine::ExplainLevel::kFull)
    WriteFullExplanation(set, snapshot, d, out);
}

void WriteSensitivity(const engine::CompiledBehaviourSet& set,
                      const v1::AgentSnapshot& snapshot,
                      absl::Span<const engine::FactorSensitivity> sensitivity,
                      v1::Decision* out) {
  auto crossing = [&](const engine::Crossing& c, float from, v1::Crossing* x) {
    x->set_value(c.value);
    x->set_change(c.value - from);
    x->set_action_index(c.action);
    if (c.action >= 0) x->set_action(set.actions()[c.action].name);
    x->set_target_id(TargetId(snapshot, c.target));
  };
  for (const engine::FactorSensitivity& s : sensitivity) {
    v1::FactorSensitivity* x = out->add_sensitivity();
    const engine::FactorDefinition& def = s.target_factor
                                              ? set.target_factors()[s.factor]
                                              : set.factors()[s.factor];
    x->set_factor(def.name);
    x->set_unit(def.unit);
    x->set_target_id(TargetId(snapshot, s.target));
    x->set_value(s.current);
    x->set_range_min(s.range_min);
    x->set_range_max(s.range_max);
    if (s.below.found) crossing(s.below, s.current, x->mutable_below());
    if (s.above.found) crossing(s.above, s.current, x->mutable_above());
  }
}

void ToError(const absl::Status& status, v1::Error* out) {
  const int code = static_cast<int>(status.code());
  out->set_code(v1::ErrorCode_IsValid(code) ? static_cast<v1::ErrorCode>(code)
                                            : v1::ERROR_CODE_INTERNAL);
  out->set_message(std::string(status.message()));
  // The engine's reasons are numbered as the wire's (error_reason.h; the
  // codec test checks every one).
  static_assert(std::size(engine::kErrorReasonNames) ==
                v1::ErrorReason_ARRAYSIZE);
  const int reason = static_cast<int>(engine::ReasonOf(status));
  out->set_reason(v1::ErrorReason_IsValid(reason)
                      ? static_cast<v1::ErrorReason>(reason)
                      : v1::ERROR_REASON_UNSPECIFIED);
  out->set_field(engine::FieldOf(status));
}

void WriteError(const absl::Status& status, v1::Decision* out) {
  ToError(status, out->mutable_error());
  out->set_action_index(-1);
}

}  // namespace utilityd::codec
