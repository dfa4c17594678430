// The HTTP admin endpoint (separate from gRPC): /metrics in the Prometheus
// text format, /healthz (alive), /readyz (sets loaded and not draining) and
// /api/v1/status (JSON), answered on the event thread of an HttpServer
// (libmicrohttpd, epoll): slow or idle clients hold a connection, never a
// thread, so probes and scrapes keep answering under them.
//
//   AdminHandlers h{.metrics = [&] { return registry.Serialize(); },
//                   .ready = [&] { return serving; },
//                   .status_json = [&] { return StatusJson(); }};
//   auto admin = AdminHttpServer::Start("0.0.0.0:8080", {}, h);
#ifndef UTILITYD_SERVER_ADMIN_HTTP_H_
#define UTILITYD_SERVER_ADMIN_HTTP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/src/http_server.h"

namespace utilityd::server {

struct AdminHandlers {
  std::function<std::string()> metrics;
  std::function<bool()> ready;
  std::function<std::string()> status_json;
  // More routes (the inspector's API and page), added before serving.
  std::function<void(HttpRouter&)> more_routes;
};

// Adds the endpoint's routes to `http`: the metrics, the probes, the
// status, then `handlers.more_routes`.
void RegisterAdminRoutes(HttpRouter& http, const AdminHandlers& handlers);

class AdminHttpServer {
 public:
  // Binds `address` ("host:port"; port 0 picks one) and serves with the
  // connection limits and timeout of `limits`. UNAVAILABLE when it cannot
  // bind, INVALID_ARGUMENT for a bad address.
  static absl::StatusOr<std::unique_ptr<AdminHttpServer>> Start(
      const std::string& address, const HttpServer::Options& limits,
      AdminHandlers handlers);

  int port() const { return http_->port(); }
  void Stop() { http_->Stop(); }

 private:
  AdminHttpServer() = default;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_ADMIN_HTTP_H_
