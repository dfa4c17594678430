// utilityd: the decision service. `utilityd --help` lists every flag.
//
// Signals: SIGHUP reloads the config directory now; SIGTERM and SIGINT drain
// (health NOT_SERVING, refuse new calls, answer in-flight batches, end
// streams) and exit 0 within --drain_grace.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "server/src/flags.h"
#include "server/src/log.h"
#include "server/src/server.h"
#include "utilityd/base/usage.h"

namespace {

using utilityd::server::Log;
using utilityd::server::LogLevel;

// Writes the bound ports, one per line, atomically (a rename).
void WritePortFile(const std::string& file, int grpc_port, int http_port) {
  std::ofstream out(file + ".tmp");
  out << grpc_port << "\n" << http_port << "\n";
  out.close();
  std::rename((file + ".tmp").c_str(), file.c_str());
}

// Waits for signals on this thread: SIGHUP reloads, SIGTERM and SIGINT
// drain the server and return.
void HandleSignals(const sigset_t& signals,
                   const utilityd::server::ProcessFlags& flags,
                   utilityd::server::UtilitydServer& server) {
  while (true) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      Log(LogLevel::kInfo, "signal", {{"signal", "SIGHUP"}});
      server.watcher().TriggerReload();
      if (server.canary() != nullptr) server.canary()->TriggerReload();
      continue;
    }
    Log(LogLevel::kInfo, "signal",
        {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    server.Drain(flags.drain_delay, flags.drain_grace);
    return;
  }
}

// Lets the process hold as many connections as its hard limit allows (the
// soft limit is often 1024): idle admin connections and gRPC streams each
// hold a descriptor.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int Run() {
  RaiseFileLimit();
  const utilityd::server::ProcessFlags flags =
      utilityd::server::ProcessFlagsFromFlags();
  LogLevel level;
  if (!utilityd::server::ParseLogLevel(flags.log_level, &level)) {
    std::fprintf(stderr,
                 "--log_level: expected debug, info, warning or error\n");
    return 2;
  }
  utilityd::server::SetMinLogLevel(level);
  utilityd::server::InstallProtobufLogHandler();
  // Release builds of Abseil leave the check off; Debian's leaves it on.
  absl::SetMutexDeadlockDetectionMode(flags.mutex_deadlock_detection
                                          ? absl::OnDeadlockCycle::kAbort
                                          : absl::OnDeadlockCycle::kIgnore);
  absl::StatusOr<utilityd::server::ServerOptions> options =
      utilityd::server::OptionsFromFlags();
  if (options.ok()) {
    if (absl::Status s = options->Validate(); !s.ok()) options = s;
  }
  if (!options.ok()) {  // a flag out of range: its name, exit 2
    std::fprintf(stderr, "%s\n",
                 std::string(options.status().message()).c_str());
    return 2;
  }

  // Signals go to one thread that sigwaits; block them everywhere else
  // (threads created from here on inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  absl::StatusOr<std::unique_ptr<utilityd::server::UtilitydServer>> server =
      utilityd::server::UtilitydServer::Start(*options);
  if (!server.ok()) {
    Log(LogLevel::kError, "startup_failed",
        {{"error", std::string(server.status().message())}});
    return 1;
  }
  Log(LogLevel::kInfo, "listening",
      {{"grpc_address", options->grpc_address},
       {"port", (*server)->port()},
       {"http_port", (*server)->http_port()},
       {"config_dir", options->config_dir}});
  if (!flags.port_file.empty()) {
    WritePortFile(flags.port_file, (*server)->port(), (*server)->http_port());
  }
  std::thread signal_thread([&] { HandleSignals(signals, flags, **server); });
  (*server)->Wait();
  signal_thread.join();
  server->reset();
  Log(LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  utilityd::SetUsage(
      "server/src/flags.cc", "utilityd",
      "utility-AI decisions over gRPC.\n"
      "  utilityd --config_dir=DIR [--grpc_address=0.0.0.0:50051] ...");
  absl::ParseCommandLine(argc, argv);
  return Run();
}
