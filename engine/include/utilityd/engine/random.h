// The engine's one source of randomness: SplitMix64 (Steele, Lea and Flood,
// 2014), specified here so every platform and standard library draws the same
// numbers from the same seed. std::uniform_*_distribution is not used because
// its output differs between standard libraries.
//
//   SplitMix64 rng(agent_seed);
//   double u = rng.NextDouble();   // uniform in [0, 1)
#ifndef UTILITYD_ENGINE_RANDOM_H_
#define UTILITYD_ENGINE_RANDOM_H_

#include <cstdint>

namespace utilityd::engine {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  // Returns the next 64 random bits.
  uint64_t Next() { return Mix(state_ += 0x9E3779B97F4A7C15ull); }

  // SplitMix64's finaliser: spreads the bits of `z` (a counter, a hash)
  // so that nearby inputs give unrelated outputs. A bijection.
  static constexpr uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Returns a double uniform in [0, 1): the top 53 bits of Next() / 2^53.
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_RANDOM_H_
