// The inspector's HTTP/JSON API on the admin endpoint, under /api/v1/. Its
// shapes are the protobuf JSON mapping of the gRPC messages, and it scores
// with the same engine and loader as the gRPC path, so what the inspector
// shows is what the service decides:
//
//   GET  /api/v1/sets                  ListBehaviourSetsResponse
//   GET  /api/v1/sets/{name}           GetBehaviourSetResponse
//   POST /api/v1/decide                DecideRequest -> DecideResponse
//                                      (explain defaults to full)
//   POST /api/v1/whatif                WhatIfDecideRequest -> DecideResponse
//   GET  /api/v1/decisions/recent      RecentDecisionsResponse
//        ?limit=50&set=NAME&action=NAME&switched=true|false
//   GET  /api/v1/shadow                ReplayReport: shadow evaluation's
//                                      running comparison (docs/REPLAY.md)
//   POST /api/v1/candidate             CandidateReportRequest -> ReplayReport:
//                                      the feed's recent decisions of a set
//                                      replayed with an edited or shadow set
//
// The page itself is at /ui/ (index.html, app.js, style.css from
// server/ui/, built into the binary); / redirects there.
//
// Errors are {"code": "INVALID_ARGUMENT", "message": "..."} with the HTTP
// status that matches the code; the message is the gRPC path's text. With a
// token, every route here needs "Authorization: Bearer <token>" (401
// otherwise); /api/v1/status, /metrics and the probes stay open. Inspector
// calls are not counted in the decision metrics and do not enter the feed.
#ifndef UTILITYD_SERVER_ADMIN_API_H_
#define UTILITYD_SERVER_ADMIN_API_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/src/decision_service.h"
#include "server/src/http_router.h"
#include "server/src/recent_decisions.h"
#include "server/src/shadow.h"

namespace utilityd::server {

// What one inspector API request may ask of the server, in considerations
// decided (docs/INSPECTOR.md, "Security"). Over a bound the request is
// refused with 413 naming it, before any work.
struct AdminBudget {
  // Agents (snapshots and block rows) in one decide or what-if request.
  int max_agents = 1000;
  // Considerations scored by one decide, what-if or candidate request: per
  // agent, each action's considerations (per target for per-target actions)
  // and one for the action; sensitivity multiplies by factors + 1.
  int64_t max_scored = 5'000'000;
  // Of those, considerations explained (explain full).
  int64_t max_explained = 50'000;
  // Analysis: (coverage samples + boxes + map cells) x considerations.
  int64_t max_analysis = 50'000'000;
  // Tune: scenarios x actions x considerations.
  int64_t max_tune = 20'000'000;
  // An answer larger than this is refused (413) rather than sent.
  size_t max_answer_bytes = 32u << 20;
};

struct AdminApiOptions {
  // Empty: no token is needed.
  std::string token;
  // When set, the page and every API route answer 403 with this text: the
  // inspector is locked (reachable from other hosts, and no token).
  std::string locked;
  // Host names (with or without port) the API answers besides loopback
  // ones when it has no token; others get 403 (DNS rebinding).
  std::vector<std::string> allowed_hosts;
  AdminBudget budget;
};

// Returns whether an admin address ("host:port") is reachable only from
// this machine: a loopback host (127.0.0.0/8, ::1, localhost). "0.0.0.0",
// "[::]", an empty host and every other address are reachable from others.
[[nodiscard]] bool IsLoopbackAddress(absl::string_view host_port);

// Returns why the inspector must stay locked with `options`-like settings,
// or "" when it may be served: on an address others can reach it needs a
// token, unless the operator opted out with --inspector_insecure_no_token.
[[nodiscard]] std::string InspectorLockReason(absl::string_view http_address,
                                              bool has_token,
                                              bool insecure_no_token);

// Registers the routes on `http`. The service decides (and checks the
// batch size) for decide and what-if. The pointers must outlive it; `recent`
// may be null (the feed then answers with no decisions), and `shadow` too
// (/api/v1/shadow then answers FAILED_PRECONDITION).
void RegisterAdminApi(HttpRouter& http, const AdminApiOptions& options,
                      DecisionServiceImpl* service, RecentDecisions* recent,
                      ShadowEvaluator* shadow = nullptr);

// Returns whether `host_header` (a Host header's "name[:port]") names this
// server to a client: a loopback name, or one of `allowed_hosts`.
[[nodiscard]] bool IsAllowedHost(absl::string_view host_header,
                                 const std::vector<std::string>& allowed_hosts);

// What a request to the admin endpoint asks for: the inspector's page
// (static), an API read, or API work (a POST that scores).
enum class Caller { kPage, kRead, kWork };

// Returns why the endpoint refuses a caller, before its token is checked:
// a Host other than this server's when it has no token (PERMISSION_DENIED:
// DNS rebinding); for the API, a request from another site (Origin,
// Sec-Fetch-Site: PERMISSION_DENIED); for work, a body that is not JSON or
// YAML by its Content-Type (INVALID_ARGUMENT). The page may be linked to
// from anywhere.
[[nodiscard]] absl::Status CheckCaller(const HttpRequest& req,
                                       const AdminApiOptions& options,
                                       Caller caller);

// True when `header` is "Bearer <token>"; compares in constant time.
bool BearerTokenMatches(const std::string& header, const std::string& token);

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_ADMIN_API_H_
