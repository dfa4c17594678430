// The admin endpoint under the attack an operator worries about: many
// clients that open a connection, send part of a request header, and then
// nothing (slowloris). Against the real binary: the probes and the scrape
// keep answering within Kubernetes' default probe timeout (1 s) while 1,000
// such connections are held and the inspector's API is busy; the server
// closes them after --http_idle_timeout; one address cannot hold more than
// --http_max_connections_per_address.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"

namespace utilityd {
namespace {

using ::utilityd::testing::IsOk;
using ::utilityd::testing::UtilitydProcess;
using ::utilityd::testing::WaitFor;

// Opens a connection from `source` (a 127.0.0.0/8 address, so that clients
// can differ by address on one machine) and sends an unfinished request
// header. Returns the socket, or -1.
int HalfSentRequest(const std::string& source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  const std::string partial =
      "GET /healthz HTTP/1.1\r\nHost: utilityd\r\nX-Slow: ";
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 ||
      ::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether the server has closed the connection (a read sees its end).
bool ClosedByServer(int fd) {
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int OpenDescriptors(pid_t pid) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(
           absl::StrCat("/proc/", pid, "/fd"))) {
    ++n;
  }
  return n;
}

class AdminSlowClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // This test holds over a thousand sockets.
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    ASSERT_GE(limit.rlim_cur, 2048u) << "too few file descriptors allowed";
  }
  void TearDown() override {
    for (int fd : attackers_) ::close(fd);
  }

  // Opens `count` half-sent requests spread over `addresses` source
  // addresses (127.0.0.2 and up).
  void Attack(int port, int count, int addresses) {
    for (int i = 0; i < count; ++i) {
      const int fd =
          HalfSentRequest(absl::StrCat("127.0.0.", 2 + i % addresses), port);
      ASSERT_GE(fd, 0) << "connection " << i;
      attackers_.push_back(fd);
    }
  }

  std::vector<int> attackers_;
};

TEST_F(AdminSlowClientsTest, ProbesAnswerWhileAThousandHalfSentRequestsWait) {
  UtilitydProcess server(
      {"--config_dir=examples/behaviour_sets", "--http_idle_timeout=30s"});
  ASSERT_THAT(server.StartServing(), IsOk());
  const int before = OpenDescriptors(server.pid());
  Attack(server.http_port(), 1000, 8);
  // The server holds them all: each is a descriptor (none is a thread), and
  // none is closed. The count allows a few descriptors of the start-up
  // (the health check's connection) closing meanwhile.
  ASSERT_TRUE(WaitFor(
      [&] { return OpenDescriptors(server.pid()) >= before + 1000 - 5; },
      absl::Seconds(10)))
      << "the server holds " << OpenDescriptors(server.pid()) - before;
  EXPECT_EQ(std::count_if(attackers_.begin(), attackers_.end(), ClosedByServer),
            0);

  // The inspector's API under load meanwhile: full explanations.
  std::atomic<bool> stop{false};
  std::atomic<int> api_calls{0};
  std::vector<std::thread> load;
  for (int t = 0; t < 2; ++t) {
    load.emplace_back([&] {
      httplib::Client http("127.0.0.1", server.http_port());
      const std::string body = ReadText("examples/requests/arena_decide.json");
      while (!stop.load()) {
        auto res = http.Post("/api/v1/decide", body, "application/json");
        if (res && res->status == 200) ++api_calls;
      }
    });
  }
  std::vector<double> millis;
  for (int i = 0; i < 30; ++i) {
    for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
      httplib::Client probe("127.0.0.1", server.http_port());
      probe.set_connection_timeout(1);
      probe.set_read_timeout(1);  // Kubernetes' default probe timeout
      const absl::Time start = absl::Now();
      auto res = probe.Get(path);
      millis.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
      ASSERT_TRUE(res) << path << " got no answer within 1 s";
      EXPECT_EQ(res->status, 200) << path;
    }
  }
  stop = true;
  for (std::thread& t : load) t.join();
  std::sort(millis.begin(), millis.end());
  std::cout << "with 1,000 half-sent requests held and the inspector API "
            << "busy (" << api_calls.load() << " calls): " << millis.size()
            << " probes and scrapes, median " << millis[millis.size() / 2]
            << " ms, slowest " << millis.back() << " ms\n";
  EXPECT_GT(api_calls.load(), 0);
  EXPECT_EQ(server.Health(), "SERVING");
}

TEST_F(AdminSlowClientsTest, HalfSentRequestsAreClosedAfterTheIdleTimeout) {
  UtilitydProcess server(
      {"--config_dir=examples/behaviour_sets", "--http_idle_timeout=2s"});
  ASSERT_THAT(server.Start(), IsOk());
  Attack(server.http_port(), 200, 4);
  EXPECT_TRUE(WaitFor(
      [&] {
        return std::all_of(attackers_.begin(), attackers_.end(),
                           ClosedByServer);
      },
      absl::Seconds(15), absl::Milliseconds(100)))
      << "half-sent requests outlived --http_idle_timeout";
}

TEST_F(AdminSlowClientsTest, OneAddressHoldsAtMostItsShare) {
  UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                          "--http_max_connections_per_address=50"});
  ASSERT_THAT(server.Start(), IsOk());
  Attack(server.http_port(), 80, 1);  // all from 127.0.0.2
  // The 30 beyond the share are closed at once; the 50 stay open.
  ASSERT_TRUE(WaitFor(
      [&] {
        return std::count_if(attackers_.begin(), attackers_.end(),
                             ClosedByServer) >= 30;
      },
      absl::Seconds(5)));
  EXPECT_EQ(std::count_if(attackers_.begin(), attackers_.end(), ClosedByServer),
            30);
  // Another address is still served.
  httplib::Client probe("127.0.0.1", server.http_port());
  auto res = probe.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

}  // namespace
}  // namespace utilityd
