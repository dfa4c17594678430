#include "server/src/http_router.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace utilityd::server {

std::string HttpRequest::header(absl::string_view name) const {
  const auto it = headers.find(absl::AsciiStrToLower(name));
  return it == headers.end() ? std::string() : it->second;
}

bool HttpRequest::has_header(absl::string_view name) const {
  return headers.count(absl::AsciiStrToLower(name)) > 0;
}

std::string HttpRequest::param(const std::string& name) const {
  const auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

namespace {

// "/a/b/" -> {"a", "b", ""}; "/" -> {""}. A path that does not start with
// '/' has no segments (it matches no route).
std::vector<absl::string_view> Segments(absl::string_view path) {
  if (path.empty() || path.front() != '/') return {};
  return absl::StrSplit(path.substr(1), '/');
}

}  // namespace

void HttpRouter::Route(std::string method, absl::string_view pattern,
                       HttpHandler handler, Lane lane) {
  Entry entry{
      .method = std::move(method), .handler = std::move(handler), .lane = lane};
  for (absl::string_view s : Segments(pattern)) {
    if (s == "*") {
      entry.rest = true;
      break;  // `*` ends a pattern
    }
    const bool capture = s.size() >= 2 && s.front() == '{' && s.back() == '}';
    entry.segments.emplace_back(capture ? "{}" : std::string(s));
  }
  routes_.push_back(std::move(entry));
}

const HttpRouter::Entry* HttpRouter::Find(HttpRequest& request,
                                          int* status) const {
  *status = 404;
  if (request.path.size() > kMaxPathBytes) {
    *status = 414;
    return nullptr;
  }
  const std::vector<absl::string_view> path = Segments(request.path);
  for (const Entry& route : routes_) {
    const size_t n = route.segments.size();
    if (route.rest ? path.size() <= n : path.size() != n) continue;
    bool matched = true;
    for (size_t i = 0; i < n && matched; ++i) {
      matched = route.segments[i] == "{}" || route.segments[i] == path[i];
    }
    if (!matched) continue;
    if (route.method != request.method &&
        !(route.method == "GET" && request.method == "HEAD")) {
      *status = 405;
      continue;
    }
    request.captures.clear();
    for (size_t i = 0; i < n; ++i) {
      if (route.segments[i] == "{}") request.captures.emplace_back(path[i]);
    }
    if (route.rest) {
      request.captures.push_back(
          absl::StrJoin(path.begin() + n, path.end(), "/"));
    }
    return &route;
  }
  return nullptr;
}

void HttpRouter::AnswerNoRoute(int status, HttpResponse& response) {
  response.status = status;
  response.Set(status == 405 ? "method not allowed\n"
               : status == 414
                   ? absl::StrCat("request path too long: the limit is ",
                                  kMaxPathBytes, " bytes\n")
                   : "not found\n",
               "text/plain");
}

void HttpRouter::Answer(HttpRequest& request, HttpResponse& response) const {
  int status = 404;
  const Entry* route = Find(request, &status);
  if (route == nullptr) {
    AnswerNoRoute(status, response);
    return;
  }
  route->handler(request, response);
}

}  // namespace utilityd::server
