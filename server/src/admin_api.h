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

#include <string>

#include "absl/strings/string_view.h"
#include "server/src/decision_service.h"
#include "server/src/http_server.h"
#include "server/src/recent_decisions.h"
#include "server/src/shadow.h"

namespace utilityd::server {

struct AdminApiOptions {
  // Empty: no token is needed.
  std::string token;
  // When set, the page and every API route answer 403 with this text: the
  // inspector is locked (reachable from other hosts, and no token).
  std::string locked;
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
void RegisterAdminApi(HttpServer& http, const AdminApiOptions& options,
                      DecisionServiceImpl* service, RecentDecisions* recent,
                      ShadowEvaluator* shadow = nullptr);

// True when `header` is "Bearer <token>"; compares in constant time.
bool BearerTokenMatches(const std::string& header, const std::string& token);

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_ADMIN_API_H_
