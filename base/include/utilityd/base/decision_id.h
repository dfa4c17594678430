// How the service numbers decisions, shared by the server that assigns the
// ids and the SDK that derives them from a compact response.
//
// A batch reserves a run of numbers starting at `first`; its agent `i` gets
// the id SplitMix64's finaliser of (first + i), mod 2^64, written as 16
// lowercase hex digits. A compact response carries `first` as
// decision_id_base (see decision_service.proto), so
//
//   std::array<char, 16> hex = DecisionIdHex(DecisionId(base, i));
//
// is the decision_id the full form and the decision log carry.
#ifndef UTILITYD_BASE_DECISION_ID_H_
#define UTILITYD_BASE_DECISION_ID_H_

#include <array>
#include <cstdint>

namespace utilityd {

// Agent `index`'s decision id in a batch numbered from `first`. The
// finaliser is the one engine::SplitMix64::Mix computes (a test holds them
// equal); the engine does not depend on this header, nor this one on it.
constexpr uint64_t DecisionId(uint64_t first, int index) {
  uint64_t z = first + static_cast<uint64_t>(index);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The 16 lowercase hex digits of `id`, most significant first, without a
// heap allocation (the server writes one per decision).
constexpr std::array<char, 16> DecisionIdHex(uint64_t id) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::array<char, 16> out{};
  for (int i = 15; i >= 0; --i, id >>= 4) out[i] = kDigits[id & 15];
  return out;
}

}  // namespace utilityd

#endif  // UTILITYD_BASE_DECISION_ID_H_
