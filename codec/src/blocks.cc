// The block form: each AgentBlock's columns become engine input in place
// (spans into the parsed message; factor-major factors are the engine's
// working columns as they stand; a copy only of cooldown clocks that say
// "never" with NaN), one engine pass per block, and the answer written as
// columns. A block of one set whose columns are whole reaches the engine
// as those columns (DecideColumns); the others (canary rows, coordination,
// short columns, rows out of range) as one AgentInput per row.
#include "blocks.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "answer_columns.h"
#include "block_columns.h"
#include "tree_wire.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/trees.h"
#include "utilityd/codec/write.h"
#include "utilityd/engine/error_reason.h"

namespace utilityd::codec::internal {
namespace {

// Whether row r of `view` is in the canary's share (and its set decides).
bool Canary(const BlockView& view, int r) {
  return view.canary != nullptr && view.canary_rows[r] != 0;
}

// The set deciding row r of `view`.
const loader::LoadedSet& SetOf(const BlockView& view, int r) {
  return Canary(view, r) ? *view.canary : *view.set;
}

// Marks the rows of `block` in the share of `canary` (may be null) in
// `view`, and names the canary when some row is.
void ShareRows(const loader::LoadedSet* canary, double share,
               const v1::AgentBlock& block, BlockView* view) {
  view->canary = nullptr;
  if (canary == nullptr) return;
  view->canary_rows.resize(block.agent_ids_size());
  bool any = false;
  for (int r = 0; r < block.agent_ids_size(); ++r) {
    view->canary_rows[r] = InCanaryShare(block.agent_ids(r), share) ? 1 : 0;
    any = any || view->canary_rows[r] != 0;
  }
  if (any) view->canary = canary;
}

// Flags the canary's rows, and names its revision.
void MarkCanaryRows(const BlockView& view, v1::DecisionBlock* out) {
  if (view.canary == nullptr) return;
  out->set_canary_revision(view.canary->revision());
  for (int r = 0; r < view.rows; ++r) {
    if (!Canary(view, r)) continue;
    char& flags = (*out->mutable_flags())[r];
    flags = static_cast<char>(flags | v1::COMPACT_FLAG_CANARY);
  }
}

// Answers row r with `status`, prefixed with its block and row.
void FailRow(int b, int r, int index, const loader::LoadedSet* set,
             const absl::Status& status, v1::DecisionBlock* out,
             BatchObserver* observer) {
  const absl::Status at = engine::PrefixField(
      status, absl::StrCat("blocks[", b, "].rows[", r, "]."));
  (*out->mutable_flags())[r] = v1::COMPACT_FLAG_FULL;
  v1::IndexedDecision* x = out->add_full();
  x->set_agent(r);
  WriteError(at, x->mutable_decision());
  if (observer != nullptr) {
    static const v1::AgentSnapshot* const kNone = new v1::AgentSnapshot();
    observer->OnFailed(index, set, *kNone, at);
  }
}

// Writes the engine's answers for the block's decided rows; shows them to
// the observer at once, and one by one those it wants a message for (each
// such row's input built again from the columns).
void WriteRows(const BlockView& view, const loader::LoadedSet& set, bool canary,
               const v1::AgentBlock& block, BlockWork& work,
               v1::DecisionBlock* out, BatchObserver* observer) {
  const int b = view.b, first_index = view.first_index;
  const ColumnWriter<v1::DecisionBlock> columns(out);
  for (size_t g = 0; g < work.rows.size(); ++g) {
    const int r = work.rows[g];
    if (!work.errors[g].ok()) {
      FailRow(b, r, first_index + r, &set, work.errors[g], out, observer);
      continue;
    }
    columns.Write(work.out[g], r);
  }
  if (observer == nullptr) return;
  observer->OnDecidedRows(first_index, work.rows, set,
                          absl::MakeConstSpan(block.current_action().data(),
                                              block.current_action_size()),
                          work.out, work.errors);
  engine::AgentInput in;
  for (size_t g = 0; g < work.rows.size(); ++g) {
    const int r = work.rows[g];
    if (!work.wanted[r] || !work.errors[g].ok()) continue;
    const engine::BatchDecision& d = work.out[g];
    // It was decided from these columns: reading them again cannot fail.
    if (!RowInput(block, view, r, &in).ok()) continue;
    in = WithFactors(set, block, r, in, work);
    RowSnapshot(set, block, r, in, &work.snapshot);
    v1::Decision* message = &work.message;
    message->Clear();
    WriteDecision(set, work.snapshot, d, v1::EXPLAIN_NONE, message);
    if (canary) message->set_variant(v1::VARIANT_CANARY);
    observer->OnRowMessage(first_index + r, set, work.snapshot, in, d, message);
  }
}

// Holds the block's decided rows in `coordinator` (a set with resources),
// each with its snapshot; their inputs point into the message and the
// block's view, which last until the batch is written. Failed rows are
// answered.
void HoldRows(const loader::LoadedSet& set, int b, const v1::AgentBlock& block,
              int first_index, BlockWork& work, v1::DecisionBlock* out,
              BatchObserver* observer, Coordinator* coordinator) {
  for (size_t g = 0; g < work.rows.size(); ++g) {
    const int r = work.rows[g];
    if (!work.errors[g].ok()) {
      FailRow(b, r, first_index + r, &set, work.errors[g], out, observer);
      continue;
    }
    if (work.held_used == work.held_snapshots.size()) {
      work.held_snapshots.emplace_back();
    }
    v1::AgentSnapshot& snapshot = work.held_snapshots[work.held_used++];
    engine::AgentInput in = WithFactors(set, block, r, work.inputs[g], work);
    RowSnapshot(set, block, r, in, &snapshot);
    // Checked before the decision: cannot fail.
    RowHeld(set, block, r, &snapshot).IgnoreError();
    in.factors = snapshot.factors();
    coordinator->Hold(first_index + r, set, in, work.out[g], nullptr,
                      work.decider, g, snapshot);
    Coordinator::Agent& held = coordinator->agents().back();
    held.block = b;
    held.row = r;
  }
}

// A block of one set (no canary rows, no coordination) whose columns fit
// (ColumnsFit): decided as its columns, no input built per row. False,
// nothing done, when the block does not qualify.
bool DecideColumns(const BlockView& view, const loader::LoadedSet& set,
                   const v1::AgentBlock& block, BlockWork& work,
                   v1::DecisionBlock* out, BatchObserver* observer,
                   const Coordinator* coordinator) {
  if (view.canary != nullptr || coordinator != nullptr ||
      !ColumnsFit(block, view)) {
    return false;
  }
  work.out.resize(view.rows);
  work.decider.set_keep_candidates(false);
  // ReadColumns and ColumnsFit checked the shapes the engine checks.
  if (!work.decider
           .DecideColumns(set.compiled, AgentColumnsOf(block, view),
                          absl::MakeSpan(work.out), &work.errors)
           .ok()) {
    return false;
  }
  work.rows.resize(view.rows);
  for (int r = 0; r < view.rows; ++r) work.rows[r] = r;
  WriteRows(view, set, /*canary=*/false, block, work, out, observer);
  if (observer != nullptr) {
    observer->OnVetoes(set, work.decider.vetoes_by_action(),
                       work.decider.agents_with_invalid_input());
  }
  return true;
}

// The rows of a flat set: one engine pass over the rows that read well
// (of the canary's rows, or the live ones); with `coordinator`, a set with
// resources, whose rows it holds.
void DecideRows(const BlockView& view, bool canary, const v1::AgentBlock& block,
                BlockWork& work, v1::DecisionBlock* out,
                BatchObserver* observer, Coordinator* coordinator) {
  const loader::LoadedSet& set = canary ? *view.canary : *view.set;
  const int b = view.b;
  const int first_index = view.first_index;
  work.inputs.clear();
  work.rows.clear();
  const bool coordinated = coordinator != nullptr;
  if (DecideColumns(view, set, block, work, out, observer, coordinator)) {
    return;
  }
  engine::AgentInput in;
  for (int r = 0; r < view.rows; ++r) {
    if (Canary(view, r) != canary) continue;
    absl::Status row = RowInput(block, view, r, &in);
    if (row.ok() && coordinated) row = RowHeld(set, block, r, nullptr);
    if (!row.ok()) {
      FailRow(b, r, first_index + r, &set, row, out, observer);
      continue;
    }
    work.inputs.push_back(in);
    work.rows.push_back(r);
  }
  work.out.resize(work.inputs.size());
  // Sets with resources: every candidate's score stays readable, for the
  // rows' options in coordination.
  work.decider.set_keep_candidates(coordinated);
  if (view.factor_major) {
    work.decider.DecideFactorMajor(
        set.compiled, work.inputs,
        {.data = block.factors().data(),
         .rows = static_cast<size_t>(view.rows),
         // Every row, in order: no map.
         .row_of = work.rows.size() == static_cast<size_t>(view.rows)
                       ? absl::Span<const int>()
                       : absl::Span<const int>(work.rows)},
        absl::MakeSpan(work.out), &work.errors);
  } else {
    work.decider.Decide(set.compiled, work.inputs, engine::ExplainLevel::kNone,
                        absl::MakeSpan(work.out), &work.errors);
  }
  if (coordinated) {
    HoldRows(set, b, block, first_index, work, out, observer, coordinator);
  } else {
    WriteRows(view, set, canary, block, work, out, observer);
  }
  if (observer != nullptr) {
    observer->OnVetoes(set, work.decider.vetoes_by_action(),
                       work.decider.agents_with_invalid_input());
  }
}

// The wire's TreeReset numbers the engine's reasons alike.
static_assert(
    static_cast<int>(engine::TreeReset::kNone) == v1::TREE_RESET_NONE &&
    static_cast<int>(engine::TreeReset::kMalformed) ==
        v1::TREE_RESET_MALFORMED &&
    static_cast<int>(engine::TreeReset::kVersion) == v1::TREE_RESET_VERSION &&
    static_cast<int>(engine::TreeReset::kOtherSet) ==
        v1::TREE_RESET_OTHER_SET &&
    static_cast<int>(engine::TreeReset::kOtherShape) ==
        v1::TREE_RESET_OTHER_SHAPE &&
    static_cast<int>(engine::TreeReset::kCorrupt) == v1::TREE_RESET_CORRUPT &&
    static_cast<int>(engine::TreeReset::kOutOfRange) ==
        v1::TREE_RESET_OUT_OF_RANGE &&
    v1::TreeReset_MAX == v1::TREE_RESET_OUT_OF_RANGE);

// Row r's tree input from the block's tree columns: its state (a view into
// the message), its leaf outcomes (into work.outcomes) and the block's
// game time; or the error naming the column.
absl::Status RowTree(const loader::LoadedSet& set, const v1::AgentBlock& block,
                     int r, BlockWork& work, engine::TreeInput* in) {
  *in = engine::TreeInput{.game_time = block.game_time()};
  uint32_t first, end;
  if (block.tree_state_offsets_size() > 0) {
    UTILITYD_RETURN_IF_ERROR(RowRange(
        "tree_state_offsets", "state bytes", block.tree_state_offsets(), r,
        static_cast<uint32_t>(block.tree_states().size()), &first, &end));
    in->state =
        absl::string_view(block.tree_states()).substr(first, end - first);
  }
  work.outcomes.clear();
  if (block.outcome_offsets_size() > 0) {
    UTILITYD_RETURN_IF_ERROR(RowRange(
        "outcome_offsets", "outcomes", block.outcome_offsets(), r,
        static_cast<uint32_t>(block.outcome_leaves_size()), &first, &end));
    for (uint32_t k = first; k < end; ++k) {
      engine::LeafOutcome o;
      UTILITYD_RETURN_IF_ERROR(internal::ReadLeafOutcome(
          set, block.outcome_leaves(k),
          static_cast<v1::NodeStatus>(block.outcome_statuses(k)),
          absl::StrCat("outcome_leaves[", k, "]"),
          absl::StrCat("outcome_statuses[", k, "]"), &o));
      work.outcomes.push_back(o);
    }
  }
  in->outcomes = work.outcomes;
  return absl::OkStatus();
}

// What a tree row's snapshot carries besides the flat fields.
void RowTreeSnapshot(const engine::TreeInput& in, v1::AgentSnapshot* s) {
  s->set_tree_state(in.state.data(), in.state.size());
  s->set_game_time(in.game_time);
  for (const engine::LeafOutcome& o : in.outcomes) {
    v1::LeafOutcome* x = s->add_leaf_outcomes();
    x->set_leaf(o.leaf);
    x->set_status(internal::ToProto(o.status));
  }
}

// Sizes the tree columns of `rows` rows: statuses and resets per row, the
// offsets' first entries.
void StartTreeColumns(int rows, v1::DecisionBlock* out) {
  out->mutable_tree_status()->Resize(rows, v1::NODE_STATUS_UNSPECIFIED);
  out->mutable_tree_reset()->assign(rows, '\0');
  out->add_tree_state_offsets(0);
  out->add_run_offsets(0);
  out->add_halted_offsets(0);
}

// Ends row r's entries in the offset columns (after its tick, or none).
void EndTreeRow(v1::DecisionBlock* out) {
  out->add_tree_state_offsets(static_cast<uint32_t>(out->tree_states().size()));
  out->add_run_offsets(static_cast<uint32_t>(out->run_nodes_size()));
  out->add_halted_offsets(static_cast<uint32_t>(out->halted_nodes_size()));
}

// Row r's tick as columns: its first run leaf as the row's action (its
// score stays StartColumns' 0), every run and halted leaf, its state,
// status and reset reason.
void WriteTickColumns(const engine::TreeTick& tick,
                      const engine::AgentInput& in, int r,
                      v1::DecisionBlock* out) {
  auto target = [&](int32_t t) {
    return t >= 0 && t < static_cast<int32_t>(in.targets.size()) ? t : -1;
  };
  bool started = false;
  for (const engine::TreeLeaf& l : tick.run) {
    out->add_run_nodes(l.node);
    out->add_run_actions(l.action);
    out->add_run_targets(target(l.target));
    out->mutable_run_started()->push_back(l.started ? '\1' : '\0');
    started |= l.started;
  }
  for (const engine::TreeLeaf& l : tick.halted) {
    out->add_halted_nodes(l.node);
    out->add_halted_actions(l.action);
    out->add_halted_targets(target(l.target));
  }
  out->mutable_tree_states()->append(tick.state);
  out->set_tree_status(r, internal::ToProto(tick.status));
  (*out->mutable_tree_reset())[r] = static_cast<char>(tick.reset);
  if (!tick.run.empty()) {
    out->set_action_index(r, tick.run.front().action);
    out->set_target_index(r, target(tick.run.front().target));
  }
  (*out->mutable_flags())[r] =
      static_cast<char>(started ? v1::COMPACT_FLAG_SWITCHED : 0);
}

// Row r's engine input and (for a set with a tree) tree input, factors
// gathered for a factor-major block (decided or ticked alone).
absl::Status RowInputs(const loader::LoadedSet& set,
                       const v1::AgentBlock& block, const BlockView& view,
                       int r, BlockWork& work, engine::AgentInput* in,
                       engine::TreeInput* tree) {
  UTILITYD_RETURN_IF_ERROR(RowInput(block, view, r, in));
  if (set.compiled.tree() != nullptr) {
    UTILITYD_RETURN_IF_ERROR(RowTree(set, block, r, work, tree));
  }
  *in = WithFactors(set, block, r, *in, work);
  return absl::OkStatus();
}

// The rows of a set with a tree: each row ticked alone (each walks its own
// path, as snapshots do), its tick written as columns.
void TickRows(const BlockView& view, const v1::AgentBlock& block,
              BlockWork& work, v1::DecisionBlock* out,
              BatchObserver* observer) {
  const int b = view.b;
  static const v1::AgentSnapshot* const kNone = new v1::AgentSnapshot();
  StartTreeColumns(view.rows, out);
  engine::AgentInput in;
  engine::TreeInput tree;
  for (int r = 0; r < view.rows; ++r) {
    const loader::LoadedSet& set = SetOf(view, r);
    const int index = view.first_index + r;
    absl::Status s = RowInputs(set, block, view, r, work, &in, &tree);
    if (s.ok()) {
      s = engine::TickTree(set.compiled, in, tree, engine::ExplainLevel::kNone,
                           &work.tick);
    }
    if (!s.ok()) {
      FailRow(b, r, index, &set, s, out, observer);
      EndTreeRow(out);
      continue;
    }
    WriteTickColumns(work.tick, in, r, out);
    EndTreeRow(out);
    if (observer == nullptr) continue;
    if (!work.wanted[r]) {
      observer->OnTicked(index, set, *kNone, in, work.tick, nullptr);
      continue;
    }
    RowSnapshot(set, block, r, in, &work.snapshot);
    RowTreeSnapshot(tree, &work.snapshot);
    work.message.Clear();
    WriteTick(set, work.snapshot, work.tick, v1::EXPLAIN_NONE, &work.message);
    if (Canary(view, r)) work.message.set_variant(v1::VARIANT_CANARY);
    observer->OnTicked(index, set, work.snapshot, in, work.tick, &work.message);
  }
}

// Answers the rows the block names in explain_rows with their explained
// decision (each decided again alone, which the engine decides alike),
// besides their numbers. A row that failed is answered by its error.
void ExplainRows(const BlockView& view, const v1::AgentBlock& block,
                 v1::Explain explain, const Coordinator* coordinator,
                 BlockWork& work, v1::DecisionBlock* out) {
  if (block.explain_rows_size() == 0) return;
  work.explain.assign(block.explain_rows().begin(), block.explain_rows().end());
  std::sort(work.explain.begin(), work.explain.end());
  work.explain.erase(std::unique(work.explain.begin(), work.explain.end()),
                     work.explain.end());
  const engine::ExplainLevel level = ToExplainLevel(explain);
  engine::AgentInput in;
  engine::TreeInput tree;
  for (uint32_t row : work.explain) {
    const int r = static_cast<int>(row);
    const loader::LoadedSet& set = SetOf(view, r);
    char& flags = (*out->mutable_flags())[r];
    if (flags & v1::COMPACT_FLAG_FULL) continue;  // failed: its error
    // It was decided (or ticked) above: the same again cannot fail.
    if (!RowInputs(set, block, view, r, work, &in, &tree).ok()) continue;
    const bool tree_set = set.compiled.tree() != nullptr;
    if (!(tree_set ? engine::TickTree(set.compiled, in, tree, level, &work.tick)
                   : engine::Decide(set.compiled, in, level, &work.decision))
             .ok()) {
      continue;
    }
    const int k =
        coordinator != nullptr ? coordinator->Find(view.first_index + r) : -1;
    if (coordinator != nullptr && k < 0) continue;  // held: cannot be
    v1::IndexedDecision* x = out->add_full();
    x->set_agent(r);
    flags = static_cast<char>(flags | v1::COMPACT_FLAG_FULL);
    if (Canary(view, r)) x->mutable_decision()->set_variant(v1::VARIANT_CANARY);
    if (coordinator != nullptr) {
      // Its allocated decision, with the scoring's explanation and its
      // coordination, as a snapshot's.
      const Coordinator::Agent& a = coordinator->agents()[k];
      static_cast<engine::BatchDecision&>(work.decision) = a.decision;
      v1::Decision* d = x->mutable_decision();
      WriteDecision(set, *a.snapshot, work.decision, explain, d);
      coordinator->Describe(k, d->mutable_coordination());
      coordinator->DescribeRunnerUp(k, d);
      continue;
    }
    RowSnapshot(set, block, r, in, &work.snapshot);
    if (tree_set) {
      RowTreeSnapshot(tree, &work.snapshot);
      WriteTick(set, work.snapshot, work.tick, explain, x->mutable_decision());
    } else {
      WriteDecision(set, work.snapshot, work.decision, explain,
                    x->mutable_decision());
    }
  }
}

// Failed and explained rows were added as found: back into row order.
void SortFull(v1::DecisionBlock* out) {
  auto* full = out->mutable_full();
  std::stable_sort(
      full->pointer_begin(), full->pointer_end(),
      [](const v1::IndexedDecision* x, const v1::IndexedDecision* y) {
        return x->agent() < y->agent();
      });
}

// Decides block b, whose rows are observer indexes first_index on, after
// checking its columns into `view`; the rows of a set with resources are
// held in `coordinator`.
void DecideBlock(const loader::Catalog& catalog, const Variants& variants,
                 const v1::AgentBlock& block, v1::Explain explain,
                 BlockWork& work, BlockView& view, v1::DecisionBlock* out,
                 BatchObserver* observer, Coordinator* coordinator) {
  const loader::LoadedSet* set = nullptr;
  absl::Status s = FindSet(catalog, block, &set);
  if (s.ok()) s = ReadColumns(*set, block, ToExplainLevel(explain), &view);
  if (!s.ok()) {
    view.set = nullptr;
    const absl::Status at =
        engine::PrefixField(s, absl::StrCat("blocks[", view.b, "]."));
    ToError(at, out->mutable_error());
    if (observer != nullptr) {
      for (int r = 0; r < block.agent_ids_size(); ++r) {
        observer->OnFailed(view.first_index + r, set, v1::AgentSnapshot(), at);
      }
    }
    return;
  }
  view.set = set;
  StartColumns(view.rows, out);
  out->set_revision(set->revision());
  work.wanted.assign(view.rows, 0);
  if (observer != nullptr) {
    observer->WantedMessages(view.first_index, absl::MakeSpan(work.wanted));
  }
  ShareRows(variants.CanaryOf(*set), variants.share, block, &view);
  if (set->compiled.tree() != nullptr) {
    TickRows(view, block, work, out, observer);
  } else {
    // A set with resources: written once the batch is allocated
    // (WriteHeldRow), finished by FinishBlocks.
    Coordinator* held = set->compiled.has_resources() ? coordinator : nullptr;
    view.held = held != nullptr;
    if (view.held) out->mutable_grant_offsets()->Resize(view.rows + 1, 0);
    DecideRows(view, false, block, work, out, observer, held);
    if (view.canary != nullptr) {
      DecideRows(view, true, block, work, out, observer, held);
    }
    if (view.held) {
      MarkCanaryRows(view, out);
      return;
    }
  }
  ExplainRows(view, block, explain, nullptr, work, out);
  MarkCanaryRows(view, out);
  SortFull(out);
}

}  // namespace

void DecideBlocks(const loader::Catalog& catalog,
                  const v1::DecideRequest& request, const Variants& variants,
                  BlockWork& work, v1::DecideResponse* response,
                  BatchObserver* observer, Coordinator* coordinator) {
  work.views_used = 0;
  work.held_used = 0;
  int index = request.agents_size();
  response->mutable_blocks()->Reserve(request.blocks_size());
  for (int b = 0; b < request.blocks_size(); ++b) {
    const v1::AgentBlock& block = request.blocks(b);
    BlockView& view = work.NextView();
    view.b = b;
    view.first_index = index;
    view.held = false;
    DecideBlock(catalog, variants, block, request.explain(), work, view,
                response->add_blocks(), observer, coordinator);
    index += block.agent_ids_size();
  }
}

void WriteHeldRow(const v1::DecideRequest& request,
                  const Coordinator& coordinator, size_t k, BlockWork& work,
                  v1::DecideResponse* response, BatchObserver* observer,
                  bool canary) {
  const Coordinator::Agent& a = coordinator.agents()[k];
  const v1::AgentBlock& block = request.blocks(a.block);
  v1::DecisionBlock* out = response->mutable_blocks(a.block);
  const int r = a.row;
  WriteColumns(a.decision, r, out);
  if (coordinator.Denied(k)) {
    (*out->mutable_flags())[r] |= v1::COMPACT_FLAG_DENIED;
  }
  if (canary) (*out->mutable_flags())[r] |= v1::COMPACT_FLAG_CANARY;
  // Its grants: the uses of its allocated option, in the set's order.
  if (const engine::Option* o = coordinator.Chosen(k); o != nullptr) {
    const engine::CompiledBehaviourSet& cs = a.set->compiled;
    const uint32_t first_target =
        block.target_offsets_size() > 0 ? block.target_offsets(r) : 0;
    for (const engine::CompiledUse& u : cs.uses(o->action)) {
      out->add_grant_resources(static_cast<uint32_t>(u.resource));
      out->add_grant_target_ids(cs.resources()[u.resource].per_target
                                    ? block.target_ids(first_target + o->target)
                                    : 0);
      out->add_grant_amounts(static_cast<uint32_t>(u.amount));
    }
  }
  out->set_grant_offsets(r + 1,
                         static_cast<uint32_t>(out->grant_resources_size()));
  if (observer == nullptr) return;
  v1::Decision* message = nullptr;
  if (observer->WantsMessage(a.index)) {
    message = &work.message;
    message->Clear();
    WriteDecision(*a.set, *a.snapshot, a.decision, v1::EXPLAIN_NONE, message);
    coordinator.Describe(k, message->mutable_coordination());
    if (canary) message->set_variant(v1::VARIANT_CANARY);
  }
  observer->OnDecided(a.index, *a.set, *a.snapshot, a.input, a.decision,
                      message);
}

void FinishBlocks(const v1::DecideRequest& request,
                  const Coordinator& coordinator, BlockWork& work,
                  v1::DecideResponse* response) {
  for (size_t v = 0; v < work.views_used; ++v) {
    const BlockView& view = work.views[v];
    if (!view.held) continue;
    v1::DecisionBlock* out = response->mutable_blocks(view.b);
    // Rows without grants (failed, or allocated nothing) end where the row
    // before them ends.
    auto& offsets = *out->mutable_grant_offsets();
    for (int r = 0; r < view.rows; ++r) {
      offsets[r + 1] = std::max(offsets[r + 1], offsets[r]);
    }
    ExplainRows(view, request.blocks(view.b), request.explain(), &coordinator,
                work, out);
    SortFull(out);
  }
  // The indices in the fixed-width columns where a block asked for them:
  // the same in-memory arrays (sint32 and sfixed32 are both int32 here),
  // swapped, so every writer above fills one pair of columns.
  for (int b = 0; b < response->blocks_size() && b < request.blocks_size();
       ++b) {
    if (!request.blocks(b).fixed_width_indices()) continue;
    v1::DecisionBlock* out = response->mutable_blocks(b);
    out->mutable_action_index_fixed()->Swap(out->mutable_action_index());
    out->mutable_target_index_fixed()->Swap(out->mutable_target_index());
  }
}

}  // namespace utilityd::codec::internal
