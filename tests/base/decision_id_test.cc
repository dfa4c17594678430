// utilityd/base/decision_id.h: the service's decision ids.
#include "utilityd/base/decision_id.h"

#include <array>
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "utilityd/engine/random.h"

namespace utilityd {
namespace {

using engine::SplitMix64;

// The service's decision ids (utilityd/base/decision_id.h, shared with the
// SDK) use the engine's finaliser without linking the engine: the two must
// stay the same function.
TEST(DecisionIdTest, UsesTheEnginesFinaliser) {
  for (uint64_t first : {0ull, 1ull, 0x9E3779B97F4A7C15ull, ~0ull - 2}) {
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(DecisionId(first, i), SplitMix64::Mix(first + i))
          << first << " + " << i;
    }
  }
  // Wraps mod 2^64, and is written most significant digit first.
  EXPECT_EQ(DecisionId(~0ull, 1), SplitMix64::Mix(0));
  const std::array<char, 16> hex = DecisionIdHex(0x0123456789ABCDEFull);
  EXPECT_EQ(std::string(hex.data(), hex.size()), "0123456789abcdef");
  // SplitMix64(0)'s first output, as an id.
  const std::array<char, 16> first =
      DecisionIdHex(DecisionId(0x9E3779B97F4A7C15ull, 0));
  EXPECT_EQ(std::string(first.data(), first.size()), "e220a8397b1dcdaf");
}

}  // namespace
}  // namespace utilityd
