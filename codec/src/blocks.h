// The block form (DecideRequest.blocks): agents of one set as columns,
// decided in one engine pass per block into DecideResponse.blocks. Internal
// to the codec; DecideBatch calls it after the snapshots.
#ifndef UTILITYD_CODEC_SRC_BLOCKS_H_
#define UTILITYD_CODEC_SRC_BLOCKS_H_

#include "utilityd/codec/decide_codec.h"

namespace utilityd::codec::internal {

// Decides every block of `request` into `response->blocks()`. Observer
// indexes continue after the snapshots: block b's row r is agent
// agents_size() + (rows of blocks before b) + r.
void DecideBlocks(const loader::Catalog& catalog,
                  const v1::DecideRequest& request,
                  v1::DecideResponse* response, BatchObserver* observer);

}  // namespace utilityd::codec::internal

#endif  // UTILITYD_CODEC_SRC_BLOCKS_H_
