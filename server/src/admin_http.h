// The HTTP admin endpoint (separate from gRPC): /metrics in the Prometheus
// text format, /healthz (alive), /readyz (sets loaded and not draining) and
// /api/v1/status (JSON). Served by Debian's cpp-httplib with TCP_NODELAY
// and keep-alive, on its own threads.
//
//   AdminHandlers h{.metrics = [&] { return registry.Serialize(); },
//                   .ready = [&] { return serving; },
//                   .status_json = [&] { return StatusJson(); }};
//   auto admin = AdminHttpServer::Start("0.0.0.0:8080", h);
#ifndef UTILITYD_SERVER_ADMIN_HTTP_H_
#define UTILITYD_SERVER_ADMIN_HTTP_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/src/log.h"

namespace httplib {
class Server;
}

namespace utilityd::server {

struct AdminHandlers {
  std::function<std::string()> metrics;
  std::function<bool()> ready;
  std::function<std::string()> status_json;
  // More routes (the inspector's API and page), added before serving.
  std::function<void(httplib::Server&)> more_routes;
};

class AdminHttpServer {
 public:
  // Binds `address` ("host:port"; port 0 picks one) and serves.
  // UNAVAILABLE when it cannot bind, INVALID_ARGUMENT for a bad address.
  static absl::StatusOr<std::unique_ptr<AdminHttpServer>> Start(
      const std::string& address, AdminHandlers handlers);
  ~AdminHttpServer();

  int port() const { return port_; }
  void Stop();

 private:
  AdminHttpServer() = default;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_ADMIN_HTTP_H_
