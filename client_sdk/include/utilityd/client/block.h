// The block form from an ECS (docs/SERVICE.md, "Blocks"): a chunk of agents
// of one behaviour set handed over as the caller's own arrays, its
// decisions written back into the caller's own arrays. No message per agent
// on either side.
//
// Index spaces. Every index in a block is a position in the set's
// schema (client->Schema(set), SetSchema::summary(), which is
// v1::BehaviourSetSummary): factors in summary().factors() order, target
// factors in summary().target_factors(), actions (current_action,
// seconds_since_action's columns, the answer's action_index) in
// summary().actions(), personalities in summary().personalities(),
// resources in summary().resources(). SetSchema::FactorIndex,
// ActionIndex and PersonalityIndex look names up. Indexes are stable for a
// set revision; send expected_revision to have a block refused
// (FAILED_PRECONDITION) rather than misread when the set changes.
//
// Example (compiled by tests/client_sdk/header_examples.cmake):
//   // Once: the set's layout. A chunk holds `rows` agents of the set.
//   auto schema = client.Schema("arena_mage");
//   if (!schema.ok()) return;
//   const int factors = (*schema)->summary().factors_size();
//   const int rows = 2;
//   std::vector<uint64_t> entities = {1001, 1002};
//   std::vector<float> components(rows * factors, 0.5f);  // f * rows + r
//   std::vector<int32_t> running = {-1, (*schema)->ActionIndex("attack")};
//
//   // Each tick: the chunk's arrays as a block of a reused batch.
//   BlockColumns in{};
//   in.behaviour_set = "arena_mage";
//   in.expected_revision = (*schema)->revision();
//   in.agent_ids = entities;
//   in.factors = components;
//   in.layout = v1::FACTOR_LAYOUT_COLUMNS;
//   in.current_action = running;
//   v1::DecideRequest batch;  // keep it: cleared, it keeps its capacity
//   WriteBlock(in, batch.add_blocks());
//   absl::StatusOr<v1::DecideResponse> r = client.Decide(batch);
//   if (!r.ok()) return;
//
//   // The decisions, into the chunk's own arrays.
//   std::vector<int32_t> next_action(rows);
//   std::vector<float> score(rows);
//   BlockAnswers out{.action_index = absl::MakeSpan(next_action),
//                    .score = absl::MakeSpan(score)};
//   std::vector<RowError> errors;
//   absl::Status s = ReadBlock(r->blocks(0), rows, out, &errors);
//   for (const RowError& e : errors) Log(entities[e.row], e.status);
//
// Over a DecisionStream the batch is submitted like any other, with the
// stream's deadlines and exactly-once results; DecisionStream::Borrow lends
// a batch the stream reuses, so a warm stream allocates nothing on the
// game's thread.
#ifndef UTILITYD_CLIENT_BLOCK_H_
#define UTILITYD_CLIENT_BLOCK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::client {

// One block's input, as views of the caller's arrays; `rows` is
// agent_ids.size(). An optional column left empty takes the default its
// comment gives. Every member has a default, so designated initializers
// (or `BlockColumns in{};` and assignments) name only what the block has,
// warning-free under -Wextra.
struct BlockColumns {
  // The set deciding every row. Required.
  absl::string_view behaviour_set = {};
  // The set revision the indexes were taken from (SetSchema::revision());
  // the block is refused with FAILED_PRECONDITION when the service has
  // another. Empty: not checked.
  absl::string_view expected_revision = {};
  // The game's entity id of each row (the decision log and the live feed
  // show it in decimal). Required.
  absl::Span<const uint64_t> agent_ids = {};
  // rows × factors values, the set's factors in summary().factors() order,
  // laid out as `layout` says: FACTOR_LAYOUT_ROWS, row r's factor f at
  // r * factors + f (an array of structs); FACTOR_LAYOUT_COLUMNS, at
  // f * rows + r (an ECS chunk's component arrays, read in place). NaN or
  // an infinity vetoes the actions whose considerations read it.
  absl::Span<const float> factors = {};
  v1::FactorLayout layout = v1::FACTOR_LAYOUT_ROWS;
  // Each row's running action (index in summary().actions()), -1 for none.
  // Empty: no row runs one.
  absl::Span<const int32_t> current_action = {};
  // Seconds since each action last ended (stopped running), rows × actions,
  // row-major: row r's action a at r * actions + a. NaN or +infinity: not
  // recently, no cooldown applies. Empty: none ended recently.
  absl::Span<const float> seconds_since_action = {};
  // Each row's seed for random selection (same seed, same decision on every
  // replica). Empty: 0 for every row.
  absl::Span<const uint64_t> seeds = {};
  // Each row's personality (index in summary().personalities()), -1 for
  // none. Empty: none.
  absl::Span<const int32_t> personality = {};
  // Targets, for per-target actions. Row r's targets are numbers
  // target_offsets[r] up to (not including) target_offsets[r + 1] of the
  // block's targets: rows + 1 offsets, never decreasing, the first 0, the
  // last the number of targets T. target_factors holds T × target factors
  // values, target after target (summary().target_factors() order within
  // each). target_ids: each target's entity id (T of them); empty names
  // targets by their number within their row. current_target: row r's
  // current target as its number among the row's own targets, -1 not
  // given (any target of the current action counts as current), -2 gone
  // (no longer among them); empty: -1 for every row. The answer's
  // target_index is a number within the row's targets too.
  absl::Span<const uint32_t> target_offsets = {};
  absl::Span<const float> target_factors = {};
  absl::Span<const uint64_t> target_ids = {};
  absl::Span<const int32_t> current_target = {};
  // Rows to explain at the request's explain level (their Decision comes
  // back in the answer's `full`, as well as in the columns).
  absl::Span<const uint32_t> explain_rows = {};
  // Behaviour trees: the tick's game time for every row, each row's state
  // (rows + 1 offsets into tree_states; CarryTreeState copies the last
  // answer's) and how the leaves it ran went (rows + 1 offsets into
  // outcome_leaves and outcome_statuses).
  double game_time = 0;
  absl::Span<const uint32_t> tree_state_offsets = {};
  absl::string_view tree_states = {};
  absl::Span<const uint32_t> outcome_offsets = {};
  absl::Span<const int32_t> outcome_leaves = {};
  absl::Span<const v1::NodeStatus> outcome_statuses = {};
  // Coordination (sets with resources): what each row holds, rows + 1
  // offsets into held_resources (index in summary().resources()),
  // held_target_ids (per-target resources) and held_amounts (empty: 1
  // each). CarryHeld copies the last answer's grants here instead.
  absl::Span<const uint32_t> held_offsets = {};
  absl::Span<const uint32_t> held_resources = {};
  absl::Span<const uint64_t> held_target_ids = {};
  absl::Span<const uint32_t> held_amounts = {};
  // Ask for the answer's indices in fixed-width columns
  // (AgentBlock.fixed_width_indices, docs/SERVICE.md "Blocks"): fewer
  // instructions on the server for 6 more bytes a row. ReadBlock reads
  // either form.
  bool fixed_width_indices = false;
};

// Writes `in` into `out` (cleared first, so a reused message keeps its
// capacity): one bulk copy per column, into the message gRPC serialises.
void WriteBlock(const BlockColumns& in, v1::AgentBlock* out);

// A tree block's next tick: the state columns of `answer` into `next`,
// unchanged (the answer's layout is the request's).
void CarryTreeState(const v1::DecisionBlock& answer, v1::AgentBlock* next);

// A coordinated block's next tick: what the answer granted each row (its
// grant columns) becomes what the row holds (`next`'s held columns).
void CarryHeld(const v1::DecisionBlock& answer, v1::AgentBlock* next);

// Where one block's decisions go, each sized for the block's rows; a
// column left empty is not written. Name the columns wanted with
// designated initializers; the rest stay empty.
struct BlockAnswers {
  // The chosen action, an index in summary().actions(); -1 when the row
  // was not decided (see ReadBlock's errors).
  absl::Span<int32_t> action_index = {};
  // The chosen target, its number within the row's targets; -1 for an
  // action without targets or an undecided row.
  absl::Span<int32_t> target_index = {};
  // The chosen action's score (0..1, after weights and compensation).
  absl::Span<float> score = {};
  // Sums of v1::CompactFlag: SWITCHED (not the current action), FALLBACK
  // (no candidate was eligible: the set's fallback), FULL (the row's complete
  // Decision is in the answer's `full`: an error or an explained row), DENIED
  // (a pool was full: the allocated choice), CANARY (the canary sets decided
  // it).
  absl::Span<uint8_t> flags = {};
};

// A row that was not decided, and why.
struct RowError {
  int row = 0;
  absl::Status status;
};

// Copies the decisions of `answer`, a block of `rows` rows, into `out`
// (its indices from the fixed-width columns or the varint ones, whichever
// the server answered in); rows that failed keep -1, -1, 0 with the FULL
// flag and are listed in `errors` when given (rows explained on request have the FULL flag too,
// their numbers, and their explanation in answer.full()). Returns the block's
// error when the service refused it, and INVALID_ARGUMENT when the answer does
// not have `rows` rows or an output column is not sized for them.
absl::Status ReadBlock(const v1::DecisionBlock& answer, int rows,
                       const BlockAnswers& out,
                       std::vector<RowError>* errors = nullptr);

}  // namespace utilityd::client

#endif  // UTILITYD_CLIENT_BLOCK_H_
