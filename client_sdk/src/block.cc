#include "utilityd/client/block.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace utilityd::client {
namespace {

template <typename Field, typename T>
void Put(absl::Span<const T> in, Field* out) {
  out->Reserve(static_cast<int>(in.size()));
  out->Add(in.begin(), in.end());
}

absl::Status StatusOf(const v1::Error& e) {
  return absl::Status(static_cast<absl::StatusCode>(e.code()), e.message());
}

// An output column is empty (not wanted) or sized for the rows.
template <typename T>
absl::Status CheckColumn(absl::Span<T> column, const char* name, int rows) {
  if (column.empty() || column.size() == static_cast<size_t>(rows)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("BlockAnswers.", name, ": sized for ", column.size(),
                   " rows, the block has ", rows));
}

template <typename T, typename Field>
void Copy(const Field& from, absl::Span<T> to) {
  if (!to.empty()) std::copy(from.begin(), from.end(), to.begin());
}

}  // namespace

void WriteBlock(const BlockColumns& in, v1::AgentBlock* out) {
  out->Clear();
  out->set_behaviour_set(in.behaviour_set.data(), in.behaviour_set.size());
  if (!in.expected_revision.empty()) {
    out->set_expected_revision(in.expected_revision.data(),
                               in.expected_revision.size());
  }
  out->set_layout(in.layout);
  Put(in.agent_ids, out->mutable_agent_ids());
  Put(in.factors, out->mutable_factors());
  Put(in.current_action, out->mutable_current_action());
  Put(in.seconds_since_action, out->mutable_seconds_since_action());
  Put(in.seeds, out->mutable_seeds());
  Put(in.personality, out->mutable_personality());
  Put(in.target_offsets, out->mutable_target_offsets());
  Put(in.target_factors, out->mutable_target_factors());
  Put(in.target_ids, out->mutable_target_ids());
  Put(in.current_target, out->mutable_current_target());
  Put(in.explain_rows, out->mutable_explain_rows());
  out->set_game_time(in.game_time);
  Put(in.tree_state_offsets, out->mutable_tree_state_offsets());
  out->set_tree_states(in.tree_states.data(), in.tree_states.size());
  Put(in.outcome_offsets, out->mutable_outcome_offsets());
  Put(in.outcome_leaves, out->mutable_outcome_leaves());
  out->mutable_outcome_statuses()->Reserve(
      static_cast<int>(in.outcome_statuses.size()));
  for (v1::NodeStatus s : in.outcome_statuses) out->add_outcome_statuses(s);
  Put(in.held_offsets, out->mutable_held_offsets());
  Put(in.held_resources, out->mutable_held_resources());
  Put(in.held_target_ids, out->mutable_held_target_ids());
  Put(in.held_amounts, out->mutable_held_amounts());
  out->set_fixed_width_indices(in.fixed_width_indices);
}

void CarryTreeState(const v1::DecisionBlock& answer, v1::AgentBlock* next) {
  *next->mutable_tree_state_offsets() = answer.tree_state_offsets();
  *next->mutable_tree_states() = answer.tree_states();
}

void CarryHeld(const v1::DecisionBlock& answer, v1::AgentBlock* next) {
  *next->mutable_held_offsets() = answer.grant_offsets();
  *next->mutable_held_resources() = answer.grant_resources();
  *next->mutable_held_target_ids() = answer.grant_target_ids();
  *next->mutable_held_amounts() = answer.grant_amounts();
}

absl::Status ReadBlock(const v1::DecisionBlock& answer, int rows,
                       const BlockAnswers& out, std::vector<RowError>* errors) {
  if (errors != nullptr) errors->clear();
  if (answer.has_error()) return StatusOf(answer.error());
  // The fixed-width index columns when the server answered in them (the
  // block asked), else the varint ones.
  const bool fixed = answer.action_index_fixed_size() > 0 ||
                     answer.target_index_fixed_size() > 0;
  const auto& actions =
      fixed ? answer.action_index_fixed() : answer.action_index();
  const auto& targets =
      fixed ? answer.target_index_fixed() : answer.target_index();
  if (actions.size() != rows || targets.size() != rows ||
      answer.score_size() != rows ||
      answer.flags().size() != static_cast<size_t>(rows)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DecisionBlock: expected ", rows, " rows in every column, got ",
        actions.size(), " actions, ", targets.size(), " targets, ",
        answer.score_size(), " scores, ", answer.flags().size(), " flags"));
  }
  for (absl::Status s : {CheckColumn(out.action_index, "action_index", rows),
                         CheckColumn(out.target_index, "target_index", rows),
                         CheckColumn(out.score, "score", rows),
                         CheckColumn(out.flags, "flags", rows)}) {
    if (!s.ok()) return s;
  }
  Copy(actions, out.action_index);
  Copy(targets, out.target_index);
  Copy(answer.score(), out.score);
  Copy(answer.flags(), out.flags);
  if (errors != nullptr) {
    for (const v1::IndexedDecision& x : answer.full()) {
      // An explained row (AgentBlock.explain_rows) is there too, without
      // an error.
      if (x.decision().has_error()) {
        errors->push_back({x.agent(), StatusOf(x.decision().error())});
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace utilityd::client
