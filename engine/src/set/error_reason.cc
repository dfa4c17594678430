#include "utilityd/engine/error_reason.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace utilityd::engine {
namespace {

constexpr absl::string_view kReasonUrl = "utilityd.v1.Error.reason";
constexpr absl::string_view kFieldUrl = "utilityd.v1.Error.field";

}  // namespace

absl::Status FieldError(absl::StatusCode code, ErrorReason reason,
                        absl::string_view field, absl::string_view detail) {
  absl::Status s =
      WithReason(absl::Status(code, absl::StrCat(field, ": ", detail)), reason);
  s.SetPayload(kFieldUrl, absl::Cord(field));
  return s;
}

absl::Status WithReason(absl::Status status, ErrorReason reason) {
  status.SetPayload(kReasonUrl,
                    absl::Cord(absl::StrCat(static_cast<int>(reason))));
  return status;
}

absl::Status PrefixField(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(prefix, status.message()));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& value) {
    out.SetPayload(url, url == kFieldUrl ? absl::Cord(absl::StrCat(
                                               prefix, std::string(value)))
                                         : value);
  });
  return out;
}

ErrorReason ReasonOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kReasonUrl);
  int reason = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &reason)) {
    return ErrorReason::kUnspecified;
  }
  return static_cast<ErrorReason>(reason);
}

std::string FieldOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kFieldUrl);
  return payload ? std::string(*payload) : std::string();
}

}  // namespace utilityd::engine
