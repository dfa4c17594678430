// A block's columns read and checked against its set once, into a view
// (DecideRequest.blocks, docs/BLOCKS.md): lengths, offsets, targets, tree
// and holding columns; a row as engine input, as a snapshot, its holdings;
// and the working memory the block steps share. Internal to the codec.
#ifndef UTILITYD_CODEC_SRC_BLOCK_COLUMNS_H_
#define UTILITYD_CODEC_SRC_BLOCK_COLUMNS_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec::internal {

// One block's columns, read and checked against its set once; every later
// step (deciding, holding for coordination, the canary's rows, explaining)
// reads this view. It owns what row inputs point into besides the message:
// one TargetInput per target, and the clocks when some say "never" with
// NaN. It lives until the batch is answered.
struct BlockView {
  const loader::LoadedSet* set = nullptr;  // null: the block was refused
  int b = 0;                               // its place in the request
  int first_index = 0;                     // its row 0's observer index
  int rows = 0;
  int factors = 0;  // per row
  int actions = 0;  // per row, in seconds_since_action
  // Factor-major factors stay in their columns (the engine reads them);
  // row-major rows' are spans of `values`.
  bool factor_major = false;
  const float* values = nullptr;   // row-major factors (null when empty)
  const float* seconds = nullptr;  // row-major clocks, or null
  uint32_t targets = 0;            // the block's (last target offset)
  std::vector<engine::TargetInput> target_inputs;  // spans into the message
  std::vector<float> clocks;  // the clocks with NaN made "never", when any is
  // Canary rollouts: the canary's set, when some row is in its share, and
  // 1 for each row that is.
  const loader::LoadedSet* canary = nullptr;
  std::vector<char> canary_rows;
  bool held = false;  // a set with resources: rows held for coordination
};

// The working memory of the block steps, owned by the batch's and reused
// from batch to batch.
struct BlockWork {
  // The request's blocks, checked: the first `views_used`.
  std::deque<BlockView> views;
  size_t views_used = 0;
  std::vector<engine::AgentInput> inputs;  // the rows the engine decides
  std::vector<int> rows;                   // their row numbers
  std::vector<engine::BatchDecision> out;
  std::vector<absl::Status> errors;
  std::vector<uint8_t> wanted;     // by row: the observer wants its message
  std::vector<float> row_factors;  // a sampled factor-major row's
  std::vector<uint32_t> explain;   // the rows to explain, once each
  engine::Decision decision;       // an explained row's
  engine::TreeTick tick;           // a tree row's
  std::vector<engine::LeafOutcome> outcomes;  // a tree row's
  engine::BatchDecider decider;
  // For an observer that asks for a row's message (a sampled decision).
  v1::AgentSnapshot snapshot;
  v1::Decision message;
  // Coordination: the held rows' snapshots (reused from batch to batch:
  // the first `held_used`), kept until the batch is allocated and written.
  std::deque<v1::AgentSnapshot> held_snapshots;
  size_t held_used = 0;

  // A fresh view for the next block of the request.
  BlockView& NextView() {
    if (views_used == views.size()) views.emplace_back();
    return views[views_used++];
  }
};

absl::Status Refuse(absl::StatusCode code, engine::ErrorReason reason,
                    absl::string_view field, absl::string_view detail);

// The reason of a column whose length does not fit the block: FACTOR_COUNT
// for the packed factor values (`factors`, `target_factors`), OUT_OF_RANGE
// for every other column (docs/SERVICE.md, "Blocks").
engine::ErrorReason LengthReason(absl::string_view field);

// A column of one value per row (`per_row` of them) that is longer than
// its rows.
absl::Status CheckLength(absl::string_view field, int size, int rows,
                         int per_row);

// The set of `block`, or the error that refuses the whole block.
absl::Status FindSet(const loader::Catalog& catalog,
                     const v1::AgentBlock& block,
                     const loader::LoadedSet** out);

// Checks the target columns as a whole (each row's offsets are checked
// with its row) and points one TargetInput per target into the message.
absl::Status ReadTargets(const loader::LoadedSet& set,
                         const v1::AgentBlock& block, BlockView* c);

// An offsets column of a tree block: empty, or rows + 1 entries whose last
// is `size`, the length of what it indexes (rows' own ranges are checked
// with their rows).
absl::Status CheckOffsets(absl::string_view field, int offsets, int rows,
                          uint32_t last, size_t size,
                          absl::string_view indexed);

// The tree columns' sizes, as a whole.
absl::Status CheckTreeColumns(const v1::AgentBlock& block, int rows);

// Row r's range [*first, *end) of an offsets column (of `what`, e.g.
// "targets"), or its error.
absl::Status RowRange(absl::string_view field, absl::string_view what,
                      const google::protobuf::RepeatedField<uint32_t>& offsets,
                      int r, uint32_t limit, uint32_t* first, uint32_t* end);

// The held columns' sizes, as a whole, for a set with resources; and the
// target ids its per-target pools are named by.
absl::Status CheckHeldColumns(const loader::LoadedSet& set,
                              const v1::AgentBlock& block, const BlockView& c);

// Reads and checks the columns of `block`, a block of `set`, into `c`
// (its sizes, targets and clocks; the caller sets its place and canary).
absl::Status ReadColumns(const loader::LoadedSet& set,
                         const v1::AgentBlock& block,
                         engine::ExplainLevel level, BlockView* c);

// Whether a block's rows can reach the engine as its columns
// (BatchDecider::DecideColumns), answered as row by row: every per-row
// column (the factors included) empty or whole, each row's targets in order and within the limit,
// each current target among its row's. Else some row has an error of its
// own, which RowInput names.
bool ColumnsFit(const v1::AgentBlock& block, const BlockView& c);

// The block's columns as the engine reads them (ColumnsFit held).
engine::AgentColumns AgentColumnsOf(const v1::AgentBlock& block,
                                    const BlockView& c);

// Row r's engine input, or the error naming the column it lacks.
absl::Status RowInput(const v1::AgentBlock& block, const BlockView& c, int r,
                      engine::AgentInput* in);

// Row r as the snapshot that decides the same (for the decision log, the
// live feed and shadow evaluation, which keep snapshots).
void RowSnapshot(const loader::LoadedSet& set, const v1::AgentBlock& block,
                 int r, const engine::AgentInput& in, v1::AgentSnapshot* s);

// Row r's holdings (a set with resources): checked, and added to `s`
// unless it is null.
absl::Status RowHeld(const loader::LoadedSet& set, const v1::AgentBlock& block,
                     int r, v1::AgentSnapshot* s);

// Row r's input `in` with its factors: as it is for a row-major block; a
// factor-major row's gathered from their columns (into work.row_factors).
engine::AgentInput WithFactors(const loader::LoadedSet& set,
                               const v1::AgentBlock& block, int r,
                               engine::AgentInput in, BlockWork& work);

}  // namespace utilityd::codec::internal

#endif  // UTILITYD_CODEC_SRC_BLOCK_COLUMNS_H_
