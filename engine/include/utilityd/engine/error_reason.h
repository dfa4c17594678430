// Machine-readable reasons and field paths carried by an absl::Status, so
// that callers (and the wire's v1::Error) can tell why and where without
// reading the message text.
//
//   absl::Status s = FieldError(absl::StatusCode::kInvalidArgument,
//                               ErrorReason::kFactorCount, "factors",
//                               "expected 10 values, got 9");
//   // s.message() == "factors: expected 10 values, got 9"
//   s = PrefixField(s, "agents[3].");   // field "agents[3].factors"
//   if (ReasonOf(s) == ErrorReason::kFactorCount) { ... }
#ifndef UTILITYD_ENGINE_ERROR_REASON_H_
#define UTILITYD_ENGINE_ERROR_REASON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace utilityd::engine {

// Numbered and named as utilityd.v1.ErrorReason (kStaleRevision is
// ERROR_REASON_STALE_REVISION = 1) and documented there; a codec test holds
// the two equal, value by value, in both directions. A new reason is an
// enumerator here, its row in kErrorReasonNames and its value in the proto.
enum class ErrorReason {
  kUnspecified = 0,
  kStaleRevision = 1,
  kMissingSet = 2,
  kUnknownSet = 3,
  kFactorCount = 4,
  kFactorForms = 5,
  kUnknownFactor = 6,
  kMissingFactor = 7,
  kUnknownAction = 8,
  kUnknownPersonality = 9,
  kOutOfRange = 10,
  kBatchTooLarge = 11,
  kNotReady = 12,
  kDraining = 13,
  kOverloaded = 14,
};

// Every reason with its proto name less the ERROR_REASON_ prefix, in order.
struct ErrorReasonName {
  ErrorReason reason;
  const char* name;
};
inline constexpr ErrorReasonName kErrorReasonNames[] = {
    {ErrorReason::kUnspecified, "UNSPECIFIED"},
    {ErrorReason::kStaleRevision, "STALE_REVISION"},
    {ErrorReason::kMissingSet, "MISSING_SET"},
    {ErrorReason::kUnknownSet, "UNKNOWN_SET"},
    {ErrorReason::kFactorCount, "FACTOR_COUNT"},
    {ErrorReason::kFactorForms, "FACTOR_FORMS"},
    {ErrorReason::kUnknownFactor, "UNKNOWN_FACTOR"},
    {ErrorReason::kMissingFactor, "MISSING_FACTOR"},
    {ErrorReason::kUnknownAction, "UNKNOWN_ACTION"},
    {ErrorReason::kUnknownPersonality, "UNKNOWN_PERSONALITY"},
    {ErrorReason::kOutOfRange, "OUT_OF_RANGE"},
    {ErrorReason::kBatchTooLarge, "BATCH_TOO_LARGE"},
    {ErrorReason::kNotReady, "NOT_READY"},
    {ErrorReason::kDraining, "DRAINING"},
    {ErrorReason::kOverloaded, "OVERLOADED"},
};
// The table lists every enumerator once, in order.
static_assert([] {
  int i = 0;
  for (const ErrorReasonName& r : kErrorReasonNames) {
    if (static_cast<int>(r.reason) != i++) return false;
  }
  return true;
}());

// Returns a status with `code`, the message "<field>: <detail>", and
// `reason` and `field` attached.
[[nodiscard]] absl::Status FieldError(absl::StatusCode code, ErrorReason reason,
                                      absl::string_view field,
                                      absl::string_view detail);

// Returns `status` with `reason` attached (no field).
[[nodiscard]] absl::Status WithReason(absl::Status status, ErrorReason reason);

// Returns `status` with `prefix` put before its message and its field,
// e.g. "agents[3].". OK stays OK.
[[nodiscard]] absl::Status PrefixField(const absl::Status& status,
                                       absl::string_view prefix);

// Returns the attached reason, or kUnspecified.
[[nodiscard]] ErrorReason ReasonOf(const absl::Status& status);

// Returns the attached field path, or "".
[[nodiscard]] std::string FieldOf(const absl::Status& status);

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_ERROR_REASON_H_
