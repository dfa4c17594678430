#include "tests/testing/utilityd_process.h"

#include <grpcpp/create_channel.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/testing/child_process.h"

namespace utilityd::testing {

std::string UtilitydBinary() { return UTILITYD_BINARY; }

UtilitydProcess::UtilitydProcess(std::vector<std::string> args, int port)
    : args_(std::move(args)), port_(port), fixed_port_(port != 0) {}

UtilitydProcess::~UtilitydProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::string UtilitydProcess::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

std::string UtilitydProcess::Log() const {
  return ReadWholeFile(dir_ + "/stderr.log");
}

absl::Status UtilitydProcess::Start(absl::Duration timeout) {
  const std::string port_file = dir_ + "/port";
  std::remove(port_file.c_str());
  std::vector<std::string> argv = {
      UtilitydBinary(),
      absl::StrCat("--grpc_address=127.0.0.1:", fixed_port_ ? port_ : 0),
      "--port_file=" + port_file, "--http_address=127.0.0.1:0",
      // Tests keep Abseil's lock-order check on (the server's default is
      // off): a cycle aborts the server and fails the test.
      "--mutex_deadlock_detection"};
  argv.insert(argv.end(), args_.begin(), args_.end());
  auto pid = SpawnProcess(argv, dir_ + "/stderr.log");
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::ifstream in(port_file);
    int port = 0, http_port = 0;
    if (in >> port >> http_port && port > 0) {
      port_ = port;
      http_port_ = http_port;
      return absl::OkStatus();
    }
    int status;
    if (ProcessExited(pid_, &status)) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat("utilityd exited: ", Log()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("utilityd did not report its port; its log:\n", Log()));
}

std::string UtilitydProcess::Health() {
  auto channel =
      grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status s = stub->Check(&context, {}, &response);
  if (!s.ok()) return absl::StrCat("error ", s.error_code());
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
      response.status());
}

bool UtilitydProcess::WaitServing(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (Health() == "SERVING") return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

absl::Status UtilitydProcess::StartServing(absl::Duration timeout) {
  if (absl::Status s = Start(timeout); !s.ok()) return s;
  if (WaitServing(timeout)) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrCat("utilityd did not turn SERVING: ", Log()));
}

void UtilitydProcess::Signal(int signal) {
  if (pid_ > 0) ::kill(pid_, signal);
}

int UtilitydProcess::Wait(absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  const int status = WaitProcess(pid_, timeout);
  if (status != -1) pid_ = -1;
  return status;
}

double UtilitydProcess::MetricTotal(const std::string& name) const {
  httplib::Client http("127.0.0.1", http_port_);
  auto res = http.Get("/metrics");
  if (!res || res->status != 200) return -1;
  double total = 0;
  std::istringstream lines(res->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + "{", 0) == 0 || line.rfind(name + " ", 0) == 0) {
      total += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return total;
}

double UtilitydProcess::MemoryMiB(const std::string& field) const {
  std::ifstream in(absl::StrCat("/proc/", pid_, "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stod(line.substr(field.size() + 1)) / 1024;
    }
  }
  return -1;
}

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout,
             absl::Duration poll) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(poll);
  }
  return true;
}

}  // namespace utilityd::testing
