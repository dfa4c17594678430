// The id of an agent's target by index, shared by the codec's files.
// Internal to the codec.
#ifndef UTILITYD_CODEC_SRC_TARGET_ID_H_
#define UTILITYD_CODEC_SRC_TARGET_ID_H_

#include <string>

#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

// The id of `snapshot`'s target `t`, or "" for -1 or out of range
// (resolve.cc).
const std::string& TargetId(const v1::AgentSnapshot& snapshot, int t);

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_SRC_TARGET_ID_H_
