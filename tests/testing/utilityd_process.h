// Runs the real utilityd binary for integration tests: on 127.0.0.1 port 0
// (or a given port), reading the bound port back from --port_file.
//
//   UtilitydProcess server({"--config_dir=" + dir});
//   ASSERT_THAT(server.Start(), IsOk());
//   auto channel = grpc::CreateChannel(server.address(), ...);
//   server.Signal(SIGTERM);
//   EXPECT_EQ(server.Wait(), 0);
#ifndef UTILITYD_TESTS_TESTING_UTILITYD_PROCESS_H_
#define UTILITYD_TESTS_TESTING_UTILITYD_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tests/testing/temp_dir.h"

namespace utilityd::testing {

class UtilitydProcess {
 public:
  // `args` are extra flags; --grpc_address and --port_file are added unless
  // `port` is given, in which case the server binds that port.
  explicit UtilitydProcess(std::vector<std::string> args, int port = 0);
  ~UtilitydProcess();  // SIGKILLs a server still running

  // Starts the binary and waits (up to `timeout`) until it has bound its
  // port. Does not wait for behaviour sets to load (see WaitServing).
  absl::Status Start(absl::Duration timeout = absl::Seconds(20));
  // Polls gRPC health until SERVING (true) or the timeout.
  bool WaitServing(absl::Duration timeout = absl::Seconds(20));
  // Start, then WaitServing: OK once the server answers SERVING, else why
  // not (its log included when it exited).
  absl::Status StartServing(absl::Duration timeout = absl::Seconds(20));
  // Returns the health of the server: "SERVING", "NOT_SERVING", or an error.
  std::string Health();

  void Signal(int signal);
  // Waits for exit; returns the exit code, 128+signal when killed, or -1 on
  // timeout.
  int Wait(absl::Duration timeout = absl::Seconds(30));
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  int port() const { return port_; }
  // The HTTP admin port (0 when disabled).
  int http_port() const { return http_port_; }
  std::string address() const;
  // Everything the server wrote to stderr so far.
  std::string Log() const;
  // The sum of a metric's samples on the admin endpoint's /metrics (every
  // label set), or -1 when it cannot be read.
  double MetricTotal(const std::string& name) const;
  // A memory figure of the process from /proc/PID/status, in MiB: "VmRSS"
  // (resident now) or "VmHWM" (its peak); -1 when it cannot be read.
  double MemoryMiB(const std::string& field) const;

 private:
  std::vector<std::string> args_;
  int port_;
  int http_port_ = 0;
  bool fixed_port_;
  pid_t pid_ = -1;
  TempDir temp_{"utilityd_test"};
  const std::string dir_ = temp_.path().string();
};

// Path of the utilityd binary under test (set by CMake).
std::string UtilitydBinary();

// Polls `condition` every `poll` until it holds (true) or `timeout` passes
// (false): the tests' way to wait for something instead of sleeping.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout,
             absl::Duration poll = absl::Milliseconds(10));

// Flags of a server serving the examples that logs every decision to `log`
// with agent ids masked (salt "s3cret") and no factor values.
inline std::vector<std::string> PrivateDecisionLogFlags(
    const std::string& log) {
  return {"--config_dir=examples/behaviour_sets",
          "--decision_log=" + log,
          "--decision_log_sample=1",
          "--decision_log_mask_ids",
          "--decision_log_mask_salt=s3cret",
          "--decision_log_factors=false"};
}

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_UTILITYD_PROCESS_H_
