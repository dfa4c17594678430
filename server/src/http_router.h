// The admin endpoint's routing table, apart from the sockets so that tests
// and the admin router fuzzer drive it directly. A route is a method and a
// path pattern of literal segments, `{name}` (exactly one segment, which may
// be empty) and a trailing `*` (the rest of the path, possibly nothing).
// Matching splits the path at '/' once and compares segment by segment:
// linear in the path's length, with no backtracking and no recursion, so no
// path can cost more than one pass over itself and the table.
//
//   HttpRouter router;
//   router.Route("GET", "/api/v1/sets/{name}", GetSet);
//   HttpResponse res;
//   router.Answer(request, res);   // 404, 405 or 414 when no route answers
#ifndef UTILITYD_SERVER_HTTP_ROUTER_H_
#define UTILITYD_SERVER_HTTP_ROUTER_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace utilityd::server {

struct HttpRequest {
  std::string method;
  std::string path;
  // The path's `{name}` segments, in the pattern's order, then (for a
  // pattern ending in `*`) the rest of the path.
  std::vector<std::string> captures;
  std::string body;
  // Header names in lower case.
  std::map<std::string, std::string> headers;
  std::map<std::string, std::string> params;  // the query string

  // Returns the header (by any case of its name), or "".
  std::string header(absl::string_view name) const;
  bool has_header(absl::string_view name) const;
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

class HttpRouter {
 public:
  // Paths longer than this are answered 414 before any route is tried.
  static constexpr size_t kMaxPathBytes = 2048;

  // Where a handler runs: on the event thread (fast answers: probes,
  // metrics) or on a worker while its connection is suspended.
  enum class Lane { kEventThread, kWorker };

  struct Entry {
    std::string method;
    std::vector<std::string> segments;  // "{}" stands for one capture
    bool rest = false;                  // the pattern ended in `*`
    HttpHandler handler;
    Lane lane = Lane::kEventThread;
  };

  // Adds a route: `method` and a pattern ("/a/{name}", "/ui/*"). The first
  // matching route answers; GET routes answer HEAD too.
  void Route(std::string method, absl::string_view pattern, HttpHandler handler,
             Lane lane = Lane::kEventThread);

  // Returns the route for `request`, with its captures filled in, or null
  // with `*status` set to 404 (no path matches), 405 (a path matches under
  // another method) or 414 (the path is over kMaxPathBytes).
  const Entry* Find(HttpRequest& request, int* status) const;

  // Finds the route and runs its handler here, whatever its lane; answers
  // the error status when there is none. For tests and the fuzzer.
  void Answer(HttpRequest& request, HttpResponse& response) const;

  // Fills `response` with the error answer for a Find status.
  static void AnswerNoRoute(int status, HttpResponse& response);

 private:
  std::vector<Entry> routes_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_HTTP_ROUTER_H_
