// The one place absl::Status becomes grpc::Status (same canonical codes).
#ifndef UTILITYD_SERVER_STATUS_UTIL_H_
#define UTILITYD_SERVER_STATUS_UTIL_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace utilityd::server {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_STATUS_UTIL_H_
