#include "utilityd/codec/decide_codec.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "absl/algorithm/container.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordination.h"
#include "google/protobuf/util/time_util.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/explain.h"
#include "utilityd/engine/sensitivity.h"

namespace utilityd::codec {
namespace {

namespace e = engine;
constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();

std::vector<std::string> FactorNames(
    const std::vector<e::FactorDefinition>& fs) {
  std::vector<std::string> names;
  for (const auto& f : fs) names.push_back(f.name);
  return names;
}

// Returns `unknown <what> "<name>" in <set>` and a hint.
std::string UnknownName(absl::string_view what, const std::string& name,
                        const std::vector<std::string>& known,
                        absl::string_view set_name) {
  std::string message = e::UnknownNameMessage(what, name, known);
  const size_t name_end = message.find('"', message.find('"') + 1);
  message.insert(name_end + 1, absl::StrCat(" in ", set_name));
  return message;
}

std::vector<std::string> ActionNames(const e::CompiledBehaviourSet& set) {
  std::vector<std::string> names;
  for (const auto& a : set.actions()) names.push_back(a.name);
  return names;
}

// Appends one agent's factor values (`target` < 0) or one target's
// (`target` = its index) to `out`, in declared order, from packed values or
// names. Names are looked up in the set's index; error text is built only
// when something is wrong.
absl::Status ResolveFactors(
    const google::protobuf::RepeatedField<float>& packed,
    const google::protobuf::Map<std::string, float>& named,
    const e::CompiledBehaviourSet& set, int target, std::vector<float>* out) {
  const std::vector<e::FactorDefinition>& declared =
      target >= 0 ? set.target_factors() : set.factors();
  auto path = [target](absl::string_view field) {
    return target >= 0 ? absl::StrCat("targets[", target, "].", field)
                       : std::string(field);
  };
  auto invalid = [&](e::ErrorReason reason, absl::string_view field,
                     absl::string_view detail) {
    return e::FieldError(absl::StatusCode::kInvalidArgument, reason,
                         path(field), detail);
  };
  const size_t base = out->size();
  if (!named.empty()) {
    if (!packed.empty()) {
      return invalid(e::ErrorReason::kFactorForms, "factors",
                     "give either factors or named_factors, not both");
    }
    out->resize(base + declared.size(), kMissing);
    for (const auto& [name, value] : named) {
      const int i =
          target >= 0 ? set.FindTargetFactor(name) : set.FindFactor(name);
      if (i < 0) {
        return invalid(
            e::ErrorReason::kUnknownFactor, "named_factors",
            UnknownName("factor", name, FactorNames(declared), set.name()));
      }
      (*out)[base + i] = value;
    }
    // Map keys are distinct and all known, so fewer means some are missing.
    if (named.size() < declared.size()) {
      std::vector<std::string> missing;
      for (const auto& f : declared) {
        if (!named.contains(f.name)) missing.push_back(f.name);
      }
      return invalid(e::ErrorReason::kMissingFactor, "named_factors",
                     absl::StrCat("missing ", absl::StrJoin(missing, ", "),
                                  " (", set.name(), ")"));
    }
    return absl::OkStatus();
  }
  if (static_cast<size_t>(packed.size()) != declared.size()) {
    return invalid(e::ErrorReason::kFactorCount, "factors",
                   absl::StrCat("expected ", declared.size(), " values (",
                                set.name(), "), got ", packed.size()));
  }
  out->insert(out->end(), packed.begin(), packed.end());
  return absl::OkStatus();
}

// The agent's own factors: its packed values in place when they fit, else
// resolved into the scratch.
absl::Status ResolveAgentFactors(const e::CompiledBehaviourSet& set,
                                 const v1::AgentSnapshot& snapshot,
                                 AgentScratch* scratch, e::AgentInput* input) {
  if (snapshot.named_factors().empty() &&
      static_cast<size_t>(snapshot.factors_size()) == set.factors().size()) {
    input->factors =
        absl::MakeConstSpan(snapshot.factors().data(), snapshot.factors_size());
    return absl::OkStatus();
  }
  scratch->factors.clear();
  UTILITYD_RETURN_IF_ERROR(ResolveFactors(snapshot.factors(),
                                          snapshot.named_factors(), set,
                                          /*target=*/-1, &scratch->factors));
  input->factors = scratch->factors;
  return absl::OkStatus();
}

// The current action and the seconds since each action ran.
absl::Status ResolveActions(const e::CompiledBehaviourSet& set,
                            const v1::AgentSnapshot& snapshot,
                            AgentScratch* scratch, e::AgentInput* input) {
  if (!snapshot.current_action().empty()) {
    input->current_action = set.FindAction(snapshot.current_action());
    if (input->current_action < 0) {
      return e::FieldError(absl::StatusCode::kNotFound,
                           e::ErrorReason::kUnknownAction, "current_action",
                           UnknownName("action", snapshot.current_action(),
                                       ActionNames(set), set.name()));
    }
  }
  if (snapshot.seconds_since_action().empty()) return absl::OkStatus();
  scratch->seconds_since_action.assign(set.action_count(), e::kNeverRan);
  for (const auto& [name, seconds] : snapshot.seconds_since_action()) {
    const int a = set.FindAction(name);
    if (a < 0) {
      return e::FieldError(
          absl::StatusCode::kNotFound, e::ErrorReason::kUnknownAction,
          "seconds_since_action",
          UnknownName("action", name, ActionNames(set), set.name()));
    }
    scratch->seconds_since_action[a] =
        std::isnan(seconds) ? e::kNeverRan : seconds;
  }
  input->seconds_since_action = scratch->seconds_since_action;
  return absl::OkStatus();
}

// The targets and which of them is the current one.
absl::Status ResolveTargets(const e::CompiledBehaviourSet& set,
                            const v1::AgentSnapshot& snapshot,
                            AgentScratch* scratch, e::AgentInput* input) {
  scratch->target_values.clear();
  scratch->targets.clear();
  input->current_target = e::kAnyTarget;
  if (!snapshot.current_target().empty())
    input->current_target = e::kTargetGone;
  const size_t width = set.target_factors().size();
  // A target's packed values of the right count are used in place, as the
  // agent's are; the others are resolved into target_values. Spans into
  // that vector are taken after all values are in place (it may move):
  // until then a resolved target's span holds its offset.
  bool resolved = false;
  for (int t = 0; t < snapshot.targets_size(); ++t) {
    const v1::TargetSnapshot& target = snapshot.targets(t);
    if (target.named_factors().empty() &&
        static_cast<size_t>(target.factors_size()) == width) {
      scratch->targets.push_back({absl::MakeConstSpan(
          target.factors().data(), static_cast<size_t>(width))});
    } else {
      const size_t offset = scratch->target_values.size();
      UTILITYD_RETURN_IF_ERROR(ResolveFactors(target.factors(),
                                              target.named_factors(), set, t,
                                              &scratch->target_values));
      scratch->targets.push_back({absl::Span<const float>(nullptr, offset)});
      resolved = true;
    }
    if (!snapshot.current_target().empty() &&
        target.target_id() == snapshot.current_target()) {
      input->current_target = t;
    }
  }
  if (resolved) {
    for (e::TargetInput& target : scratch->targets) {
      if (target.factors.data() != nullptr) continue;
      target.factors = absl::MakeConstSpan(
          scratch->target_values.data() + target.factors.size(), width);
    }
  }
  input->targets = scratch->targets;
  return absl::OkStatus();
}

absl::Status ResolvePersonality(const e::CompiledBehaviourSet& set,
                                const v1::AgentSnapshot& snapshot,
                                e::AgentInput* input) {
  if (snapshot.personality().empty()) return absl::OkStatus();
  input->personality = set.FindPersonality(snapshot.personality());
  if (input->personality >= 0) return absl::OkStatus();
  std::vector<std::string> names;
  for (int p = 0; p < set.personality_count(); ++p) {
    names.push_back(set.personality_name(p));
  }
  return e::FieldError(
      absl::StatusCode::kNotFound, e::ErrorReason::kUnknownPersonality,
      "personality",
      UnknownName("personality", snapshot.personality(), names, set.name()));
}

}  // namespace

absl::Status ResolveAgent(const loader::LoadedSet& loaded,
                          const v1::AgentSnapshot& snapshot,
                          AgentScratch* scratch, e::AgentInput* input) {
  const e::CompiledBehaviourSet& set = loaded.compiled;
  if (!snapshot.expected_revision().empty() &&
      snapshot.expected_revision() != loaded.revision()) {
    return e::FieldError(
        absl::StatusCode::kFailedPrecondition, e::ErrorReason::kStaleRevision,
        "expected_revision",
        absl::StrCat(set.name(), " is at revision ", loaded.revision(),
                     ", the agent expects ", snapshot.expected_revision(),
                     " (refresh the factor order with GetBehaviourSet)"));
  }
  *input = e::AgentInput{};
  UTILITYD_RETURN_IF_ERROR(ResolveAgentFactors(set, snapshot, scratch, input));
  UTILITYD_RETURN_IF_ERROR(ResolveActions(set, snapshot, scratch, input));
  UTILITYD_RETURN_IF_ERROR(ResolveTargets(set, snapshot, scratch, input));
  input->seed = snapshot.seed();
  return ResolvePersonality(set, snapshot, input);
}

e::ExplainLevel ToExplainLevel(v1::Explain explain) {
  switch (explain) {
    case v1::EXPLAIN_TOP:
      return e::ExplainLevel::kTop;
    case v1::EXPLAIN_FULL:
      return e::ExplainLevel::kFull;
    default:
      return e::ExplainLevel::kNone;
  }
}

const std::string& TargetId(const v1::AgentSnapshot& snapshot, int t) {
  static const std::string* const kNone = new std::string();
  return t >= 0 && t < snapshot.targets_size() ? snapshot.targets(t).target_id()
                                               : *kNone;
}

namespace {

// The runner-up, strategy, draw and rank: what explain top adds.
void WriteTopExplanation(const e::CompiledBehaviourSet& set,
                         const v1::AgentSnapshot& snapshot,
                         const e::BatchDecision& d, v1::Explanation* x) {
  if (d.runner_up_action >= 0) {
    x->set_runner_up_action(set.actions()[d.runner_up_action].name);
    x->set_runner_up_target(TargetId(snapshot, d.runner_up_target));
    x->set_runner_up_score(d.runner_up_score);
    x->set_margin(d.score - d.runner_up_score);
  }
  x->set_strategy(e::StrategyName(set.selection().strategy));
  if (d.draw >= 0) x->set_draw(d.draw);
  x->set_rank(d.rank);
}

// Every candidate and consideration, and the summary: what explain full
// adds.
void WriteFullExplanation(const e::CompiledBehaviourSet& set,
                          const v1::AgentSnapshot& snapshot,
                          const e::Decision& d, v1::Explanation* x) {
  auto target_id = [&](int t) -> const std::string& {
    return TargetId(snapshot, t);
  };
  std::vector<std::string> target_ids;
  for (const auto& t : snapshot.targets()) target_ids.push_back(t.target_id());
  for (const e::CandidateTrace& c : d.candidates) {
    const e::CompiledAction& action = set.actions()[c.action];
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
    a->set_vetoed(c.veto != e::VetoReason::kNone);
    if (c.vetoed_by >= 0) {
      a->set_vetoed_by(
          set.considerations()[action.first_consideration + c.vetoed_by].name);
    } else if (c.veto == e::VetoReason::kNoTargets) {
      a->set_vetoed_by("(no targets)");
    }
    a->set_eligible(c.eligible);
    a->set_probability(c.probability);
    if (c.veto == e::VetoReason::kNoTargets) continue;
    for (uint32_t k = 0; k < action.consideration_count; ++k) {
      const e::CompiledConsideration& cc =
          set.considerations()[action.first_consideration + k];
      const e::ConsiderationTrace& t = d.considerations[c.first_trace + k];
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
  x->set_summary(e::FormatSummary(set, d, target_ids));
}

}  // namespace

void WriteDecision(const loader::LoadedSet& loaded,
                   const v1::AgentSnapshot& snapshot, const e::BatchDecision& d,
                   v1::Explain explain, v1::Decision* out) {
  const e::CompiledBehaviourSet& set = loaded.compiled;
  out->set_agent_id(snapshot.agent_id());
  out->set_revision(loaded.revision());
  out->set_action_index(d.action);
  if (d.action >= 0) out->set_action(set.actions()[d.action].name);
  out->set_target_id(TargetId(snapshot, d.target));
  out->set_score(d.score);
  out->set_switched(d.switched);
  out->set_fallback(d.fallback);
  if (ToExplainLevel(explain) == e::ExplainLevel::kNone) return;
  WriteTopExplanation(set, snapshot, d, out->mutable_explanation());
}

void WriteDecision(const loader::LoadedSet& loaded,
                   const v1::AgentSnapshot& snapshot, const e::Decision& d,
                   v1::Explain explain, v1::Decision* out) {
  WriteDecision(loaded, snapshot, static_cast<const e::BatchDecision&>(d),
                explain, out);
  if (ToExplainLevel(explain) != e::ExplainLevel::kFull) return;
  WriteFullExplanation(loaded.compiled, snapshot, d,
                       out->mutable_explanation());
}

void WriteExplanation(const e::CompiledBehaviourSet& set,
                      const v1::AgentSnapshot& snapshot, const e::Decision& d,
                      v1::Explain explain, v1::Explanation* out) {
  const e::ExplainLevel level = ToExplainLevel(explain);
  if (level == e::ExplainLevel::kNone) return;
  WriteTopExplanation(set, snapshot, d, out);
  if (level == e::ExplainLevel::kFull)
    WriteFullExplanation(set, snapshot, d, out);
}

void WriteSensitivity(const e::CompiledBehaviourSet& set,
                      const v1::AgentSnapshot& snapshot,
                      absl::Span<const e::FactorSensitivity> sensitivity,
                      v1::Decision* out) {
  auto crossing = [&](const e::Crossing& c, float from, v1::Crossing* x) {
    x->set_value(c.value);
    x->set_change(c.value - from);
    x->set_action_index(c.action);
    if (c.action >= 0) x->set_action(set.actions()[c.action].name);
    x->set_target_id(TargetId(snapshot, c.target));
  };
  for (const e::FactorSensitivity& s : sensitivity) {
    v1::FactorSensitivity* x = out->add_sensitivity();
    const e::FactorDefinition& def = s.target_factor
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
  static_assert(std::size(e::kErrorReasonNames) == v1::ErrorReason_ARRAYSIZE);
  const int reason = static_cast<int>(e::ReasonOf(status));
  out->set_reason(v1::ErrorReason_IsValid(reason)
                      ? static_cast<v1::ErrorReason>(reason)
                      : v1::ERROR_REASON_UNSPECIFIED);
  out->set_field(e::FieldOf(status));
}

void WriteError(const absl::Status& status, v1::Decision* out) {
  ToError(status, out->mutable_error());
  out->set_action_index(-1);
}

namespace {

// Per-thread working memory of DecideBatch, reused from batch to batch.
struct BatchWork {
  std::vector<AgentScratch> scratch;           // per agent
  std::vector<e::AgentInput> inputs;           // per agent
  std::vector<const loader::LoadedSet*> sets;  // per agent; null: failed
  std::vector<e::AgentInput> group_inputs;     // the agents of one set
  std::vector<int> group_index;                // their request positions
  std::vector<e::BatchDecision> group_out;
  std::vector<absl::Status> group_errors;
  std::vector<e::Decision> group_traces;  // explain full only
  e::BatchDecider decider;
  // Agents of sets with resources, held back for coordination.
  Coordinator coordinator;
  // Requests asking for sensitivity.
  e::SensitivityAnalyser analyser;
  std::vector<e::FactorSensitivity> sensitivity;
  v1::Explain explain = v1::EXPLAIN_NONE;  // as the request, or none (compact)
  // The answer: `response` (its decisions, or in the compact form its
  // arrays, pre-sized, and the sets listed in it so far).
  v1::DecideResponse* response = nullptr;
  v1::CompactDecisions* compact = nullptr;  // null: the full form
  absl::InlinedVector<const loader::LoadedSet*, 4> listed;
  // Compact form: the message an observer asks for (a sampled decision).
  v1::Decision message;

  // Where agent i's complete decision goes: its place in the full form,
  // else a FULL entry of the compact form.
  v1::Decision* FullSlot(int i) {
    if (compact == nullptr) return response->mutable_decisions(i);
    (*compact->mutable_flags())[i] = v1::COMPACT_FLAG_FULL;
    v1::IndexedDecision* x = compact->add_full();
    x->set_agent(i);
    return x->mutable_decision();
  }

  // Compact form: lists `set`'s revision once.
  void List(const loader::LoadedSet& set) {
    if (compact == nullptr || absl::c_find(listed, &set) != listed.end())
      return;
    listed.push_back(&set);
    v1::SetRevision* r = compact->add_revisions();
    r->set_behaviour_set(set.name());
    r->set_revision(set.revision());
  }
};

// Answers agent i with `status`, prefixed with the agent's path.
void FailAgent(int i, const v1::AgentSnapshot& agent,
               const loader::LoadedSet* set, const absl::Status& status,
               v1::Decision* out, BatchObserver* observer) {
  const absl::Status at =
      e::PrefixField(status, absl::StrCat("agents[", i, "]."));
  out->set_agent_id(agent.agent_id());
  WriteError(at, out);
  if (observer != nullptr) observer->OnFailed(i, set, agent, at);
}

}  // namespace

namespace {

// Ticks the tree of agent i's set (trees are not batched: each agent walks
// its own path) and writes its decision.
void TickOne(const loader::LoadedSet& set, int i,
             const v1::DecideRequest& request, BatchWork& work,
             BatchObserver* observer) {
  AgentScratch& scratch = work.scratch[i];
  const e::AgentInput& input = work.inputs[i];
  const v1::AgentSnapshot& agent = request.agents(i);
  v1::Decision* out = work.FullSlot(i);
  e::TreeInput in;
  absl::Status s = ResolveTree(set, agent, &scratch, &in);
  if (s.ok()) {
    s = e::TickTree(set.compiled, input, in, ToExplainLevel(work.explain),
                    &scratch.tick);
  }
  if (!s.ok()) return FailAgent(i, agent, &set, s, out, observer);
  WriteTick(set, agent, scratch.tick, work.explain, out);
  work.List(set);
  if (observer != nullptr) {
    observer->OnTicked(i, set, agent, input, scratch.tick, out);
  }
}

// Finds agent i's set and resolves its snapshot into work.inputs[i]; a
// failure is answered at once and leaves work.sets[i] null. `last` is the
// previous agent's set (most batches use one).
void ResolveOne(const loader::Catalog& catalog,
                const v1::DecideRequest& request, int i,
                const loader::LoadedSet*& last, BatchWork& work,
                BatchObserver* observer) {
  const v1::AgentSnapshot& agent = request.agents(i);
  const loader::LoadedSet* set = nullptr;
  auto fail = [&](const absl::Status& s) {
    FailAgent(i, agent, set, s, work.FullSlot(i), observer);
  };
  if (agent.behaviour_set().empty()) {
    return fail(e::FieldError(absl::StatusCode::kInvalidArgument,
                              e::ErrorReason::kMissingSet, "behaviour_set",
                              "is required"));
  }
  // The catalog keeps its sets alive for the call: plain pointers, no
  // reference counting per agent.
  set = last != nullptr && last->name() == agent.behaviour_set()
            ? last
            : catalog.Find(agent.behaviour_set()).get();
  if (set == nullptr) {
    std::vector<std::string> names;
    for (const auto& [name, _] : catalog.sets()) names.push_back(name);
    return fail(e::FieldError(
        absl::StatusCode::kNotFound, e::ErrorReason::kUnknownSet,
        "behaviour_set",
        e::UnknownNameMessage("set", agent.behaviour_set(), names)));
  }
  last = set;
  if (absl::Status s =
          ResolveAgent(*set, agent, &work.scratch[i], &work.inputs[i]);
      !s.ok()) {
    return fail(s);
  }
  if (set->compiled.tree() != nullptr) {
    return TickOne(*set, i, request, work, observer);
  }
  work.sets[i] = set;
}

// Writes agent i's numbers into the compact form's pre-sized arrays.
void WriteCompact(const e::BatchDecision& d, int i, v1::CompactDecisions* c) {
  c->mutable_action_index()->Set(i, d.action);
  c->mutable_target_index()->Set(i, d.target);
  c->mutable_score()->Set(i, d.score);
  (*c->mutable_flags())[i] =
      static_cast<char>((d.switched ? v1::COMPACT_FLAG_SWITCHED : 0) |
                        (d.fallback ? v1::COMPACT_FLAG_FALLBACK : 0));
}

// Sizes the compact form's arrays for `n` agents: no action, no target.
void StartCompact(int n, v1::CompactDecisions* c) {
  c->mutable_action_index()->Resize(n, -1);
  c->mutable_target_index()->Resize(n, -1);
  c->mutable_score()->Resize(n, 0.0f);
  c->mutable_flags()->assign(n, '\0');
}

// Writes agent i's decision `d` (its trace at explain full) in the
// request's form, with its sensitivity when asked, and, for agent k of
// `coordinator`, its coordination; and shows it to the observer.
void WriteDecided(const loader::LoadedSet& set, int i,
                  const v1::DecideRequest& request, const e::AgentInput& input,
                  const e::BatchDecision& d, const e::Decision* trace,
                  BatchWork& work, BatchObserver* observer,
                  const Coordinator* coordinator = nullptr, size_t k = 0) {
  const v1::AgentSnapshot& agent = request.agents(i);
  v1::Decision* out = nullptr;
  if (work.compact != nullptr) {
    // Numbers only; a message just for an observer that asks.
    WriteCompact(d, i, work.compact);
    if (observer != nullptr && observer->WantsMessage(i)) {
      out = &work.message;
      out->Clear();
      WriteDecision(set, agent, d, v1::EXPLAIN_NONE, out);
      if (coordinator != nullptr) {  // the log keeps it
        coordinator->Describe(request, k, out->mutable_coordination());
      }
    }
  } else {
    out = work.response->mutable_decisions(i);
    if (trace != nullptr) {
      WriteDecision(set, agent, *trace, work.explain, out);
    } else {
      WriteDecision(set, agent, d, work.explain, out);
    }
    if (coordinator != nullptr) {
      coordinator->Describe(request, k, out->mutable_coordination());
      coordinator->DescribeRunnerUp(request, k, out);
    }
    if (request.sensitivity()) {
      // The input was checked by the decision just made.
      if (absl::Status s =
              work.analyser.Analyse(set.compiled, input, &work.sensitivity);
          s.ok()) {
        WriteSensitivity(set.compiled, agent, work.sensitivity, out);
      }
    }
  }
  if (observer != nullptr) observer->OnDecided(i, set, agent, input, d, out);
}

// Allocates the resources of the agents held back for coordination and
// writes their decisions, and the pools.
void Coordinate(const v1::DecideRequest& request, BatchWork& work,
                BatchObserver* observer) {
  Coordinator& c = work.coordinator;
  c.Allocate(request);
  const bool full = ToExplainLevel(work.explain) == e::ExplainLevel::kFull;
  for (size_t k = 0; k < c.agents().size(); ++k) {
    Coordinator::Agent& a = c.agents()[k];
    WriteDecided(*a.set, a.index, request, a.input, a.decision,
                 full ? &a.trace : nullptr, work, observer, &c, k);
  }
  c.WritePools(request, work.response);
  if (observer != nullptr) {
    for (const Coordinator::Counts& n : c.CountsByResource()) {
      observer->OnResources(n.resource, n.grants, n.denials, n.preemptions);
    }
  }
}

// Decides the resolved agents of `set` (from request position `first` on)
// in one pass of the engine and writes their decisions.
void DecideGroup(const loader::LoadedSet& set, int first,
                 const v1::DecideRequest& request, BatchWork& work,
                 BatchObserver* observer) {
  work.group_inputs.clear();
  work.group_index.clear();
  for (int i = first; i < request.agents_size(); ++i) {
    if (work.sets[i] != &set) continue;
    work.group_inputs.push_back(work.inputs[i]);
    work.group_index.push_back(i);
    work.sets[i] = nullptr;  // taken
  }
  const size_t count = work.group_inputs.size();
  work.group_out.resize(count);
  // Explain full: the same pass also writes every trace.
  const e::ExplainLevel level = ToExplainLevel(work.explain);
  const bool full = level == e::ExplainLevel::kFull;
  if (full && work.group_traces.size() < count) work.group_traces.resize(count);
  // Sets with resources: every candidate's score stays readable, for the
  // agents' options in coordination.
  const bool coordinated = set.compiled.has_resources();
  work.decider.set_keep_candidates(coordinated);
  work.decider.Decide(set.compiled, work.group_inputs, level,
                      absl::MakeSpan(work.group_out), &work.group_errors,
                      full ? absl::MakeSpan(work.group_traces.data(), count)
                           : absl::Span<e::Decision>());
  work.List(set);
  for (size_t g = 0; g < count; ++g) {
    const int i = work.group_index[g];
    const v1::AgentSnapshot& agent = request.agents(i);
    const e::BatchDecision& d = work.group_out[g];
    if (const absl::Status& s = work.group_errors[g]; !s.ok()) {
      FailAgent(i, agent, &set, s, work.FullSlot(i), observer);
      continue;
    }
    if (coordinated) {  // written once the whole batch is allocated
      work.coordinator.Hold(i, set, work.group_inputs[g], d,
                            full ? &work.group_traces[g] : nullptr,
                            work.decider, g, agent);
      continue;
    }
    WriteDecided(set, i, request, work.group_inputs[g], d,
                 full ? &work.group_traces[g] : nullptr, work, observer);
  }
  if (observer != nullptr) {
    observer->OnVetoes(set, work.decider.vetoes_by_action(),
                       work.decider.agents_with_invalid_input());
  }
}

}  // namespace

void DecideBatch(const loader::Catalog& catalog,
                 const v1::DecideRequest& request, v1::DecideResponse* response,
                 BatchObserver* observer) {
  thread_local BatchWork work;
  const int n = request.agents_size();
  const bool compact = request.form() == v1::DECISION_FORM_COMPACT;
  work.explain = compact ? v1::EXPLAIN_NONE : request.explain();
  work.response = response;
  work.compact = compact ? response->mutable_compact() : nullptr;
  work.listed.clear();
  response->set_request_id(request.request_id());
  if (compact) {
    StartCompact(n, work.compact);
  } else {
    response->mutable_decisions()->Reserve(n);
    for (int i = 0; i < n; ++i) response->add_decisions();
  }
  if (work.scratch.size() < static_cast<size_t>(n)) work.scratch.resize(n);
  work.inputs.resize(n);
  work.sets.assign(n, nullptr);
  const loader::LoadedSet* last = nullptr;
  for (int i = 0; i < n; ++i) {
    ResolveOne(catalog, request, i, last, work, observer);
  }
  // The agents of each set together, sets in order of first appearance.
  work.coordinator.Clear(request, catalog);
  for (int first = 0; first < n; ++first) {
    if (work.sets[first] != nullptr) {
      DecideGroup(*work.sets[first], first, request, work, observer);
    }
  }
  // Coordination: the agents of sets with resources, across the batch.
  if (!work.coordinator.empty() || request.pools_size() > 0) {
    Coordinate(request, work, observer);
  }
  if (compact) {
    // Engine failures were added after the rest: back into request order.
    auto* full = work.compact->mutable_full();
    auto by_agent = [](const v1::IndexedDecision* a,
                       const v1::IndexedDecision* b) {
      return a->agent() < b->agent();
    };
    if (!std::is_sorted(full->pointer_begin(), full->pointer_end(), by_agent)) {
      std::stable_sort(full->pointer_begin(), full->pointer_end(), by_agent);
    }
  }
  work.response = nullptr;
  work.compact = nullptr;
}

absl::Status CheckForm(const v1::DecideRequest& request) {
  if (request.form() == v1::DECISION_FORM_COMPACT &&
      ToExplainLevel(request.explain()) != e::ExplainLevel::kNone) {
    return e::FieldError(
        absl::StatusCode::kInvalidArgument, e::ErrorReason::kUnspecified,
        "form",
        "the compact form carries no explanations: ask for explain none, or "
        "for the full form");
  }
  if (request.form() == v1::DECISION_FORM_COMPACT && request.sensitivity()) {
    return e::FieldError(
        absl::StatusCode::kInvalidArgument, e::ErrorReason::kUnspecified,
        "sensitivity",
        "the compact form carries no sensitivity: ask for the full form");
  }
  return absl::OkStatus();
}

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
    e::AgentInput input;
    absl::Status s = ResolveAgent(loaded, snapshot, &scratch, &input);
    if (s.ok()) {
      s = e::Decide(loaded.compiled, input, e::ExplainLevel::kFull,
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
  *s.mutable_loaded_at() =
      google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
          absl::ToUnixNanos(loaded_at));
  return s;
}

}  // namespace utilityd::codec
