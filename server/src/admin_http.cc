#include "server/src/admin_http.h"

namespace utilityd::server {

void RegisterAdminRoutes(HttpRouter& http, const AdminHandlers& handlers) {
  http.Route("GET", "/metrics",
             [h = handlers](const HttpRequest&, HttpResponse& res) {
               res.Set(h.metrics(), "text/plain; version=0.0.4; charset=utf-8");
             });
  http.Route("GET", "/healthz", [](const HttpRequest&, HttpResponse& res) {
    res.Set("ok\n", "text/plain");
  });
  http.Route("GET", "/readyz",
             [h = handlers](const HttpRequest&, HttpResponse& res) {
               const bool ready = h.ready();
               res.status = ready ? 200 : 503;
               res.Set(ready ? "ready\n" : "not ready\n", "text/plain");
             });
  http.Route("GET", "/api/v1/status",
             [h = handlers](const HttpRequest&, HttpResponse& res) {
               res.Set(h.status_json(), "application/json");
             });
  if (handlers.more_routes) handlers.more_routes(http);
}

absl::StatusOr<std::unique_ptr<AdminHttpServer>> AdminHttpServer::Start(
    const std::string& address, const HttpServer::Options& limits,
    AdminHandlers handlers) {
  std::unique_ptr<AdminHttpServer> s(new AdminHttpServer());
  s->http_ = std::make_unique<HttpServer>(limits);
  HttpServer& http = *s->http_;
  RegisterAdminRoutes(http.router(), handlers);
  if (absl::Status started = http.Start(address); !started.ok()) {
    return started;
  }
  return s;
}

}  // namespace utilityd::server
