// GoogleTest matchers for absl::Status and absl::StatusOr, named like the
// ones later Abseil releases ship so they can be swapped in.
//
//   EXPECT_THAT(Parse("x"), StatusIs(absl::StatusCode::kInvalidArgument,
//                                    HasSubstr("expected a number")));
//   EXPECT_THAT(Parse("1"), IsOkAndHolds(1));
//   ASSERT_THAT(Save(), IsOk());
#ifndef UTILITYD_TESTS_TESTING_STATUS_MATCHERS_H_
#define UTILITYD_TESTS_TESTING_STATUS_MATCHERS_H_

#include <ostream>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace utilityd::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s;
  return s.ok();
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + std::string(absl::StatusCodeToString(code))) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::Matches(message_matcher)(std::string(s.message()));
}

MATCHER_P(IsOkAndHolds, value_matcher, "is OK and holds a matching value") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_STATUS_MATCHERS_H_
