// A block's columns read and checked against its set (block_columns.h).
#include "block_columns.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "tree_wire.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/batch.h"

namespace utilityd::codec::internal {

absl::Status Refuse(absl::StatusCode code, engine::ErrorReason reason,
                    absl::string_view field, absl::string_view detail) {
  return engine::FieldError(code, reason, field, detail);
}

// The reason of a column whose length does not fit the block: FACTOR_COUNT
// for the packed factor values (`factors`, `target_factors`), OUT_OF_RANGE
// for every other column (docs/SERVICE.md, "Blocks").
engine::ErrorReason LengthReason(absl::string_view field) {
  return field == "factors" || field == "target_factors"
             ? engine::ErrorReason::kFactorCount
             : engine::ErrorReason::kOutOfRange;
}

// A column of one value per row (`per_row` of them) that is longer than
// its rows.
absl::Status CheckLength(absl::string_view field, int size, int rows,
                         int per_row) {
  if (static_cast<int64_t>(size) <= static_cast<int64_t>(rows) * per_row) {
    return absl::OkStatus();
  }
  return Refuse(absl::StatusCode::kInvalidArgument, LengthReason(field), field,
                absl::StrCat("has ", size, " values for ", rows, " rows (",
                             per_row, " a row); a column holds one value ",
                             per_row == 1 ? "per row" : "per row and column"));
}

// The set of `block`, or the error that refuses the whole block.
absl::Status FindSet(const loader::Catalog& catalog,
                     const v1::AgentBlock& block,
                     const loader::LoadedSet** out) {
  if (block.behaviour_set().empty()) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kMissingSet, "behaviour_set",
                  "is required");
  }
  const loader::LoadedSet* set = catalog.Find(block.behaviour_set()).get();
  if (set == nullptr) {
    std::vector<std::string> names;
    for (const auto& [name, _] : catalog.sets()) names.push_back(name);
    return Refuse(
        absl::StatusCode::kNotFound, engine::ErrorReason::kUnknownSet,
        "behaviour_set",
        engine::UnknownNameMessage("set", block.behaviour_set(), names));
  }
  if (!block.expected_revision().empty() &&
      block.expected_revision() != set->revision()) {
    return Refuse(
        absl::StatusCode::kFailedPrecondition,
        engine::ErrorReason::kStaleRevision, "expected_revision",
        absl::StrCat(set->name(), " is at revision ", set->revision(),
                     ", the block expects ", block.expected_revision(),
                     " (refresh the factor order with GetBehaviourSet)"));
  }
  *out = set;
  return absl::OkStatus();
}

// Checks the target columns as a whole (each row's offsets are checked
// with its row) and points one TargetInput per target into the message.
absl::Status ReadTargets(const loader::LoadedSet& set,
                         const v1::AgentBlock& block, BlockView* c) {
  const int offsets = block.target_offsets_size();
  const int64_t per_target = set.compiled.target_factor_count();
  c->target_inputs.clear();
  if (offsets == 0) {
    if (block.target_factors_size() == 0 && block.target_ids_size() == 0) {
      return absl::OkStatus();
    }
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, "target_offsets",
                  "is empty, but the block has target_factors or target_ids: "
                  "say which targets are each row's");
  }
  if (offsets != c->rows + 1) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, "target_offsets",
                  absl::StrCat("has ", offsets, " values for ", c->rows,
                               " rows; it holds one per row and one more "
                               "(where the last row's targets end)"));
  }
  c->targets = block.target_offsets(c->rows);
  if (block.target_factors_size() != c->targets * per_target) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kFactorCount, "target_factors",
                  absl::StrCat("expected ", c->targets * per_target,
                               " values (", c->targets, " targets x ",
                               per_target, " target factors of ", set.name(),
                               "), got ", block.target_factors_size()));
  }
  // Targets without factors are counted by their ids, so that every
  // target the block claims is backed by bytes it carries.
  if (per_target == 0 && c->targets > 0 &&
      static_cast<uint32_t>(block.target_ids_size()) != c->targets) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, "target_ids",
                  absl::StrCat("has ", block.target_ids_size(), " ids for ",
                               c->targets, " targets; ", set.name(),
                               "'s targets have no factors, so each needs its "
                               "id"));
  }
  if (block.target_ids_size() != 0 &&
      static_cast<uint32_t>(block.target_ids_size()) != c->targets) {
    return Refuse(
        absl::StatusCode::kInvalidArgument, engine::ErrorReason::kOutOfRange,
        "target_ids",
        absl::StrCat("has ", block.target_ids_size(), " ids for ", c->targets,
                     " targets; send one per target, "
                     "or none"));
  }
  c->target_inputs.resize(c->targets);
  for (uint32_t t = 0; t < c->targets; ++t) {
    c->target_inputs[t].factors = absl::MakeConstSpan(
        block.target_factors().data() + t * per_target, per_target);
  }
  return absl::OkStatus();
}

// An offsets column of a tree block: empty, or rows + 1 entries whose last
// is `size`, the length of what it indexes (rows' own ranges are checked
// with their rows).
absl::Status CheckOffsets(absl::string_view field, int offsets, int rows,
                          uint32_t last, size_t size,
                          absl::string_view indexed) {
  if (offsets == 0) return absl::OkStatus();
  if (offsets != rows + 1) {
    return Refuse(absl::StatusCode::kInvalidArgument, LengthReason(field),
                  field,
                  absl::StrCat("has ", offsets, " values for ", rows,
                               " rows; it holds one per row and one more "
                               "(where the last row's end)"));
  }
  if (last != size) {
    return Refuse(
        absl::StatusCode::kInvalidArgument, LengthReason(field), field,
        absl::StrCat("ends at ", last, ", but ", indexed, " has ", size));
  }
  return absl::OkStatus();
}

// The tree columns' sizes, as a whole.
absl::Status CheckTreeColumns(const v1::AgentBlock& block, int rows) {
  const int states = block.tree_state_offsets_size();
  UTILITYD_RETURN_IF_ERROR(
      CheckOffsets("tree_state_offsets", states, rows,
                   states > 0 ? block.tree_state_offsets(states - 1) : 0,
                   block.tree_states().size(), "tree_states"));
  if (states == 0 && !block.tree_states().empty()) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, "tree_state_offsets",
                  "is empty, but tree_states is not: say where each row's "
                  "state starts");
  }
  const int outcomes = block.outcome_offsets_size();
  const uint32_t last = outcomes > 0 ? block.outcome_offsets(outcomes - 1) : 0;
  UTILITYD_RETURN_IF_ERROR(CheckOffsets("outcome_offsets", outcomes, rows, last,
                                        block.outcome_leaves_size(),
                                        "outcome_leaves"));
  if (static_cast<size_t>(block.outcome_statuses_size()) !=
      static_cast<size_t>(block.outcome_leaves_size())) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, "outcome_statuses",
                  absl::StrCat("has ", block.outcome_statuses_size(),
                               " values for ", block.outcome_leaves_size(),
                               " outcome_leaves: one status per leaf"));
  }
  return absl::OkStatus();
}

// Row r's range [*first, *end) of an offsets column (of `what`, e.g.
// "targets"), or its error.
absl::Status RowRange(absl::string_view field, absl::string_view what,
                      const google::protobuf::RepeatedField<uint32_t>& offsets,
                      int r, uint32_t limit, uint32_t* first, uint32_t* end) {
  *first = offsets[r];
  *end = offsets[r + 1];
  if (*first > *end) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, field,
                  absl::StrCat("out of order: the row's ", what,
                               " would run from ", *first, " back to ", *end));
  }
  if (*end > limit) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, field,
                  absl::StrCat("out of range: the row's ", what, " end at ",
                               *end, ", the block has ", limit));
  }
  return absl::OkStatus();
}

// The held columns' sizes, as a whole, for a set with resources; and the
// target ids its per-target pools are named by.
absl::Status CheckHeldColumns(const loader::LoadedSet& set,
                              const v1::AgentBlock& block, const BlockView& c) {
  const int offsets = block.held_offsets_size();
  const int held = block.held_resources_size();
  UTILITYD_RETURN_IF_ERROR(
      CheckOffsets("held_offsets", offsets, c.rows,
                   offsets > 0 ? block.held_offsets(offsets - 1) : 0,
                   static_cast<size_t>(held), "held_resources"));
  if (offsets == 0 && held > 0) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, "held_offsets",
                  "is empty, but held_resources is not: say which holdings "
                  "are each row's");
  }
  for (auto [field, size] :
       {std::pair<const char*, int>{"held_target_ids",
                                    block.held_target_ids_size()},
        {"held_amounts", block.held_amounts_size()}}) {
    if (size != 0 && size != held) {
      return Refuse(absl::StatusCode::kInvalidArgument, LengthReason(field),
                    field,
                    absl::StrCat("has ", size, " values for ", held,
                                 " held_resources: one per holding, or none"));
    }
  }
  const auto& resources = set.compiled.resources();
  const bool per_target = std::any_of(
      resources.begin(), resources.end(),
      [](const engine::CompiledResource& r) { return r.per_target; });
  if (per_target && c.targets > 0 && block.target_ids_size() == 0) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kOutOfRange, "target_ids",
                  absl::StrCat("is empty, but ", set.name(),
                               " has per-target resources, whose pools are "
                               "named by their target's id: send one per "
                               "target"));
  }
  return absl::OkStatus();
}

// Checks the columns' lengths.
absl::Status ReadColumns(const loader::LoadedSet& set,
                         const v1::AgentBlock& block,
                         engine::ExplainLevel level, BlockView* c) {
  c->factor_major = false;
  c->values = c->seconds = nullptr;
  c->targets = 0;
  c->rows = block.agent_ids_size();
  c->factors = set.compiled.factor_count();
  c->actions = set.compiled.action_count();
  const int n = c->rows;
  if (absl::Status s =
          CheckLength("factors", block.factors_size(), n, c->factors);
      !s.ok()) {
    return s;
  }
  for (auto [field, size, per_row] :
       {std::tuple<const char*, int, int>{"current_action",
                                          block.current_action_size(), 1},
        {"seconds_since_action", block.seconds_since_action_size(), c->actions},
        {"seeds", block.seeds_size(), 1},
        {"personality", block.personality_size(), 1},
        {"current_target", block.current_target_size(), 1}}) {
    if (absl::Status s = CheckLength(field, size, n, per_row); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = ReadTargets(set, block, c); !s.ok()) return s;
  if (set.compiled.tree() != nullptr) {
    if (absl::Status s = CheckTreeColumns(block, n); !s.ok()) return s;
  }
  if (set.compiled.has_resources()) {
    if (absl::Status s = CheckHeldColumns(set, block, *c); !s.ok()) return s;
  }
  if (block.explain_rows_size() > 0 && level == engine::ExplainLevel::kNone) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  engine::ErrorReason::kUnspecified, "explain_rows",
                  "names rows to explain, but the request asks for explain "
                  "none: set DecideRequest.explain to top or full");
  }
  for (uint32_t r : block.explain_rows()) {
    if (r >= static_cast<uint32_t>(n)) {
      return Refuse(absl::StatusCode::kInvalidArgument,
                    engine::ErrorReason::kOutOfRange, "explain_rows",
                    absl::StrCat("row ", r, " is out of range: the block has ",
                                 n, " rows"));
    }
  }
  c->values = block.factors().data();
  if (block.layout() == v1::FACTOR_LAYOUT_COLUMNS) {
    // Factor-major: its rows cannot be told apart unless it is whole.
    if (block.factors_size() != n * c->factors) {
      return Refuse(
          absl::StatusCode::kInvalidArgument, engine::ErrorReason::kFactorCount,
          "factors",
          absl::StrCat("factor-major: expected ", n * c->factors, " values (",
                       n, " rows x ", c->factors, " factors of ", set.name(),
                       "), got ", block.factors_size()));
    }
    c->factor_major = true;  // the engine reads the columns themselves
  }
  c->seconds = block.seconds_since_action().data();
  bool never = false;
  for (float s : block.seconds_since_action()) never |= std::isnan(s);
  if (never) {
    c->clocks.assign(block.seconds_since_action().begin(),
                     block.seconds_since_action().end());
    for (float& s : c->clocks) {
      if (std::isnan(s)) s = engine::kNeverRan;
    }
    c->seconds = c->clocks.data();
  }
  return absl::OkStatus();
}

bool ColumnsFit(const v1::AgentBlock& block, const BlockView& c) {
  const int n = c.rows;
  // Factor-major columns were checked whole (ReadColumns).
  if (!c.factor_major && block.factors_size() != n * c.factors) return false;
  for (int size : {block.current_action_size(), block.seeds_size(),
                   block.personality_size(), block.current_target_size()}) {
    if (size != 0 && size != n) return false;
  }
  const int clocks = block.seconds_since_action_size();
  if (clocks != 0 && clocks != n * c.actions) return false;
  // ReadTargets checked the offsets' count and last entry.
  const uint32_t* off = block.target_offsets().data();
  const bool targets = block.target_offsets_size() > 0;
  const int32_t* current = block.current_target().data();
  uint32_t bad = 0;
  for (int r = 0; r < n; ++r) {
    const uint32_t count = targets ? off[r + 1] - off[r] : 0;
    if (targets) {
      bad |= static_cast<uint32_t>(off[r] > off[r + 1]) |
             static_cast<uint32_t>(count > kMaxTargetsPerAgent);
    }
    if (block.current_target_size() > 0) {
      // -2 (gone), -1 (not given) or one of the row's.
      bad |= static_cast<uint32_t>(current[r]) + 2u >= count + 2u;
    }
  }
  return bad == 0;
}

engine::AgentColumns AgentColumnsOf(const v1::AgentBlock& block,
                                    const BlockView& c) {
  auto span = [](const auto& field) {
    return absl::MakeConstSpan(field.data(), field.size());
  };
  return {.rows = static_cast<size_t>(c.rows),
          .factors = block.factors().data(),
          .factors_by_row = !c.factor_major,
          .current_action = span(block.current_action()),
          .current_target = span(block.current_target()),
          .personality = span(block.personality()),
          .seeds = span(block.seeds()),
          // NaN made "never" (ReadColumns).
          .seconds_since_action =
              absl::MakeConstSpan(c.seconds, block.seconds_since_action_size()),
          .target_offsets = span(block.target_offsets()),
          .target_factors = span(block.target_factors())};
}

// Row r's engine input, or the error naming the column it lacks.
absl::Status RowInput(const v1::AgentBlock& block, const BlockView& c, int r,
                      engine::AgentInput* in) {
  auto short_column = [&](absl::string_view field, int size, int per_row) {
    return Refuse(absl::StatusCode::kInvalidArgument, LengthReason(field),
                  field,
                  absl::StrCat("the column has ", size, " values, ", per_row,
                               " a row: it ends before this row"));
  };
  *in = engine::AgentInput{};
  const int f = c.factors;
  if (!c.factor_major) {
    if (block.factors_size() < (r + 1) * f) {
      return short_column("factors", block.factors_size(), f);
    }
    in->factors = absl::MakeConstSpan(c.values + r * f, f);
  }
  if (block.current_action_size() > 0) {
    if (r >= block.current_action_size()) {
      return short_column("current_action", block.current_action_size(), 1);
    }
    in->current_action = block.current_action(r);
  }
  if (block.seconds_since_action_size() > 0) {
    if (block.seconds_since_action_size() < (r + 1) * c.actions) {
      return short_column("seconds_since_action",
                          block.seconds_since_action_size(), c.actions);
    }
    in->seconds_since_action =
        absl::MakeConstSpan(c.seconds + r * c.actions, c.actions);
  }
  if (block.seeds_size() > 0) {
    if (r >= block.seeds_size()) {
      return short_column("seeds", block.seeds_size(), 1);
    }
    in->seed = block.seeds(r);
  }
  if (block.personality_size() > 0) {
    if (r >= block.personality_size()) {
      return short_column("personality", block.personality_size(), 1);
    }
    in->personality = block.personality(r);
  }
  in->current_target = engine::kAnyTarget;
  if (block.target_offsets_size() > 0) {
    uint32_t first, end;
    UTILITYD_RETURN_IF_ERROR(RowRange("target_offsets", "targets",
                                      block.target_offsets(), r, c.targets,
                                      &first, &end));
    if (end - first > static_cast<uint32_t>(kMaxTargetsPerAgent)) {
      return Refuse(absl::StatusCode::kInvalidArgument,
                    engine::ErrorReason::kOutOfRange, "target_offsets",
                    absl::StrCat("the row has ", end - first,
                                 " targets; an agent may have at most ",
                                 kMaxTargetsPerAgent));
    }
    in->targets =
        absl::MakeConstSpan(c.target_inputs.data() + first, end - first);
  }
  if (block.current_target_size() > 0) {
    if (r >= block.current_target_size()) {
      return short_column("current_target", block.current_target_size(), 1);
    }
    const int t = block.current_target(r);
    if (t < engine::kTargetGone || t >= static_cast<int>(in->targets.size())) {
      return Refuse(absl::StatusCode::kInvalidArgument,
                    engine::ErrorReason::kOutOfRange, "current_target",
                    absl::StrCat("index ", t, " is out of range: the row has ",
                                 in->targets.size(),
                                 " targets (-1: not given, -2: gone)"));
    }
    in->current_target = t;
  }
  return absl::OkStatus();
}

// Row r as the snapshot that decides the same (for the decision log, the
// live feed and shadow evaluation, which keep snapshots).
void RowSnapshot(const loader::LoadedSet& set, const v1::AgentBlock& block,
                 int r, const engine::AgentInput& in, v1::AgentSnapshot* s) {
  s->Clear();
  s->set_agent_id(absl::StrCat(block.agent_ids(r)));
  s->set_behaviour_set(set.name());
  s->set_expected_revision(block.expected_revision());
  s->mutable_factors()->Add(in.factors.begin(), in.factors.end());
  const engine::CompiledBehaviourSet& c = set.compiled;
  if (in.current_action >= 0) {
    s->set_current_action(c.actions()[in.current_action].name);
  }
  for (size_t a = 0; a < in.seconds_since_action.size(); ++a) {
    const float v = in.seconds_since_action[a];
    if (std::isfinite(v)) {
      (*s->mutable_seconds_since_action())[c.actions()[a].name] = v;
    }
  }
  s->set_seed(in.seed);
  if (in.personality >= 0)
    s->set_personality(c.personality_name(in.personality));
  // Targets by their entity id, or their number within the row.
  const uint32_t first =
      block.target_offsets_size() > 0 ? block.target_offsets(r) : 0;
  auto target_id = [&](size_t t) {
    return block.target_ids_size() > 0
               ? absl::StrCat(block.target_ids(first + t))
               : absl::StrCat(t);
  };
  for (size_t t = 0; t < in.targets.size(); ++t) {
    v1::TargetSnapshot* target = s->add_targets();
    target->set_target_id(target_id(t));
    target->mutable_factors()->Add(in.targets[t].factors.begin(),
                                   in.targets[t].factors.end());
  }
  if (in.current_target >= 0) {
    s->set_current_target(target_id(in.current_target));
  } else if (in.current_target == engine::kTargetGone) {
    s->set_current_target("gone");
  }
}

// Row r's holdings (a set with resources): checked, and added to `s`
// unless it is null.
absl::Status RowHeld(const loader::LoadedSet& set, const v1::AgentBlock& block,
                     int r, v1::AgentSnapshot* s) {
  if (block.held_offsets_size() == 0) return absl::OkStatus();
  uint32_t first, end;
  UTILITYD_RETURN_IF_ERROR(RowRange(
      "held_offsets", "holdings", block.held_offsets(), r,
      static_cast<uint32_t>(block.held_resources_size()), &first, &end));
  const auto& resources = set.compiled.resources();
  for (uint32_t h = first; h < end; ++h) {
    const uint32_t i = block.held_resources(h);
    if (i >= resources.size()) {
      return Refuse(
          absl::StatusCode::kInvalidArgument, engine::ErrorReason::kOutOfRange,
          absl::StrCat("held_resources[", h, "]"),
          absl::StrCat("resource ", i, " is out of range: ", set.name(),
                       " declares ", resources.size()));
    }
    const engine::CompiledResource& resource = resources[i];
    if (resource.per_target && block.held_target_ids_size() == 0) {
      return Refuse(absl::StatusCode::kInvalidArgument,
                    engine::ErrorReason::kOutOfRange, "held_target_ids",
                    absl::StrCat("is empty, but ", resource.name,
                                 " is per target: send each holding's "
                                 "target id"));
    }
    if (s == nullptr) continue;
    v1::HeldResource* x = s->add_held();
    x->set_resource(resource.name);
    if (resource.per_target) {
      x->set_target_id(absl::StrCat(block.held_target_ids(h)));
    }
    if (block.held_amounts_size() > 0) {
      x->set_amount(static_cast<int32_t>(
          std::min<uint32_t>(block.held_amounts(h), INT32_MAX)));
    }
  }
  return absl::OkStatus();
}

// Row r's input `in` with its factors: as it is for a row-major block; a
// factor-major row's gathered from their columns (into work.row_factors).
engine::AgentInput WithFactors(const loader::LoadedSet& set,
                               const v1::AgentBlock& block, int r,
                               engine::AgentInput in, BlockWork& work) {
  if (!in.factors.empty() || set.compiled.factor_count() == 0) return in;
  const int rows = block.agent_ids_size();
  work.row_factors.resize(set.compiled.factor_count());
  for (size_t f = 0; f < work.row_factors.size(); ++f) {
    work.row_factors[f] = block.factors(static_cast<int>(f) * rows + r);
  }
  in.factors = work.row_factors;
  return in;
}

}  // namespace utilityd::codec::internal
