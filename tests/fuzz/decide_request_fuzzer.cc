// Fuzzes the request path: arbitrary bytes as a DecideRequest (binary
// protobuf when the first byte is even, protobuf JSON/YAML text otherwise)
// through resolution, scoring and the response, against the bundled sets.
#include <cstddef>
#include <cstdint>

#include "google/protobuf/stubs/logging.h"
#include "utilityd/codec/decide_codec.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"

namespace {

const utilityd::loader::Catalog& Sets() {
  static const auto* catalog = [] {
    auto c = utilityd::loader::LoadCatalog({UTILITYD_EXAMPLES_DIR});
    if (!c.ok()) std::abort();
    return new utilityd::loader::Catalog(*std::move(c));
  }();
  return *catalog;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 makes protobuf log an error per parse; fuzz inputs are
  // full of it.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  utilityd::v1::DecideRequest request;
  const char* body = reinterpret_cast<const char*>(data + 1);
  if (data[0] % 2 == 0) {
    if (!request.ParseFromArray(body, static_cast<int>(size - 1))) return 0;
  } else if (!utilityd::loader::ReadMessageOrError(
                  absl::string_view(body, size - 1), "fuzz", &request)
                  .ok()) {
    return 0;
  }
  if (request.agents_size() > 256) return 0;  // the service's limit applies
  utilityd::v1::DecideResponse response;
  utilityd::codec::DecideBatch(Sets(), request, &response);
  if (response.decisions_size() != request.agents_size()) std::abort();
  return 0;
}
