// Child processes for integration tests: the real utilityd, nginx, and
// anything else a test runs beside them.
#ifndef UTILITYD_TESTS_TESTING_CHILD_PROCESS_H_
#define UTILITYD_TESTS_TESTING_CHILD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace utilityd::testing {

// Starts argv[0] (a path) with stdout and stderr appended to `log_path`.
// The child holds none of the test's pipes: ctest waits for them to close,
// so a child orphaned by a crashed test would otherwise hang the run. (No
// PR_SET_PDEATHSIG: it fires when the forking *thread* exits, and tests
// start children from helper threads.)
absl::StatusOr<pid_t> SpawnProcess(const std::vector<std::string>& argv,
                                   const std::string& log_path);

// Waits up to `timeout` for `pid` to exit. Returns its exit code, 128+signal
// when killed, or -1 on timeout (the child is left running).
int WaitProcess(pid_t pid, absl::Duration timeout);

// True once `pid` has exited (reaps it); `status` gets what WaitProcess
// would return.
bool ProcessExited(pid_t pid, int* status);

// A TCP port on 127.0.0.1 that was free a moment ago, for programs that
// cannot report the port they bound.
int PickFreePort();

// Polls until something accepts TCP connections on 127.0.0.1:`port`.
bool WaitForPort(int port, absl::Duration timeout);

// The whole content of a file ("" when it cannot be read).
std::string ReadWholeFile(const std::string& path);

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_CHILD_PROCESS_H_
