// Canary rollouts: which agents a canary decides, and which of its sets
// may decide block rows packed for the live set.
#include "utilityd/codec/variants.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "utilityd/engine/random.h"
#include "utilityd/engine/tree.h"

namespace utilityd::codec {
namespace {

// Names of `items` (anything with a `name`) equal, in order.
template <typename T>
bool SameNames(const std::vector<T>& a, const std::vector<T>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const T& x, const T& y) { return x.name == y.name; });
}

}  // namespace

bool InCanaryShare(absl::string_view agent_id, double share) {
  if (share >= 1) return true;
  if (!(share > 0)) return false;
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
  for (const char c : agent_id) {
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  }
  h = engine::SplitMix64::Mix(h);
  return static_cast<double>(h >> 11) * 0x1.0p-53 < share;
}

bool InCanaryShare(uint64_t agent_id, double share) {
  char text[absl::numbers_internal::kFastToBufferSize];
  const char* end = absl::numbers_internal::FastIntToBuffer(agent_id, text);
  return InCanaryShare(absl::string_view(text, end - text), share);
}

const char* VariantName(v1::Variant variant) {
  return variant == v1::VARIANT_CANARY ? "canary" : "live";
}

bool SameColumns(const loader::LoadedSet& live,
                 const loader::LoadedSet& canary) {
  const engine::CompiledBehaviourSet& a = live.compiled;
  const engine::CompiledBehaviourSet& b = canary.compiled;
  if (!SameNames(a.factors(), b.factors()) ||
      !SameNames(a.target_factors(), b.target_factors()) ||
      !SameNames(a.actions(), b.actions()) ||
      !SameNames(a.resources(), b.resources()) ||
      a.personality_count() != b.personality_count()) {
    return false;
  }
  for (int p = 0; p < a.personality_count(); ++p) {
    if (a.personality_name(p) != b.personality_name(p)) return false;
  }
  if ((a.tree() == nullptr) != (b.tree() == nullptr)) return false;
  return a.tree() == nullptr ||
         (a.tree()->shape_tag == b.tree()->shape_tag &&
          a.tree()->nodes.size() == b.tree()->nodes.size());
}

}  // namespace utilityd::codec
