// Canary rollouts (docs/CANARY.md): a second catalog whose sets decide a
// sticky share of agents.
#ifndef UTILITYD_CODEC_VARIANTS_H_
#define UTILITYD_CODEC_VARIANTS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

// Agent `id` is in the share when its hash (FNV-1a 64 of the id's bytes,
// then SplitMix64's finaliser), read as a fraction of 2^64, is below
// `share`: the same on every replica, for every set and at every reload,
// and an agent in the share stays in it as the share grows. A block row's
// id counts as its decimal text (the id the decision log shows).
[[nodiscard]] bool InCanaryShare(absl::string_view agent_id, double share);
[[nodiscard]] bool InCanaryShare(uint64_t agent_id, double share);

// Whether the canary's `canary` may decide agents packed for `live`: the
// same factors, target factors, actions, personalities, resources and tree
// shape, in the same order, so every positional factor, action index and
// block column means the same to both (the client packs by the live set's
// schema and revision).
[[nodiscard]] bool SameColumns(const loader::LoadedSet& live,
                               const loader::LoadedSet& canary);

// "live" or "canary": the metric label and the log's word for a variant.
[[nodiscard]] const char* VariantName(v1::Variant variant);

struct Variants {
  // Null: every agent is decided by the live catalog.
  const loader::Catalog* canary = nullptr;
  double share = 0;  // 0..1

  // The canary's set of `live`'s name, or null when it has none, when its
  // columns differ (SameColumns: its agents stay live) or when no canary
  // is served.
  const loader::LoadedSet* CanaryOf(const loader::LoadedSet& live) const {
    if (canary == nullptr || share <= 0) return nullptr;
    const loader::LoadedSet* set = canary->Find(live.name()).get();
    return set != nullptr && SameColumns(live, *set) ? set : nullptr;
  }
};

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_VARIANTS_H_
