// Trees on the wire, shared by the snapshot path (tree_codec.cc) and the
// block form (blocks.cc): node statuses both ways, and a leaf outcome read
// and checked against the tree. Internal to the codec.
#ifndef UTILITYD_CODEC_SRC_TREE_WIRE_H_
#define UTILITYD_CODEC_SRC_TREE_WIRE_H_

#include <string>

#include "absl/status/status.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec::internal {

[[nodiscard]] v1::NodeStatus ToProto(engine::NodeStatus s);
[[nodiscard]] engine::NodeStatus FromProto(v1::NodeStatus s);

// `leaf` reported with `status`, checked against `set`'s tree: the error
// names the field that is wrong, `leaf_field` or `status_field` (e.g.
// "leaf_outcomes[2].leaf").
[[nodiscard]] absl::Status ReadLeafOutcome(const loader::LoadedSet& set,
                                           int leaf, v1::NodeStatus status,
                                           const std::string& leaf_field,
                                           const std::string& status_field,
                                           engine::LeafOutcome* out);

}  // namespace utilityd::codec::internal

#endif  // UTILITYD_CODEC_SRC_TREE_WIRE_H_
