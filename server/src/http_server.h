// A small HTTP/1.1 server for the admin endpoint, on Debian's libmicrohttpd:
// one epoll event thread accepts, reads and writes every connection, so idle
// or half-sent requests cost a file descriptor and a little memory, never a
// thread. Slow handlers (the inspector's scoring) run on a worker pool while
// their connection is suspended, so the event thread keeps answering probes
// and scrapes. Connections are capped in total and per client address, and
// one idle for `idle_timeout` (including mid-header) is closed.
//
//   HttpServer http({.max_connections = 2048});
//   http.Route("GET", "/healthz", [](const HttpRequest&, HttpResponse& r) {
//     r.Set("ok\n", "text/plain");
//   });
//   absl::Status s = http.Start("0.0.0.0:8080");   // http.port() when 0
#ifndef UTILITYD_SERVER_HTTP_SERVER_H_
#define UTILITYD_SERVER_HTTP_SERVER_H_

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/src/http_router.h"

struct MHD_Daemon;

namespace utilityd::server {

class HttpServer {
 public:
  struct Options {
    // Connections open at once; more are closed as they arrive.
    int max_connections = 2048;
    // Connections from one client address at once.
    int max_per_address = 256;
    // A connection that sends or reads nothing for this long is closed,
    // whether between requests or in the middle of one.
    absl::Duration idle_timeout = absl::Seconds(10);
    // Larger request bodies are refused with 413. The admin API's bodies
    // are a designer's edited set and a few agents: parsing one costs
    // tens of times its size in memory, so the bound is small.
    size_t max_body_bytes = 512 << 10;
    // Threads for handlers routed to the worker lane.
    int workers = 2;
  };
  using Lane = HttpRouter::Lane;

  explicit HttpServer(Options options);
  ~HttpServer();  // Stop()

  // Adds a route before Start (HttpRouter::Route). The first matching route
  // answers; none gives 404, 405 for a path that matches under another
  // method, 414 for a path over HttpRouter::kMaxPathBytes.
  void Route(std::string method, absl::string_view pattern, HttpHandler handler,
             Lane lane = Lane::kEventThread) {
    router_.Route(std::move(method), pattern, std::move(handler), lane);
  }
  // The routes, to add to before Start.
  HttpRouter& router() { return router_; }

  // Binds `address` ("host:port"; an empty host means every address; port
  // 0 picks one) and serves. INVALID_ARGUMENT for a bad address,
  // UNAVAILABLE when it cannot bind or start.
  [[nodiscard]] absl::Status Start(const std::string& address);
  int port() const { return port_; }
  // Finishes the handlers under way and closes every connection.
  void Stop();

 private:
  struct Connection;
  class Workers;
  friend struct MhdCallbacks;  // libmicrohttpd's callbacks, in the .cc

  const Options options_;
  HttpRouter router_;
  std::unique_ptr<Workers> workers_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_HTTP_SERVER_H_
