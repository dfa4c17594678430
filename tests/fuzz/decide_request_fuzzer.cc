// Fuzzes the request path: arbitrary bytes as a DecideRequest (binary
// protobuf when the first byte is even, protobuf JSON/YAML text otherwise)
// through resolution, scoring and the response, against the bundled sets;
// snapshots and blocks (the columnar form) alike.
#include <cstddef>
#include <cstdint>

#include "google/protobuf/stubs/logging.h"
#include "utilityd/codec/batch.h"
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
  // The service's checks come first: its agent limit (snapshots and block
  // rows together) and the form's.
  if (utilityd::codec::RequestRows(request) > 256) return 0;
  if (!utilityd::codec::CheckForm(request).ok()) return 0;
  utilityd::v1::DecideResponse response;
  utilityd::codec::DecideBatch(Sets(), request, &response);
  const int answered = request.form() == utilityd::v1::DECISION_FORM_COMPACT
                           ? response.compact().action_index_size()
                           : response.decisions_size();
  if (answered != request.agents_size()) std::abort();
  // Every block is answered: refused with its error, or one row per id.
  if (response.blocks_size() != request.blocks_size()) std::abort();
  for (int b = 0; b < request.blocks_size(); ++b) {
    const auto& answer = response.blocks(b);
    const int rows =
        answer.has_error() ? 0 : request.blocks(b).agent_ids_size();
    if (answer.action_index_size() != rows || answer.score_size() != rows ||
        static_cast<int>(answer.flags().size()) != rows) {
      std::abort();
    }
  }
  return 0;
}
