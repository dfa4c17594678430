// The block form (DecideRequest.blocks): agents of one set as columns,
// decided in one engine pass per block into DecideResponse.blocks. Internal
// to the codec; DecideBatch calls its three steps in order: DecideBlocks
// after the snapshots, WriteHeldRow while coordinating, FinishBlocks last,
// all with the batch's block working memory.
#ifndef UTILITYD_CODEC_SRC_BLOCKS_H_
#define UTILITYD_CODEC_SRC_BLOCKS_H_

#include "block_columns.h"
#include "coordination.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/variants.h"

namespace utilityd::codec::internal {

// Checks every block of `request` once into a view in `work` (read by the
// later steps) and decides it into `response->blocks()`. Observer
// indexes (and coordination's request positions) continue after the
// snapshots: block b's row r is agent agents_size() + (rows of blocks
// before b) + r. The rows of sets with resources are held in
// `coordinator`, with a snapshot each, and written by WriteHeldRow once
// the batch is allocated.
// With `variants`, a block whose set the canary holds with SameColumns
// has its rows in the canary's share decided by the canary's set.
void DecideBlocks(const loader::Catalog& catalog,
                  const v1::DecideRequest& request, const Variants& variants,
                  BlockWork& work, v1::DecideResponse* response,
                  BatchObserver* observer, Coordinator* coordinator);

// Writes held agent k, a block row, after allocation: its numbers, its
// grants and DENIED flag (and CANARY, when `canary`); and shows it to the
// observer.
void WriteHeldRow(const v1::DecideRequest& request,
                  const Coordinator& coordinator, size_t k, BlockWork& work,
                  v1::DecideResponse* response, BatchObserver* observer,
                  bool canary);

// Completes the blocks once their rows are written: for sets with
// resources their grant offsets, their explained rows, `full` in row
// order; for every block that asked (AgentBlock.fixed_width_indices), its
// indices moved to the fixed-width columns.
void FinishBlocks(const v1::DecideRequest& request,
                  const Coordinator& coordinator, BlockWork& work,
                  v1::DecideResponse* response);

}  // namespace utilityd::codec::internal

#endif  // UTILITYD_CODEC_SRC_BLOCKS_H_
