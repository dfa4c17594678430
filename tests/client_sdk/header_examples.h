// What the SDK headers' examples are given (header_examples.cmake): the
// game's own functions they call, as stubs, and the names they use.
#ifndef UTILITYD_TESTS_CLIENT_SDK_HEADER_EXAMPLES_H_
#define UTILITYD_TESTS_CLIENT_SDK_HEADER_EXAMPLES_H_

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "utilityd/client/block.h"
#include "utilityd/client/client.h"
#include "utilityd/client/compact.h"
#include "utilityd/client/tree_tracker.h"

namespace utilityd::client::examples {

namespace v1 = ::utilityd::v1;

inline void Log(uint64_t, const absl::Status&) {}
inline void Inspect(int, const v1::Decision&) {}
inline void Run(int, int32_t, int32_t) {}
inline void StartLeaf(const std::string&, const v1::TreeLeaf&) {}
inline void StopLeaf(const std::string&, const v1::TreeLeaf&) {}

// How many examples there are (the generated file defines it).
int Count();

}  // namespace utilityd::client::examples

#endif  // UTILITYD_TESTS_CLIENT_SDK_HEADER_EXAMPLES_H_
