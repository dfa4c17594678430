#include "server/src/admin_api.h"

#include <arpa/inet.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "server/src/log.h"
#include "server/src/ui_assets.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/decide_codec.h"
#include "utilityd/engine/definition.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::server {
namespace {

int HttpStatus(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
      return 413;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

void SendError(const absl::Status& status, HttpResponse& res) {
  res.status = HttpStatus(status.code());
  res.Set(absl::StrCat(
              "{\"code\":", JsonString(absl::StatusCodeToString(status.code())),
              ",\"message\":", JsonString(status.message()), "}\n"),
          "application/json");
}

void SendMessage(const google::protobuf::Message& message, HttpResponse& res) {
  google::protobuf::util::JsonPrintOptions options;
  // Zeros matter here (a vetoing consideration's output is 0).
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status =
      google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    SendError(absl::InternalError(std::string(status.message())), res);
    return;
  }
  res.Set(json, "application/json");
}

// Reads a JSON (or YAML) body into `message` with the loader's reader:
// errors name the line, column and field path.
absl::Status ReadBody(const HttpRequest& req, absl::string_view what,
                      google::protobuf::Message* message) {
  if (req.body.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the request body is empty; send JSON"));
  }
  return loader::ReadMessageOrError(req.body, what, message);
}

using Handler = std::function<absl::Status(const HttpRequest&, HttpResponse&)>;

// GET /ui/<name>: the inspector's page, built into the binary.
void ServeUiAsset(const HttpRequest& req, HttpResponse& res) {
  const std::string name =
      req.matches[1].empty() ? std::string("index.html") : req.matches[1];
  const auto& assets = UiAssets();
  const auto it = assets.find(name);
  if (it == assets.end()) {
    res.status = 404;
    res.Set("not found\n", "text/plain");
    return;
  }
  const char* type = absl::EndsWith(name, ".js") ? "text/javascript"
                     : absl::EndsWith(name, ".css")
                         ? "text/css"
                         : "text/html; charset=utf-8";
  res.Header("Cache-Control", "no-cache");
  res.Header("X-Content-Type-Options", "nosniff");
  res.Header("Content-Security-Policy",
             "default-src 'self'; style-src 'self' 'unsafe-inline'; "
             "img-src 'self' data:");
  res.Set(std::string(it->second), type);
}

// GET /api/v1/sets
absl::Status ListSets(DecisionServiceImpl* service, HttpResponse& res) {
  v1::ListBehaviourSetsResponse response;
  UTILITYD_RETURN_IF_ERROR(service->ListSets(&response));
  SendMessage(response, res);
  return absl::OkStatus();
}

// GET /api/v1/sets/<name>
absl::Status GetSet(DecisionServiceImpl* service, const HttpRequest& req,
                    HttpResponse& res) {
  v1::GetBehaviourSetRequest request;
  request.set_name(req.matches[1]);
  v1::GetBehaviourSetResponse response;
  UTILITYD_RETURN_IF_ERROR(service->GetSet(request, &response));
  SendMessage(response, res);
  return absl::OkStatus();
}

// POST /api/v1/decide: the gRPC path, explained in full unless asked
// otherwise, and not recorded in metrics or logs.
absl::Status Decide(DecisionServiceImpl* service, const HttpRequest& req,
                    HttpResponse& res) {
  v1::DecideRequest request;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "request", &request));
  if (request.explain() == v1::EXPLAIN_UNSPECIFIED)
    request.set_explain(v1::EXPLAIN_FULL);
  v1::DecideResponse response;
  UTILITYD_RETURN_IF_ERROR(service->DecideUnrecorded(request, &response));
  SendMessage(response, res);
  return absl::OkStatus();
}

// POST /api/v1/whatif: decides with an edited set sent inline; nothing is
// stored.
absl::Status WhatIf(DecisionServiceImpl* service, const HttpRequest& req,
                    HttpResponse& res) {
  v1::WhatIfDecideRequest whatif;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "whatif", &whatif));
  if (!whatif.has_behaviour_set()) {
    return absl::InvalidArgumentError(
        "behaviourSet: give the edited behaviour set inline");
  }
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> set =
      loader::LoadSetProto(whatif.behaviour_set(), "behaviourSet");
  if (!set.ok()) return set.status();
  v1::DecideRequest& request = *whatif.mutable_request();
  // Agents that name no set are scored with the edited one.
  for (v1::AgentSnapshot& agent : *request.mutable_agents()) {
    if (agent.behaviour_set().empty()) agent.set_behaviour_set((*set)->name());
  }
  if (request.explain() == v1::EXPLAIN_UNSPECIFIED)
    request.set_explain(v1::EXPLAIN_FULL);
  absl::StatusOr<loader::Catalog> catalog =
      loader::Catalog::Of({*std::move(set)});
  if (!catalog.ok()) return catalog.status();
  v1::DecideResponse response;
  UTILITYD_RETURN_IF_ERROR(
      service->DecideUnrecorded(request, &response, &*catalog));
  SendMessage(response, res);
  return absl::OkStatus();
}

// GET /api/v1/format: the format's other vocabularies, from the schema
// itself — the tree's node kinds (TreeNode's `kind` oneof, each one the
// engine knows by that name) and the compensations — under their names in
// the format and in protobuf's JSON, so the inspector hard-codes none.
absl::Status Format(HttpResponse& res) {
  std::string json = "{\"nodeKinds\":[";
  const google::protobuf::OneofDescriptor* kinds =
      v1::TreeNode::descriptor()->FindOneofByName("kind");
  if (kinds == nullptr) return absl::InternalError("TreeNode has no kind");
  for (int i = 0; i < kinds->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = kinds->field(i);
    // (`subtree` is expanded when a set loads: never in a loaded tree.)
    if (!engine::FindNodeKind(f->name())) continue;
    if (json.back() == '}') json += ",";
    absl::StrAppend(&json, "{\"name\":", JsonString(f->name()),
                    ",\"jsonName\":", JsonString(f->json_name()), "}");
  }
  json += "],\"compensations\":[";
  const google::protobuf::EnumDescriptor* c = v1::Compensation_descriptor();
  bool first = true;
  for (int i = 0; i < c->value_count(); ++i) {
    if (c->value(i)->number() == 0) continue;  // unspecified: the default
    if (!first) json += ",";
    first = false;
    absl::StrAppend(&json, JsonString(c->value(i)->name()));
  }
  json += "]}\n";
  res.Set(json, "application/json");
  return absl::OkStatus();
}

// GET /api/v1/curves: the engine's curve kinds with their parameters and
// defaults, under their JSON names, so that the inspector's editor offers
// exactly what the format accepts.
absl::Status Curves(HttpResponse& res) {
  const engine::CurveDefinition defaults;
  const google::protobuf::Descriptor* curve = v1::Curve::descriptor();
  std::string json = "{\"kinds\":[";
  for (engine::CurveKind kind : engine::AllCurveKinds()) {
    const google::protobuf::FieldDescriptor* field =
        curve->FindFieldByName(engine::CurveKindName(kind));
    if (field == nullptr) return absl::InternalError("unregistered curve kind");
    if (json.back() == '}') json += ",";
    absl::StrAppend(&json, "{\"name\":", JsonString(field->json_name()),
                    ",\"params\":[");
    for (const engine::CurveParam& p : engine::CurveParams(kind)) {
      const google::protobuf::FieldDescriptor* f =
          field->message_type()->FindFieldByName(p.name);
      if (json.back() == '}') json += ",";
      absl::StrAppend(&json, "{\"name\":", JsonString(f->json_name()));
      if (p.number != nullptr) {
        absl::StrAppend(
            &json, ",\"type\":\"number\",\"default\":", defaults.*p.number);
      } else if (p.flag != nullptr) {
        absl::StrAppend(&json, ",\"type\":\"flag\",\"default\":",
                        defaults.*p.flag ? "true" : "false");
      } else {
        absl::StrAppend(&json, ",\"type\":\"points\"");
      }
      json += "}";
    }
    json += "]}";
  }
  json += "]}\n";
  res.Set(json, "application/json");
  return absl::OkStatus();
}

// GET /api/v1/decisions/recent?limit=&set=&action=&switched=
absl::Status Recent(RecentDecisions* recent, const HttpRequest& req,
                    HttpResponse& res) {
  RecentDecisions::Filter filter;
  if (req.has_param("limit")) {
    int limit = 0;
    if (!absl::SimpleAtoi(req.param("limit"), &limit) || limit < 1 ||
        limit > 1000) {
      return absl::InvalidArgumentError(
          "limit: expected a whole number from 1 to 1000");
    }
    filter.limit = limit;
  }
  filter.behaviour_set = req.param("set");
  filter.action = req.param("action");
  if (req.has_param("switched")) {
    const std::string v = req.param("switched");
    if (v != "true" && v != "false") {
      return absl::InvalidArgumentError("switched: expected true or false");
    }
    filter.switched = v == "true";
  }
  v1::RecentDecisionsResponse response;
  if (recent != nullptr) {
    for (auto& e : recent->Newest(filter))
      *response.add_decisions() = std::move(e);
  }
  SendMessage(response, res);
  return absl::OkStatus();
}

// POST /api/v1/candidate: the feed's recent decisions of a set replayed
// with a candidate (an edited set, or the shadow set) against the live set.
absl::Status Candidate(DecisionServiceImpl* service, RecentDecisions* recent,
                       ShadowEvaluator* shadow, const HttpRequest& req,
                       HttpResponse& res) {
  v1::CandidateReportRequest request;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "candidate", &request));
  const int examples = request.examples() == 0 ? 50 : request.examples();
  if (examples < 1 || examples > 500) {
    return absl::InvalidArgumentError("examples: expected 1 to 500");
  }
  const std::string& name = request.behaviour_set();
  const std::shared_ptr<const Generation> live_generation =
      service->store().Current();
  std::shared_ptr<const loader::LoadedSet> live =
      live_generation != nullptr ? live_generation->catalog.Find(name)
                                 : nullptr;
  if (live == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("behaviourSet: no live set named \"", name, "\""));
  }
  std::shared_ptr<const loader::LoadedSet> candidate;
  if (request.has_candidate()) {
    absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> edited =
        loader::LoadSetProto(request.candidate(), "candidate");
    if (!edited.ok()) return edited.status();
    candidate = *std::move(edited);
  } else {
    const std::shared_ptr<const Generation> g =
        shadow != nullptr ? shadow->store().Current() : nullptr;
    candidate = g != nullptr ? g->catalog.Find(name) : nullptr;
    if (candidate == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "candidate: give an edited set, or run the server with a "
          "--shadow_config_dir that holds \"",
          name, "\""));
    }
  }
  replay::Replayer replayer(
      {.candidate = [candidate](absl::string_view) { return candidate; },
       .baseline = [live](absl::string_view) { return live; },
       .baseline_name = "live",
       .examples = examples});
  if (recent != nullptr) {
    std::vector<v1::DecisionLogEntry> entries =
        recent->Newest({.limit = recent->capacity(), .behaviour_set = name});
    // Oldest first, so the examples are the first flips in time.
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      replayer.Add(*it);
    }
  }
  SendMessage(replayer.Report(), res);
  return absl::OkStatus();
}

// POST /api/v1/analysis: utilityctl analyse on a set sent inline (the
// page's edited copy); nothing is stored.
absl::Status AnalyseSet(const HttpRequest& req, HttpResponse& res) {
  v1::AnalyseSetRequest request;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "analysis", &request));
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> set =
      loader::LoadSetProto(request.behaviour_set(), "behaviourSet");
  if (!set.ok()) return set.status();
  analysis::AnalysisOptions options;
  options.coverage_samples = request.samples() > 0
                                 ? std::min<int64_t>(request.samples(), 100000)
                                 : 5000;
  options.max_boxes = 5000;  // an interactive answer
  options.map_x = request.map_x();
  options.map_y = request.map_y();
  options.map_columns = 40;
  options.map_rows = 20;
  absl::StatusOr<v1::SetAnalysis> a = analysis::Analyse(**set, options);
  if (!a.ok()) return a.status();
  SendMessage(*a, res);
  return absl::OkStatus();
}

// POST /api/v1/tune: utilityctl tune on a set sent inline.
absl::Status TuneSet(const HttpRequest& req, HttpResponse& res) {
  v1::AnalyseSetRequest request;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "tune", &request));
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> set =
      loader::LoadSetProto(request.behaviour_set(), "behaviourSet");
  if (!set.ok()) return set.status();
  analysis::TuneOptions options;
  if (request.has_margin()) options.margin = request.margin();
  if (!request.unlock().empty()) {
    UTILITYD_RETURN_IF_ERROR(analysis::ParseUnlock(request.unlock(), &options));
  }
  absl::StatusOr<v1::TuneReport> r = analysis::Tune(**set, options);
  if (!r.ok()) return r.status();
  SendMessage(*r, res);
  return absl::OkStatus();
}

// GET /api/v1/shadow
absl::Status Shadow(ShadowEvaluator* shadow, HttpResponse& res) {
  if (shadow == nullptr) {
    return absl::FailedPreconditionError(
        "shadow evaluation is off: start utilityd with --shadow_config_dir");
  }
  SendMessage(shadow->Report(), res);
  return absl::OkStatus();
}

}  // namespace

bool IsLoopbackAddress(absl::string_view host_port) {
  absl::string_view host = host_port;
  if (const size_t colon = host.rfind(':'); colon != absl::string_view::npos) {
    host = host.substr(0, colon);
  }
  absl::ConsumePrefix(&host, "[");
  absl::ConsumeSuffix(&host, "]");
  // A numeric IPv4 address in 127.0.0.0/8, not any name that starts so
  // ("127.example.com" may resolve anywhere).
  in_addr v4{};
  if (inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  return host == "localhost" || host == "::1";
}

std::string InspectorLockReason(absl::string_view http_address, bool has_token,
                                bool insecure_no_token) {
  if (has_token || insecure_no_token || IsLoopbackAddress(http_address)) {
    return "";
  }
  return absl::StrCat(
      "the inspector is locked: --http_address=", http_address,
      " is reachable from other hosts and no --admin_token or "
      "--admin_token_file is set (its live feed shows agent ids and factor "
      "values). Set a token, turn it off with --inspector=false, or serve it "
      "open knowingly with --inspector_insecure_no_token");
}

bool BearerTokenMatches(const std::string& header, const std::string& token) {
  const std::string kBearer = "Bearer ";
  if (header.size() != kBearer.size() + token.size() ||
      header.compare(0, kBearer.size(), kBearer) != 0) {
    return false;
  }
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    diff |= static_cast<unsigned char>(header[kBearer.size() + i] ^ token[i]);
  }
  return diff == 0;
}

void RegisterAdminApi(HttpServer& http, const AdminApiOptions& options,
                      DecisionServiceImpl* service, RecentDecisions* recent,
                      ShadowEvaluator* shadow) {
  // The page: static, open (it asks for the token when the API wants one).
  http.Route("GET", "/", [](const HttpRequest&, HttpResponse& res) {
    res.Redirect("/ui/");
  });
  if (!options.locked.empty()) {
    // Locked: the page and every API route say why, and nothing else.
    const std::string locked = options.locked;
    auto refuse = [locked](const HttpRequest&, HttpResponse& res) {
      SendError(absl::PermissionDeniedError(locked), res);
    };
    http.Route("GET", R"(/ui/.*)", refuse);
    http.Route("GET", R"(/api/v1/(sets|curves|format|decisions|shadow).*)",
               refuse);
    http.Route("POST", R"(/api/v1/(decide|whatif|candidate|analysis|tune))",
               refuse);
    return;
  }
  http.Route("GET", R"(/ui/([a-z_.]*))", ServeUiAsset);

  // Every API route: the token first, then the handler; a handler's error
  // status becomes the JSON error.
  auto route = [token = options.token](Handler handler) {
    return [token, handler](const HttpRequest& req, HttpResponse& res) {
      if (!token.empty() &&
          !BearerTokenMatches(req.header("authorization"), token)) {
        res.Header("WWW-Authenticate", "Bearer realm=\"utilityd\"");
        SendError(absl::UnauthenticatedError(
                      "this endpoint needs \"Authorization: Bearer <token>\" "
                      "(the server's --admin_token)"),
                  res);
        return;
      }
      const absl::Status status = handler(req, res);
      if (!status.ok()) SendError(status, res);
    };
  };
  using Req = const HttpRequest&;
  using Res = HttpResponse&;
  // The API scores: its handlers run on the workers, never on the event
  // thread that answers the probes.
  constexpr auto kWorker = HttpServer::Lane::kWorker;
  http.Route("GET", "/api/v1/sets",
             route([service](Req, Res res) { return ListSets(service, res); }),
             kWorker);
  http.Route(
      "GET", R"(/api/v1/sets/([^/]+))",
      route([service](Req req, Res res) { return GetSet(service, req, res); }),
      kWorker);
  http.Route("POST", "/api/v1/decide", route([service](Req req, Res res) {
               return Decide(service, req, res);
             }),
             kWorker);
  http.Route("POST", "/api/v1/whatif", route([service](Req req, Res res) {
               return WhatIf(service, req, res);
             }),
             kWorker);
  http.Route("GET", "/api/v1/curves",
             route([](Req, Res res) { return Curves(res); }));
  http.Route("GET", "/api/v1/format",
             route([](Req, Res res) { return Format(res); }));
  http.Route(
      "GET", "/api/v1/decisions/recent",
      route([recent](Req req, Res res) { return Recent(recent, req, res); }),
      kWorker);
  // Its examples are explained when asked: a worker's job.
  http.Route("GET", "/api/v1/shadow",
             route([shadow](Req, Res res) { return Shadow(shadow, res); }),
             kWorker);
  http.Route("POST", "/api/v1/candidate",
             route([service, recent, shadow](Req req, Res res) {
               return Candidate(service, recent, shadow, req, res);
             }),
             kWorker);
  http.Route("POST", "/api/v1/analysis",
             route([](Req req, Res res) { return AnalyseSet(req, res); }),
             kWorker);
  http.Route("POST", "/api/v1/tune",
             route([](Req req, Res res) { return TuneSet(req, res); }),
             kWorker);
}

}  // namespace utilityd::server
