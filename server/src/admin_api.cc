#include "server/src/admin_api.h"

#include <arpa/inet.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "server/src/log.h"
#include "server/src/ui_assets.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/batch.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/definition.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/scoring_rules.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/loader/set_patch.h"
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
    case absl::StatusCode::kAborted:  // the file moved on under the edits
      return 409;
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

// Prints `message` as JSON into `json`, with every field.
absl::Status PrintJson(const google::protobuf::Message& message,
                       std::string* json) {
  google::protobuf::util::JsonPrintOptions options;
  // Zeros matter here (a vetoing consideration's output is 0).
  options.always_print_primitive_fields = true;
  const auto status =
      google::protobuf::util::MessageToJsonString(message, json, options);
  return status.ok() ? absl::OkStatus()
                     : absl::InternalError(std::string(status.message()));
}

void SendMessage(const google::protobuf::Message& message, HttpResponse& res) {
  std::string json;
  if (const absl::Status s = PrintJson(message, &json); !s.ok()) {
    SendError(s, res);
    return;
  }
  res.Set(std::move(json), "application/json");
}

// As SendMessage, one decision at a time: protobuf's printer holds a tree
// of the whole message while it prints (about 25 times the JSON's size,
// with every field), so printed whole, a large explained answer would cost
// hundreds of MiB; printed by decision, the tree is one decision's.
void SendDecideResponse(v1::DecideResponse& response, HttpResponse& res) {
  google::protobuf::RepeatedPtrField<v1::Decision> decisions;
  decisions.Swap(response.mutable_decisions());
  std::string json;
  if (const absl::Status s = PrintJson(response, &json); !s.ok()) {
    SendError(s, res);
    return;
  }
  // The top level's first field is a number, so its first "decisions" key
  // is the top level's (and a string's quotes are escaped).
  const std::string kEmpty = "\"decisions\":[]";
  const size_t at = json.find(kEmpty);
  if (at == std::string::npos) {
    SendError(absl::InternalError("decisions: not printed"), res);
    return;
  }
  std::string out = json.substr(0, at + kEmpty.size() - 1);
  std::string one;
  for (int i = 0; i < decisions.size(); ++i) {
    one.clear();
    if (const absl::Status s = PrintJson(decisions.Get(i), &one); !s.ok()) {
      SendError(s, res);
      return;
    }
    if (i > 0) out += ',';
    out += one;
  }
  out.append(json, at + kEmpty.size() - 1);
  res.Set(std::move(out), "application/json");
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
      req.captures[0].empty() ? std::string("index.html") : req.captures[0];
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
  // No other site may frame the page (clickjacking): CSP for browsers that
  // read it, X-Frame-Options for those that do not.
  res.Header("Content-Security-Policy",
             "default-src 'self'; style-src 'self' 'unsafe-inline'; "
             "img-src 'self' data:; frame-ancestors 'none'");
  res.Header("X-Frame-Options", "DENY");
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
  request.set_name(req.captures[0]);
  v1::GetBehaviourSetResponse response;
  UTILITYD_RETURN_IF_ERROR(service->GetSet(request, &response));
  SendMessage(response, res);
  return absl::OkStatus();
}

// POST /api/v1/sets/<name>/export?base=<revision>, the edited set as the
// body: the file the set came from with the edits written into it
// (loader::PatchSetText), beside the file as it is. Refused (409) when the
// file on disk is no longer the revision the page's edits started from.
absl::Status ExportSet(DecisionServiceImpl* service, const HttpRequest& req,
                       HttpResponse& res) {
  v1::BehaviourSet edited;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "behaviourSet", &edited));
  const std::shared_ptr<const Generation> g = service->store().Current();
  const auto set = g == nullptr ? nullptr : g->catalog.Find(req.captures[0]);
  if (set == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("name: no loaded set is called ", req.captures[0]));
  }
  if (!set->packages.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        set->name(), " composes packages (", absl::StrJoin(set->packages, ", "),
        "); edits to an archetype are not written into its files yet: make "
        "them in the files its origins name"));
  }
  std::ifstream in(set->source, std::ios::binary);
  std::ostringstream disk;
  disk << in.rdbuf();
  if (!in) {
    return absl::NotFoundError(absl::StrCat(set->name(), ": its file ",
                                            set->source, " cannot be read"));
  }
  const std::string original = disk.str();
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> now =
      loader::LoadSetText(original, set->source);
  const std::string base = req.param("base");
  const std::string file =
      std::filesystem::path(set->source).filename().string();
  if (!now.ok() || (*now)->definition.revision() != base) {
    return absl::AbortedError(absl::StrCat(
        file, " changed since these edits began (revision ", base, ", now ",
        now.ok() ? (*now)->definition.revision() : "not loadable",
        "): reload the set and make the edits again"));
  }
  absl::StatusOr<std::string> text =
      loader::PatchSetText(original, set->source, edited);
  if (!text.ok()) return text.status();
  res.Set(absl::StrCat("{\"fileName\":", JsonString(file), ",\"revision\":",
                       JsonString(base), ",\"original\":", JsonString(original),
                       ",\"text\":", JsonString(*text), "}\n"),
          "application/json");
  return absl::OkStatus();
}

// POST /api/v1/curve?action=A&consideration=C&samples=N, the set as the
// body: that consideration's output across its factor's range (widened to
// its bookends) at N evenly spaced values (default 121, 2..1001), as the
// engine computes it — the curve editor's plot, redrawn while a handle
// moves.
absl::Status CurvePoints(const HttpRequest& req, HttpResponse& res) {
  v1::BehaviourSet body;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "behaviourSet", &body));
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> set =
      loader::LoadSetProto(std::move(body), "behaviourSet");
  if (!set.ok()) return set.status();
  const engine::CompiledBehaviourSet& compiled = (*set)->compiled;
  const engine::CompiledConsideration* con = nullptr;
  for (const engine::CompiledAction& a : compiled.actions()) {
    if (a.name != req.param("action")) continue;
    for (uint32_t k = 0; k < a.consideration_count; ++k) {
      const auto& c = compiled.considerations()[a.first_consideration + k];
      if (c.name == req.param("consideration")) con = &c;
    }
  }
  if (con == nullptr) {
    return absl::NotFoundError(absl::StrCat("action ", req.param("action"),
                                            " has no consideration called ",
                                            req.param("consideration")));
  }
  const engine::FactorDefinition& factor =
      (con->per_target ? compiled.target_factors()
                       : compiled.factors())[con->factor];
  const double lo = std::min({factor.min, double{con->range_lo},
                              double{con->range_lo + con->range_span}});
  const double hi = std::max({factor.max, double{con->range_lo},
                              double{con->range_lo + con->range_span}});
  int64_t samples = 121;
  if (req.has_param("samples") &&
      (!absl::SimpleAtoi(req.param("samples"), &samples) || samples < 2 ||
       samples > 1001)) {
    return absl::InvalidArgumentError("samples: give 2 to 1001");
  }
  std::string json =
      absl::StrCat("{\"factor\":", JsonString(factor.name), ",\"from\":", lo,
                   ",\"to\":", hi, ",\"points\":[");
  for (int64_t i = 0; i < samples; ++i) {
    const double x = lo + (hi - lo) * static_cast<double>(i) /
                              static_cast<double>(samples - 1);
    const float y = engine::ConsiderationOutput(*con, static_cast<float>(x),
                                                compiled.curve_points());
    absl::StrAppend(&json, i ? "," : "", "[", x, ",", y, "]");
  }
  res.Set(json + "]}\n", "application/json");
  return absl::OkStatus();
}

// The considerations deciding one agent of `set` with `targets` targets
// scores: each action's, per target for per-target ones, plus one for the
// action itself; for a tree, one per node and its utility nodes' choices.
int64_t ConsiderationsPerAgent(const engine::CompiledBehaviourSet& set,
                               int64_t targets) {
  const int64_t t = std::max<int64_t>(1, targets);
  int64_t n = 0;
  for (const engine::CompiledAction& a : set.actions()) {
    n += (int64_t{a.consideration_count} + 1) * (a.per_target ? t : 1);
  }
  if (const engine::CompiledTree* tree = set.tree(); tree != nullptr) {
    n += static_cast<int64_t>(tree->nodes.size());
    for (const engine::CompiledNode& node : tree->nodes) {
      if (node.choices != nullptr)
        n += ConsiderationsPerAgent(*node.choices, t);
    }
  }
  return n;
}

// Refuses a decide request (on `catalog`) whose work is over `budget`:
// agents, considerations scored, and considerations explained.
absl::Status CheckDecideBudget(const loader::Catalog& catalog,
                               const v1::DecideRequest& request,
                               const AdminBudget& budget,
                               absl::string_view what) {
  const int64_t agents = codec::RequestRows(request);
  if (agents > budget.max_agents) {
    return engine::FieldError(
        absl::StatusCode::kResourceExhausted,
        engine::ErrorReason::kBatchTooLarge, "agents",
        absl::StrCat(agents, " agents in one ", what,
                     " request; the inspector's budget is ", budget.max_agents,
                     " (docs/INSPECTOR.md, \"Security\")"));
  }
  const bool full = request.explain() == v1::EXPLAIN_FULL;
  // Sensitivity sweeps every factor: about one decision more per factor.
  auto sweeps = [&](const loader::LoadedSet& set) -> int64_t {
    return request.sensitivity() ? 1 + set.compiled.factor_count() +
                                       set.compiled.target_factor_count()
                                 : 1;
  };
  int64_t scored = 0, explained = 0;
  for (const v1::AgentSnapshot& agent : request.agents()) {
    const std::shared_ptr<const loader::LoadedSet> set =
        catalog.Find(agent.behaviour_set());
    if (set == nullptr) continue;  // answered as that agent's error
    const int64_t n =
        ConsiderationsPerAgent(set->compiled, agent.targets_size());
    scored += n * sweeps(*set);
    if (full) explained += n;
  }
  for (const v1::AgentBlock& block : request.blocks()) {
    const std::shared_ptr<const loader::LoadedSet> set =
        catalog.Find(block.behaviour_set());
    if (set == nullptr) continue;
    const int64_t rows = block.agent_ids_size();
    const int64_t targets =
        block.target_offsets().empty()
            ? 0
            : block.target_offsets().Get(block.target_offsets_size() - 1);
    // Every row with its share of the targets (rounded up).
    const int64_t per_row = ConsiderationsPerAgent(
        set->compiled, rows > 0 ? (targets + rows - 1) / rows : 0);
    scored += per_row * rows;
    if (full) explained += per_row * block.explain_rows_size();
  }
  if (scored > budget.max_scored || explained > budget.max_explained) {
    const bool by_explained = explained > budget.max_explained;
    return engine::FieldError(
        absl::StatusCode::kResourceExhausted,
        engine::ErrorReason::kBatchTooLarge, "agents",
        absl::StrCat(
            "this ", what, " request would ",
            by_explained ? "explain " : "score ",
            by_explained ? explained : scored,
            " considerations (agents x actions x targets x considerations",
            by_explained ? ", explain full" : ", sensitivity's sweeps",
            "); the inspector's budget is ",
            by_explained ? budget.max_explained : budget.max_scored,
            " (docs/INSPECTOR.md, \"Security\"): send fewer agents or "
            "targets",
            by_explained ? ", or explain less" : ""));
  }
  return absl::OkStatus();
}

// POST /api/v1/decide: the gRPC path, explained in full unless asked
// otherwise, and not recorded in metrics or logs.
absl::Status Decide(DecisionServiceImpl* service, const AdminBudget& budget,
                    const HttpRequest& req, HttpResponse& res) {
  v1::DecideRequest request;
  UTILITYD_RETURN_IF_ERROR(ReadBody(req, "request", &request));
  if (request.explain() == v1::EXPLAIN_UNSPECIFIED)
    request.set_explain(v1::EXPLAIN_FULL);
  const std::shared_ptr<const Generation> live = service->store().Current();
  if (live != nullptr) {
    UTILITYD_RETURN_IF_ERROR(
        CheckDecideBudget(live->catalog, request, budget, "decide"));
  }
  v1::DecideResponse response;
  UTILITYD_RETURN_IF_ERROR(service->DecideUnrecorded(
      request, &response, live != nullptr ? &live->catalog : nullptr));
  SendDecideResponse(response, res);
  return absl::OkStatus();
}

// POST /api/v1/whatif: decides with an edited set sent inline; nothing is
// stored.
absl::Status WhatIf(DecisionServiceImpl* service, const AdminBudget& budget,
                    const HttpRequest& req, HttpResponse& res) {
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
  UTILITYD_RETURN_IF_ERROR(
      CheckDecideBudget(*catalog, request, budget, "whatif"));
  v1::DecideResponse response;
  UTILITYD_RETURN_IF_ERROR(
      service->DecideUnrecorded(request, &response, &*catalog));
  SendDecideResponse(response, res);
  return absl::OkStatus();
}

// GET /api/v1/packages: every package of the live catalog, its file and
// the sets composing it — what an edit to one of its pieces reaches.
absl::Status Packages(DecisionServiceImpl* service, HttpResponse& res) {
  const std::shared_ptr<const Generation> g = service->store().Current();
  std::string json = "{\"packages\":[";
  if (g != nullptr) {
    bool first = true;
    for (const auto& [name, p] : g->catalog.packages()) {
      std::vector<std::string> users;
      for (const std::string& u : p.used_by) users.push_back(JsonString(u));
      absl::StrAppend(&json, first ? "" : ",", "{\"name\":", JsonString(name),
                      ",\"file\":", JsonString(p.file->source), ",\"usedBy\":[",
                      absl::StrJoin(users, ","), "]}");
      first = false;
    }
  }
  res.Set(json + "]}\n", "application/json");
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
// defaults, under their JSON names (what the set's JSON holds) and the
// format's names (what a designer writes in YAML), so that the inspector's
// editor offers exactly what the format accepts, named as the format names
// it.
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
                    ",\"formatName\":", JsonString(field->name()),
                    ",\"params\":[");
    for (const engine::CurveParam& p : engine::CurveParams(kind)) {
      const google::protobuf::FieldDescriptor* f =
          field->message_type()->FindFieldByName(p.name);
      if (json.back() == '}') json += ",";
      absl::StrAppend(&json, "{\"name\":", JsonString(f->json_name()),
                      ",\"formatName\":", JsonString(f->name()));
      if (p.number != nullptr) {
        absl::StrAppend(&json,
                        ",\"type\":\"number\",\"default\":", defaults.*p.number,
                        ",\"onInput\":", p.on_input ? "true" : "false");
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
                       ShadowEvaluator* shadow, const AdminBudget& budget,
                       const HttpRequest& req, HttpResponse& res) {
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
    // Each entry is decided by both sets; the examples are explained.
    int64_t scored = 0;
    for (const v1::DecisionLogEntry& e : entries) {
      const int targets = e.snapshot().targets_size();
      scored += ConsiderationsPerAgent(candidate->compiled, targets) +
                ConsiderationsPerAgent(live->compiled, targets);
    }
    if (scored > budget.max_scored) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "candidate: replaying ", entries.size(),
          " recent decisions would score ", scored,
          " considerations; the inspector's budget is ", budget.max_scored,
          " (docs/INSPECTOR.md, \"Security\")"));
    }
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
absl::Status AnalyseSet(const AdminBudget& budget, const HttpRequest& req,
                        HttpResponse& res) {
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
  // Each sample, box and map cell decides the set once.
  const int64_t per_decision = ConsiderationsPerAgent((*set)->compiled, 1);
  const int64_t decisions = options.coverage_samples + options.max_boxes +
                            options.map_columns * options.map_rows;
  if (per_decision * decisions > budget.max_analysis) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "analysis: ", decisions, " samples, boxes and map cells x ",
        per_decision, " considerations is ", per_decision * decisions,
        "; the inspector's budget is ", budget.max_analysis,
        " (docs/INSPECTOR.md, \"Security\"): ask for fewer samples, or "
        "run utilityctl analyse"));
  }
  absl::StatusOr<v1::SetAnalysis> a = analysis::Analyse(**set, options);
  if (!a.ok()) return a.status();
  SendMessage(*a, res);
  return absl::OkStatus();
}

// POST /api/v1/tune: utilityctl tune on a set sent inline.
absl::Status TuneSet(const AdminBudget& budget, const HttpRequest& req,
                     HttpResponse& res) {
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
  // Every scenario is a decision against every rival, for each change the
  // search tries.
  const int64_t work =
      static_cast<int64_t>((*set)->definition.scenarios_size()) *
      ConsiderationsPerAgent((*set)->compiled, 1) *
      std::max(1, (*set)->compiled.action_count());
  if (work > budget.max_tune) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tune: ", (*set)->definition.scenarios_size(), " scenarios x ",
        (*set)->compiled.action_count(), " actions x ",
        ConsiderationsPerAgent((*set)->compiled, 1), " considerations is ",
        work, "; the inspector's budget is ", budget.max_tune,
        " (docs/INSPECTOR.md, \"Security\"): run utilityctl tune"));
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

bool IsAllowedHost(absl::string_view host_header,
                   const std::vector<std::string>& allowed_hosts) {
  if (IsLoopbackAddress(host_header)) return true;
  absl::string_view host = host_header;
  // The port, if any: after the last ':' unless it closes an IPv6 literal.
  if (const size_t colon = host.rfind(':');
      colon != absl::string_view::npos && host.find(']', colon) == host.npos) {
    host = host.substr(0, colon);
  }
  for (const std::string& allowed : allowed_hosts) {
    if (absl::EqualsIgnoreCase(host, allowed) ||
        absl::EqualsIgnoreCase(host_header, allowed)) {
      return true;
    }
  }
  return false;
}

absl::Status CheckCaller(const HttpRequest& req, const AdminApiOptions& options,
                         Caller caller) {
  // DNS rebinding: a page whose name now resolves to 127.0.0.1 sends its own
  // name as Host. Without a token nothing else tells it from the designer.
  if (options.token.empty() && req.has_header("host") &&
      !IsAllowedHost(req.header("host"), options.allowed_hosts)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "Host \"", req.header("host"),
        "\" is not this server's: without --admin_token the inspector "
        "answers only loopback names (localhost, 127.0.0.1, [::1]) and those "
        "--admin_allowed_hosts lists"));
  }
  // The page itself may be linked to from anywhere: it does nothing until
  // it calls the API, from its own origin.
  if (caller == Caller::kPage) return absl::OkStatus();
  // Cross-site requests: browsers say where a request comes from.
  const std::string site = req.header("sec-fetch-site");
  if (!site.empty() && site != "same-origin" && site != "none") {
    return absl::PermissionDeniedError(absl::StrCat(
        "Sec-Fetch-Site: ", site,
        ": the inspector's API answers only its own page (same-origin)"));
  }
  if (req.has_header("origin")) {
    const std::string origin = req.header("origin");
    const std::string host = req.header("host");
    if (host.empty() || (!absl::EqualsIgnoreCase(origin, "http://" + host) &&
                         !absl::EqualsIgnoreCase(origin, "https://" + host))) {
      return absl::PermissionDeniedError(
          absl::StrCat("Origin \"", origin,
                       "\" is another site's: the inspector's API answers "
                       "only its own page"));
    }
  }
  if (caller == Caller::kWork) {
    // A form or a text/plain fetch from another site needs no preflight;
    // a JSON body does, and the API answers no preflight.
    const std::string type = absl::AsciiStrToLower(absl::StripAsciiWhitespace(
        req.header("content-type")
            .substr(0, req.header("content-type").find(';'))));
    if (type != "application/json" && type != "application/yaml") {
      return absl::InvalidArgumentError(absl::StrCat(
          "Content-Type \"", req.header("content-type"),
          "\": send the body as application/json (or application/yaml)"));
    }
  }
  return absl::OkStatus();
}

namespace {

struct ApiRoute {
  const char* method;
  const char* pattern;
  Handler handler;
  HttpRouter::Lane lane;
};

// The inspector's API, route by route. The routes that score run on the
// workers, never on the event thread that answers the probes.
std::vector<ApiRoute> ApiRoutes(DecisionServiceImpl* service,
                                RecentDecisions* recent,
                                ShadowEvaluator* shadow,
                                const AdminBudget& budget) {
  using Req = const HttpRequest&;
  using Res = HttpResponse&;
  constexpr auto kWorker = HttpRouter::Lane::kWorker;
  constexpr auto kEvent = HttpRouter::Lane::kEventThread;
  return {
      {"GET", "/api/v1/sets",
       [service](Req, Res res) { return ListSets(service, res); }, kWorker},
      {"GET", "/api/v1/sets/{name}",
       [service](Req req, Res res) { return GetSet(service, req, res); },
       kWorker},
      {"POST", "/api/v1/sets/{name}/export",
       [service](Req req, Res res) { return ExportSet(service, req, res); },
       kWorker},
      {"GET", "/api/v1/packages",
       [service](Req, Res res) { return Packages(service, res); }, kWorker},
      {"POST", "/api/v1/decide",
       [service, budget](Req req, Res res) {
         return Decide(service, budget, req, res);
       },
       kWorker},
      {"POST", "/api/v1/whatif",
       [service, budget](Req req, Res res) {
         return WhatIf(service, budget, req, res);
       },
       kWorker},
      {"GET", "/api/v1/curves", [](Req, Res res) { return Curves(res); },
       kEvent},
      {"POST", "/api/v1/curve",
       [](Req req, Res res) { return CurvePoints(req, res); }, kWorker},
      {"GET", "/api/v1/format", [](Req, Res res) { return Format(res); },
       kEvent},
      {"GET", "/api/v1/decisions/recent",
       [recent](Req req, Res res) { return Recent(recent, req, res); },
       kWorker},
      // Its examples are explained when asked: a worker's job.
      {"GET", "/api/v1/shadow",
       [shadow](Req, Res res) { return Shadow(shadow, res); }, kWorker},
      {"POST", "/api/v1/candidate",
       [service, recent, shadow, budget](Req req, Res res) {
         return Candidate(service, recent, shadow, budget, req, res);
       },
       kWorker},
      {"POST", "/api/v1/analysis",
       [budget](Req req, Res res) { return AnalyseSet(budget, req, res); },
       kWorker},
      {"POST", "/api/v1/tune",
       [budget](Req req, Res res) { return TuneSet(budget, req, res); },
       kWorker},
  };
}

// `handler` behind the caller's checks and the token; its error status
// becomes the JSON error, and an answer over the budget's bytes is refused
// rather than sent.
HttpHandler Guarded(const AdminApiOptions& options, bool does_work,
                    Handler handler) {
  return [options, does_work, handler = std::move(handler)](
             const HttpRequest& req, HttpResponse& res) {
    if (const absl::Status s = CheckCaller(
            req, options, does_work ? Caller::kWork : Caller::kRead);
        !s.ok()) {
      SendError(s, res);
      // A body of the wrong type: 415 Unsupported Media Type.
      if (s.code() == absl::StatusCode::kInvalidArgument) res.status = 415;
      return;
    }
    if (!options.token.empty() &&
        !BearerTokenMatches(req.header("authorization"), options.token)) {
      res.Header("WWW-Authenticate", "Bearer realm=\"utilityd\"");
      SendError(absl::UnauthenticatedError(
                    "this endpoint needs \"Authorization: Bearer <token>\" "
                    "(the server's --admin_token)"),
                res);
      return;
    }
    absl::Status status = handler(req, res);
    if (status.ok() && res.body.size() > options.budget.max_answer_bytes) {
      status = absl::ResourceExhaustedError(
          absl::StrCat("the answer is ", res.body.size(),
                       " bytes, over the inspector's budget of ",
                       options.budget.max_answer_bytes,
                       " (docs/INSPECTOR.md, \"Security\"): ask for less"));
      res.body.clear();
      res.body.shrink_to_fit();
    }
    if (!status.ok()) SendError(status, res);
  };
}

}  // namespace

void RegisterAdminApi(HttpRouter& http, const AdminApiOptions& options,
                      DecisionServiceImpl* service, RecentDecisions* recent,
                      ShadowEvaluator* shadow) {
  // The page: static, open (it asks for the token when the API wants one).
  http.Route("GET", "/", [](const HttpRequest&, HttpResponse& res) {
    res.Redirect("/ui/");
  });
  const std::vector<ApiRoute> api =
      ApiRoutes(service, recent, shadow, options.budget);
  if (!options.locked.empty()) {
    // Locked: the page and every API route say why, and nothing else.
    auto refuse = [locked = options.locked](const HttpRequest&,
                                            HttpResponse& res) {
      SendError(absl::PermissionDeniedError(locked), res);
    };
    http.Route("GET", "/ui/*", refuse);
    for (const ApiRoute& r : api) http.Route(r.method, r.pattern, refuse);
    return;
  }
  // The page needs no token (it asks for one when the API wants it).
  http.Route(
      "GET", "/ui/{asset}",
      [options](const HttpRequest& req, HttpResponse& res) {
        if (const absl::Status s = CheckCaller(req, options, Caller::kPage);
            !s.ok()) {
          SendError(s, res);
          return;
        }
        ServeUiAsset(req, res);
      });
  for (const ApiRoute& r : api) {
    http.Route(r.method, r.pattern,
               Guarded(options, std::string(r.method) == "POST", r.handler),
               r.lane);
  }
}

}  // namespace utilityd::server
