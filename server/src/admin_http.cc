#include "server/src/admin_http.h"

#include <httplib.h>
#include <sys/socket.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace utilityd::server {

absl::StatusOr<std::unique_ptr<AdminHttpServer>> AdminHttpServer::Start(
    const std::string& address, AdminHandlers handlers) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http_address: expected HOST:PORT, got \"", address, "\""));
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 1 && host.front() == '[')
    host = host.substr(1, host.size() - 2);
  std::unique_ptr<AdminHttpServer> s(new AdminHttpServer());
  s->http_ = std::make_unique<httplib::Server>();
  httplib::Server& http = *s->http_;
  // Without TCP_NODELAY, scrapes over keep-alive connections stall on
  // Nagle's algorithm and delayed ACKs.
  http.set_tcp_nodelay(true);
  // cpp-httplib's default sets SO_REUSEPORT, which would let a second
  // process share the port and split the scrapes; bind exclusively.
  http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http.set_keep_alive_max_count(1000);
  http.set_keep_alive_timeout(30);
  http.Get("/metrics", [h = handlers](const httplib::Request&,
                                      httplib::Response& res) {
    res.set_content(h.metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  http.Get("/readyz",
           [h = handlers](const httplib::Request&, httplib::Response& res) {
             const bool ready = h.ready();
             res.status = ready ? 200 : 503;
             res.set_content(ready ? "ready\n" : "not ready\n", "text/plain");
           });
  http.Get("/api/v1/status",
           [h = handlers](const httplib::Request&, httplib::Response& res) {
             res.set_content(h.status_json(), "application/json");
           });
  if (handlers.more_routes) handlers.more_routes(http);
  if (port == 0) {
    s->port_ = http.bind_to_any_port(host);
  } else if (http.bind_to_port(host, port)) {
    s->port_ = port;
  }
  if (s->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("http_address: cannot listen on ", address));
  }
  s->thread_ = std::thread([&http] { http.listen_after_bind(); });
  return s;
}

AdminHttpServer::~AdminHttpServer() { Stop(); }

void AdminHttpServer::Stop() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace utilityd::server
