// The block form from an ECS (docs/SERVICE.md, "Blocks"): a chunk of agents
// handed over as the caller's own arrays, its decisions written back into
// the caller's own arrays. No message per agent on either side.
//
//   // per chunk: components as arrays the game already keeps
//   BlockColumns in{.behaviour_set = "arena_mage",
//                   .agent_ids = chunk.entities,        // uint64_t
//                   .factors = chunk.factors,           // rows x factors
//                   .layout = v1::FACTOR_LAYOUT_COLUMNS,
//                   .current_action = chunk.running};   // int32_t
//   v1::DecideRequest batch;                            // reuse per system
//   WriteBlock(in, batch.add_blocks());
//   absl::StatusOr<v1::DecideResponse> r = client->Decide(batch);
//   BlockAnswers out{.action_index = chunk.next_action,
//                    .score = chunk.score};
//   absl::Status s = ReadBlock(r->blocks(0), in.agent_ids.size(), out);
//
// Over a DecisionStream the batch is submitted like any other, with the
// stream's reconnect and exactly-once guarantees.
#ifndef UTILITYD_CLIENT_BLOCK_H_
#define UTILITYD_CLIENT_BLOCK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::client {

// One block's input, as views of the caller's arrays (empty optional
// columns take their defaults; see v1::AgentBlock).
struct BlockColumns {
  absl::string_view behaviour_set;
  // Sent as AgentBlock.expected_revision when not empty.
  absl::string_view expected_revision;
  absl::Span<const uint64_t> agent_ids;
  absl::Span<const float> factors;
  v1::FactorLayout layout = v1::FACTOR_LAYOUT_ROWS;
  absl::Span<const int32_t> current_action;
  absl::Span<const float> seconds_since_action;
  absl::Span<const uint64_t> seeds;
  absl::Span<const int32_t> personality;
  // Targets, for per-target actions: row r's are numbers target_offsets[r]
  // up to target_offsets[r + 1] (rows + 1 offsets), each with its target
  // factors in target_factors; target_ids optional; current_target an
  // index within the row's targets (-1 not given, -2 gone).
  absl::Span<const uint32_t> target_offsets;
  absl::Span<const float> target_factors;
  absl::Span<const uint64_t> target_ids;
  absl::Span<const int32_t> current_target;
  // Rows to explain at the request's explain level (their Decision comes
  // back in the answer's `full`).
  absl::Span<const uint32_t> explain_rows;
  // Behaviour trees: the tick's game time for every row, each row's state
  // (rows + 1 offsets into tree_states; CarryTreeState copies the last
  // answer's) and how the leaves it ran went (rows + 1 offsets into
  // outcome_leaves and outcome_statuses).
  double game_time = 0;
  absl::Span<const uint32_t> tree_state_offsets;
  absl::string_view tree_states;
  absl::Span<const uint32_t> outcome_offsets;
  absl::Span<const int32_t> outcome_leaves;
  absl::Span<const v1::NodeStatus> outcome_statuses;
  // Coordination (sets with resources): what each row holds, rows + 1
  // offsets into held_resources (index in the set's resources),
  // held_target_ids (per-target resources) and held_amounts (empty: 1
  // each). CarryHeld copies the last answer's grants here instead.
  absl::Span<const uint32_t> held_offsets;
  absl::Span<const uint32_t> held_resources;
  absl::Span<const uint64_t> held_target_ids;
  absl::Span<const uint32_t> held_amounts;
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
// column left empty is not written.
struct BlockAnswers {
  absl::Span<int32_t> action_index;
  absl::Span<int32_t> target_index;
  absl::Span<float> score;
  absl::Span<uint8_t> flags;  // sums of v1::CompactFlag
};

// A row that was not decided, and why.
struct RowError {
  int row = 0;
  absl::Status status;
};

// Copies the decisions of `answer`, a block of `rows` rows, into `out`;
// rows that failed keep -1, -1, 0 with the FULL flag and are listed in
// `errors` when given (rows explained on request have the FULL flag too,
// their numbers, and their explanation in answer.full()). Returns the block's
// error when the service refused it, and INVALID_ARGUMENT when the answer does
// not have `rows` rows or an output column is not sized for them.
absl::Status ReadBlock(const v1::DecisionBlock& answer, int rows,
                       const BlockAnswers& out,
                       std::vector<RowError>* errors = nullptr);

}  // namespace utilityd::client

#endif  // UTILITYD_CLIENT_BLOCK_H_
