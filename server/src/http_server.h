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

#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct MHD_Daemon;

namespace utilityd::server {

struct HttpRequest {
  std::string method;
  std::string path;
  // The route's regex groups: [0] the whole path, then each group.
  std::vector<std::string> matches;
  std::string body;
  // Header names in lower case.
  std::map<std::string, std::string> headers;
  std::map<std::string, std::string> params;  // the query string

  // Returns the header (by any case of its name), or "".
  std::string header(absl::string_view name) const;
  bool has_param(const std::string& name) const {
    return params.count(name) > 0;
  }
  // Returns the query parameter, or "".
  std::string param(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain";
  std::vector<std::pair<std::string, std::string>> headers;

  void Set(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
  void Header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
  void Redirect(const std::string& location) {
    status = 302;
    Header("Location", location);
  }
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

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
    // Larger request bodies are refused with 413.
    size_t max_body_bytes = 16 << 20;
    // Threads for handlers routed to the worker lane.
    int workers = 2;
  };
  // Where a handler runs: on the event thread (fast answers: probes,
  // metrics) or on a worker while its connection is suspended.
  enum class Lane { kEventThread, kWorker };

  explicit HttpServer(Options options);
  ~HttpServer();  // Stop()

  // Adds a route before Start: `method` and a path regex matched in full.
  // The first matching route answers; none gives 404 (405 for a path that
  // matches under another method).
  void Route(std::string method, const std::string& path, HttpHandler handler,
             Lane lane = Lane::kEventThread);

  // Binds `address` ("host:port"; an empty host means every address; port
  // 0 picks one) and serves. INVALID_ARGUMENT for a bad address,
  // UNAVAILABLE when it cannot bind or start.
  [[nodiscard]] absl::Status Start(const std::string& address);
  int port() const { return port_; }
  // Finishes the handlers under way and closes every connection.
  void Stop();

 private:
  struct RouteEntry {
    std::string method;
    std::regex path;
    HttpHandler handler;
    Lane lane;
  };
  struct Connection;
  class Workers;
  friend struct MhdCallbacks;  // libmicrohttpd's callbacks, in the .cc

  // Finds the route for a request; fills its matches. Null when none; sets
  // `*status` to 404 or 405 then.
  const RouteEntry* Find(HttpRequest& request, int* status) const;

  const Options options_;
  std::vector<RouteEntry> routes_;
  std::unique_ptr<Workers> workers_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_HTTP_SERVER_H_
