#include "tests/testing/child_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace utilityd::testing {

absl::StatusOr<pid_t> SpawnProcess(const std::vector<std::string>& argv,
                                   const std::string& log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("empty argv");
  std::vector<std::string> args = argv;  // exec wants mutable strings
  std::vector<char*> c;
  for (std::string& a : args) c.push_back(a.data());
  c.push_back(nullptr);
  // posix_spawn, not fork: between fork and exec a child of this
  // multi-threaded process may only make async-signal-safe calls, and
  // opening the log there (fopen allocates) can hang the child forever
  // when another thread held the allocator's lock at the fork (the likely
  // cause of a server that never started in CI, under AddressSanitizer,
  // while the test's gRPC client was reconnecting).
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  ::posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, c[0], &actions, nullptr, c.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", argv[0], ": ", std::strerror(rc)));
  }
  return pid;
}

bool ProcessExited(pid_t pid, int* status) {
  int raw = 0;
  if (::waitpid(pid, &raw, WNOHANG) != pid) return false;
  if (WIFEXITED(raw)) {
    *status = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    *status = 128 + WTERMSIG(raw);
  } else {
    *status = -1;
  }
  return true;
}

int WaitProcess(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  int status = -1;
  while (absl::Now() < deadline) {
    if (ProcessExited(pid, &status)) return status;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return -1;
}

int PickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

bool WaitForPort(int port, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool up =
        ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (up) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace utilityd::testing
