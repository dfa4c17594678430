// Two small macros for absl::Status plumbing, named like the ones later
// Abseil releases ship so they can be swapped out.
//
//   absl::StatusOr<int> Parse(absl::string_view s);
//   absl::Status Use(absl::string_view s) {
//     UTILITYD_ASSIGN_OR_RETURN(int v, Parse(s));
//     UTILITYD_RETURN_IF_ERROR(Check(v));
//     return absl::OkStatus();
//   }
#ifndef UTILITYD_BASE_STATUS_MACROS_H_
#define UTILITYD_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns `expr`'s status from the enclosing function when it is not OK.
#define UTILITYD_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    const ::absl::Status utilityd_status_ = (expr);      \
    if (!utilityd_status_.ok()) return utilityd_status_; \
  } while (0)

#define UTILITYD_STATUS_CONCAT_INNER_(a, b) a##b
#define UTILITYD_STATUS_CONCAT_(a, b) UTILITYD_STATUS_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (a StatusOr); on error returns its status, otherwise
// moves the value into `lhs` (which may be a declaration).
#define UTILITYD_ASSIGN_OR_RETURN(lhs, rexpr) \
  UTILITYD_ASSIGN_OR_RETURN_IMPL_(            \
      UTILITYD_STATUS_CONCAT_(utilityd_statusor_, __LINE__), lhs, rexpr)

#define UTILITYD_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                    \
  if (!statusor.ok()) return std::move(statusor).status();    \
  lhs = *std::move(statusor)

#endif  // UTILITYD_BASE_STATUS_MACROS_H_
