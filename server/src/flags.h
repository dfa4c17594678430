// utilityd's command-line flags (flags.cc defines them; `utilityd --help`
// lists them) read into the options the server and the process take.
// Binary-only: the server library takes ServerOptions, which
// ServerOptions::Validate checks.
#ifndef UTILITYD_SERVER_SRC_FLAGS_H_
#define UTILITYD_SERVER_SRC_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/src/server.h"

namespace utilityd::server {

// The server's options as the flags set them. INVALID_ARGUMENT only for a
// file a flag names that cannot be read (--admin_token_file); ranges are
// ServerOptions::Validate's.
[[nodiscard]] absl::StatusOr<ServerOptions> OptionsFromFlags();

// What the process itself takes from its flags.
struct ProcessFlags {
  absl::Duration drain_delay;
  absl::Duration drain_grace;
  std::string port_file;  // empty: none written
  bool mutex_deadlock_detection = false;
  std::string log_level;
};
[[nodiscard]] ProcessFlags ProcessFlagsFromFlags();

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_SRC_FLAGS_H_
