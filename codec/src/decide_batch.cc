// DecideBatch: a request's agents resolved, grouped by set, decided in one
// engine pass per set, trees ticked, coordinated sets allocated, written in
// the full or the compact form.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "answer_columns.h"
#include "blocks.h"
#include "coordination.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/trees.h"
#include "utilityd/codec/variants.h"
#include "utilityd/codec/write.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/sensitivity.h"

namespace utilityd::codec {
namespace {

// Per-thread working memory of DecideBatch, reused from batch to batch.
struct BatchWork {
  std::vector<AgentScratch> scratch;             // per agent
  std::vector<engine::AgentInput> inputs;        // per agent
  std::vector<const loader::LoadedSet*> sets;    // per agent; null: failed
  std::vector<engine::AgentInput> group_inputs;  // the agents of one set
  std::vector<int> group_index;                  // their request positions
  std::vector<engine::BatchDecision> group_out;
  std::vector<absl::Status> group_errors;
  std::vector<engine::Decision> group_traces;  // explain full only
  engine::BatchDecider decider;
  // Agents of sets with resources, held back for coordination.
  Coordinator coordinator;
  // The block form's.
  internal::BlockWork blocks;
  // Requests asking for sensitivity.
  engine::SensitivityAnalyser analyser;
  std::vector<engine::FactorSensitivity> sensitivity;
  v1::Explain explain = v1::EXPLAIN_NONE;  // as the request, or none (compact)
  // The answer: `response` (its decisions, or in the compact form its
  // arrays, pre-sized, and the sets listed in it so far).
  v1::DecideResponse* response = nullptr;
  v1::CompactDecisions* compact = nullptr;  // null: the full form
  absl::InlinedVector<const loader::LoadedSet*, 4> listed;
  // Compact form: the message an observer asks for (a sampled decision).
  v1::Decision message;
  // Canary rollouts: the request's variants, and a cache of the live set
  // last routed (and its canary set) and of the set last asked about.
  Variants variants;
  const loader::LoadedSet* routed_live = nullptr;
  const loader::LoadedSet* routed_canary = nullptr;
  const loader::LoadedSet* checked = nullptr;
  bool checked_canary = false;

  // The set deciding agent `agent_id` of live set `live`.
  const loader::LoadedSet& Route(const loader::LoadedSet& live,
                                 absl::string_view agent_id) {
    if (variants.canary == nullptr) return live;
    if (&live != routed_live) {
      routed_live = &live;
      routed_canary = variants.CanaryOf(live);
    }
    return routed_canary != nullptr && InCanaryShare(agent_id, variants.share)
               ? *routed_canary
               : live;
  }

  bool IsCanary(const loader::LoadedSet& set) {
    if (variants.canary == nullptr) return false;
    if (&set != checked) {
      checked = &set;
      checked_canary = variants.canary->Find(set.name()).get() == &set;
    }
    return checked_canary;
  }

  // Marks agent i's answer as the canary's when `set` is: its message
  // (`out`, when there is one) and its compact flag.
  void Mark(const loader::LoadedSet* set, int i, v1::Decision* out) {
    if (set == nullptr || !IsCanary(*set)) return;
    if (out != nullptr) out->set_variant(v1::VARIANT_CANARY);
    if (compact != nullptr) {
      char& flags = (*compact->mutable_flags())[i];
      flags = static_cast<char>(flags | v1::COMPACT_FLAG_CANARY);
    }
  }

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
    if (IsCanary(set)) r->set_variant(v1::VARIANT_CANARY);
  }
};

// Answers agent i with `status`, prefixed with the agent's path.
void FailAgent(int i, const v1::AgentSnapshot& agent,
               const loader::LoadedSet* set, const absl::Status& status,
               BatchWork& work, BatchObserver* observer) {
  const absl::Status at =
      engine::PrefixField(status, absl::StrCat("agents[", i, "]."));
  v1::Decision* out = work.FullSlot(i);
  out->set_agent_id(agent.agent_id());
  WriteError(at, out);
  work.Mark(set, i, out);
  if (observer != nullptr) observer->OnFailed(i, set, agent, at);
}

// Ticks the tree of agent i's set (trees are not batched: each agent walks
// its own path) and writes its decision.
void TickOne(const loader::LoadedSet& set, int i,
             const v1::DecideRequest& request, BatchWork& work,
             BatchObserver* observer) {
  AgentScratch& scratch = work.scratch[i];
  const engine::AgentInput& input = work.inputs[i];
  const v1::AgentSnapshot& agent = request.agents(i);
  engine::TreeInput in;
  absl::Status s = ResolveTree(set, agent, &scratch, &in);
  if (s.ok()) {
    s = engine::TickTree(set.compiled, input, in, ToExplainLevel(work.explain),
                         &scratch.tick);
  }
  if (!s.ok()) return FailAgent(i, agent, &set, s, work, observer);
  v1::Decision* out = work.FullSlot(i);
  WriteTick(set, agent, scratch.tick, work.explain, out);
  work.Mark(&set, i, out);
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
    FailAgent(i, agent, set, s, work, observer);
  };
  if (agent.behaviour_set().empty()) {
    return fail(engine::FieldError(absl::StatusCode::kInvalidArgument,
                                   engine::ErrorReason::kMissingSet,
                                   "behaviour_set", "is required"));
  }
  // The catalog keeps its sets alive for the call: plain pointers, no
  // reference counting per agent.
  set = last != nullptr && last->name() == agent.behaviour_set()
            ? last
            : catalog.Find(agent.behaviour_set()).get();
  if (set == nullptr) {
    std::vector<std::string> names;
    for (const auto& [name, _] : catalog.sets()) names.push_back(name);
    return fail(engine::FieldError(
        absl::StatusCode::kNotFound, engine::ErrorReason::kUnknownSet,
        "behaviour_set",
        engine::UnknownNameMessage("set", agent.behaviour_set(), names)));
  }
  last = set;
  const loader::LoadedSet* live = set;
  set = &work.Route(*live, agent.agent_id());
  if (absl::Status s =
          ResolveAgent(*set, agent, &work.scratch[i], &work.inputs[i], live);
      !s.ok()) {
    return fail(s);
  }
  if (set->compiled.tree() != nullptr) {
    return TickOne(*set, i, request, work, observer);
  }
  work.sets[i] = set;
}

// Writes agent i's decision `d` (its trace at explain full) in the
// request's form, with its sensitivity when asked, and, for agent k of
// `coordinator`, its coordination; and shows it to the observer.
void WriteDecided(const loader::LoadedSet& set, int i,
                  const v1::DecideRequest& request,
                  const engine::AgentInput& input,
                  const engine::BatchDecision& d, const engine::Decision* trace,
                  BatchWork& work, BatchObserver* observer,
                  const Coordinator* coordinator = nullptr, size_t k = 0) {
  const v1::AgentSnapshot& agent = request.agents(i);
  v1::Decision* out = nullptr;
  if (work.compact != nullptr) {
    // Numbers only; a message just for an observer that asks.
    internal::WriteColumns(d, i, work.compact);
    if (coordinator != nullptr && coordinator->Denied(k)) {
      (*work.compact->mutable_flags())[i] |= v1::COMPACT_FLAG_DENIED;
    }
    if (observer != nullptr && observer->WantsMessage(i)) {
      out = &work.message;
      out->Clear();
      WriteDecision(set, agent, d, v1::EXPLAIN_NONE, out);
      if (coordinator != nullptr) {  // the log keeps it
        coordinator->Describe(k, out->mutable_coordination());
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
      coordinator->Describe(k, out->mutable_coordination());
      coordinator->DescribeRunnerUp(k, out);
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
  work.Mark(&set, i, out);
  if (observer != nullptr) observer->OnDecided(i, set, agent, input, d, out);
}

// Allocates the resources of the agents held back for coordination (the
// snapshots' and the block rows') and writes their decisions, and the
// pools.
void Coordinate(const v1::DecideRequest& request, BatchWork& work,
                BatchObserver* observer) {
  Coordinator& c = work.coordinator;
  c.Allocate(request);
  const bool full = ToExplainLevel(work.explain) == engine::ExplainLevel::kFull;
  for (size_t k = 0; k < c.agents().size(); ++k) {
    Coordinator::Agent& a = c.agents()[k];
    if (a.block >= 0) {
      internal::WriteHeldRow(request, c, k, work.blocks, work.response,
                             observer, work.IsCanary(*a.set));
      continue;
    }
    WriteDecided(*a.set, a.index, request, a.input, a.decision,
                 full ? &a.trace : nullptr, work, observer, &c, k);
  }
  c.WritePools(work.response);
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
  const engine::ExplainLevel level = ToExplainLevel(work.explain);
  const bool full = level == engine::ExplainLevel::kFull;
  if (full && work.group_traces.size() < count) work.group_traces.resize(count);
  // Sets with resources: every candidate's score stays readable, for the
  // agents' options in coordination.
  const bool coordinated = set.compiled.has_resources();
  work.decider.set_keep_candidates(coordinated);
  work.decider.Decide(set.compiled, work.group_inputs, level,
                      absl::MakeSpan(work.group_out), &work.group_errors,
                      full ? absl::MakeSpan(work.group_traces.data(), count)
                           : absl::Span<engine::Decision>());
  work.List(set);
  for (size_t g = 0; g < count; ++g) {
    const int i = work.group_index[g];
    const v1::AgentSnapshot& agent = request.agents(i);
    const engine::BatchDecision& d = work.group_out[g];
    if (const absl::Status& s = work.group_errors[g]; !s.ok()) {
      FailAgent(i, agent, &set, s, work, observer);
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
                 BatchObserver* observer, const Variants& variants) {
  thread_local BatchWork work;
  work.variants = variants;
  work.routed_live = work.checked = nullptr;
  const int n = request.agents_size();
  const bool compact = request.form() == v1::DECISION_FORM_COMPACT;
  work.explain = compact ? v1::EXPLAIN_NONE : request.explain();
  work.response = response;
  work.compact = compact ? response->mutable_compact() : nullptr;
  work.listed.clear();
  response->set_request_id(request.request_id());
  if (compact) {
    internal::StartColumns(n, work.compact);
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
  // Blocks; the rows of sets with resources are held for coordination.
  if (request.blocks_size() > 0) {
    internal::DecideBlocks(catalog, request, variants, work.blocks, response,
                           observer, &work.coordinator);
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
  if (request.blocks_size() > 0) {
    internal::FinishBlocks(request, work.coordinator, work.blocks, response);
  }
  // What a request of the service's largest allowed coordination leaves
  // is freed, not kept with the thread (about 1 MiB is kept).
  work.coordinator.ReleaseIfLarge(/*keep_pools=*/4096,
                                  /*keep_holdings=*/16384);
}

int RequestRows(const v1::DecideRequest& request) {
  int rows = request.agents_size();
  for (const v1::AgentBlock& block : request.blocks()) {
    rows += block.agent_ids_size();
  }
  return rows;
}

void WriteDecisionIdBases(const v1::DecideRequest& request, uint64_t first,
                          v1::DecideResponse* response) {
  if (response->has_compact()) {
    response->mutable_compact()->set_decision_id_base(first);
  }
  uint64_t base = first + static_cast<uint64_t>(request.agents_size());
  for (int b = 0; b < response->blocks_size() && b < request.blocks_size();
       ++b) {
    response->mutable_blocks(b)->set_decision_id_base(base);
    base += static_cast<uint64_t>(request.blocks(b).agent_ids_size());
  }
}

RequestSize MeasureRequest(const v1::DecideRequest& request) {
  RequestSize size;
  size.rows = RequestRows(request);
  size.pools = request.pools_size();
  for (const v1::ResourcePool& pool : request.pools()) {
    size.holders += pool.holders_size();
  }
  for (const v1::AgentSnapshot& agent : request.agents()) {
    size.targets += agent.targets_size();
    size.holders += agent.held_size();
  }
  for (const v1::AgentBlock& block : request.blocks()) {
    size.targets += std::max(block.target_ids_size(),
                             block.target_offsets().empty()
                                 ? 0
                                 : static_cast<int>(block.target_offsets(
                                       block.target_offsets_size() - 1)));
    size.holders += block.held_resources_size();
  }
  return size;
}

absl::Status CheckForm(const v1::DecideRequest& request) {
  if (request.form() == v1::DECISION_FORM_COMPACT &&
      ToExplainLevel(request.explain()) != engine::ExplainLevel::kNone) {
    return engine::FieldError(
        absl::StatusCode::kInvalidArgument, engine::ErrorReason::kUnspecified,
        "form",
        "the compact form carries no explanations: ask for explain none, or "
        "for the full form");
  }
  if (request.form() == v1::DECISION_FORM_COMPACT && request.sensitivity()) {
    return engine::FieldError(
        absl::StatusCode::kInvalidArgument, engine::ErrorReason::kUnspecified,
        "sensitivity",
        "the compact form carries no sensitivity: ask for the full form");
  }
  if (request.blocks_size() > 0 && request.sensitivity()) {
    return engine::FieldError(
        absl::StatusCode::kInvalidArgument, engine::ErrorReason::kUnspecified,
        "blocks",
        "blocks are answered without sensitivity: send the agents whose "
        "sensitivity you want as snapshots (agents)");
  }
  return absl::OkStatus();
}

}  // namespace utilityd::codec
