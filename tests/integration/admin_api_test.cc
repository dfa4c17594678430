// The inspector's HTTP/JSON API on the real utilityd: the same decisions
// and error texts as the gRPC path, what-if scoring of an edited set, the
// live feed of real traffic, the bearer token and switching it off.
#include "server/src/admin_api.h"

#include <grpcpp/create_channel.h>
#include <httplib.h>

#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/admin_server.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/base/decision_id.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/engine/definition.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_log.pb.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::utilityd::testing::IsOk;
using ::utilityd::testing::UtilitydProcess;

std::string ToJson(const google::protobuf::Message& m) {
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &json).ok());
  return json;
}

template <typename M>
M FromJson(const std::string& json) {
  M m;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &m);
  EXPECT_TRUE(status.ok()) << status.message() << "\n" << json;
  return m;
}

// The arena set's scenario as a request, from the example file.
v1::AgentSnapshot ArenaScenario(const std::string& name) {
  auto set = loader::LoadSetFile("examples/behaviour_sets/arena_mage.yaml");
  EXPECT_THAT(set, IsOk());
  for (const v1::Scenario& s : (*set)->definition.scenarios()) {
    if (s.name() == name) return codec::ScenarioSnapshot("arena_mage", s);
  }
  ADD_FAILURE() << "no scenario " << name;
  return {};
}

class AdminApiTest : public testing::AdminServerTest {};

TEST_F(AdminApiTest, SetsAreWhatGrpcLists) {
  Start();
  auto res = http_->Get("/api/v1/sets");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  auto listed = FromJson<v1::ListBehaviourSetsResponse>(res->body);
  grpc::ClientContext context;
  v1::ListBehaviourSetsResponse expected;
  ASSERT_TRUE(stub_->ListBehaviourSets(&context, {}, &expected).ok());
  EXPECT_EQ(ToJson(listed), ToJson(expected));

  res = http_->Get("/api/v1/sets/arena_mage");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  auto got = FromJson<v1::GetBehaviourSetResponse>(res->body);
  EXPECT_EQ(got.behaviour_set().name(), "arena_mage");
  EXPECT_EQ(expected.behaviour_sets(1).name(), "arena_mage");
  EXPECT_EQ(got.summary().revision(), expected.behaviour_sets(1).revision());
  EXPECT_GT(got.behaviour_set().scenarios_size(), 0);

  res = http_->Get("/api/v1/sets/arena_mag");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_THAT(res->body, HasSubstr("\"code\":\"NOT_FOUND\""));
  EXPECT_THAT(res->body, HasSubstr("did you mean"));
}

TEST_F(AdminApiTest, DecideMatchesTheGrpcPathWithFullExplanation) {
  Start();
  v1::DecideRequest request;
  *request.add_agents() = ArenaScenario("Staff empty, in cover");
  auto res = Post("/api/v1/decide", ToJson(request));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto http = FromJson<v1::DecideResponse>(res->body);
  ASSERT_EQ(http.decisions_size(), 1);
  const v1::Decision& d = http.decisions(0);
  EXPECT_EQ(d.action(), "recharge");
  // Explain defaults to full here: attack is there, vetoed by its charges.
  bool saw_attack = false;
  for (const auto& a : d.explanation().actions()) {
    if (a.action() != "attack") continue;
    saw_attack = true;
    EXPECT_TRUE(a.vetoed());
    EXPECT_EQ(a.vetoed_by(), "charges_left");
  }
  EXPECT_TRUE(saw_attack);

  request.set_explain(v1::EXPLAIN_FULL);
  grpc::ClientContext context;
  v1::DecideResponse grpc_response;
  ASSERT_TRUE(stub_->Decide(&context, request, &grpc_response).ok());
  // Identical but for the decision id, which only real traffic gets.
  grpc_response.mutable_decisions(0)->clear_decision_id();
  EXPECT_EQ(ToJson(http), ToJson(grpc_response));
}

TEST_F(AdminApiTest, BadInputGetsTheGrpcPathsErrorText) {
  Start({"--max_agents_per_request=2"});
  // Unreadable JSON: 400, naming line, column and field.
  auto res = Post("/api/v1/decide",
                  R"({"agents": [{"agentId": "a", "factor": [1]}]})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("agents[0].factor: unknown field"));
  res = Post("/api/v1/decide", "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);

  // Over the agent limit: the same text as gRPC's RESOURCE_EXHAUSTED.
  v1::DecideRequest request;
  for (int i = 0; i < 3; ++i)
    *request.add_agents() = ArenaScenario("Quiet arena");
  res = Post("/api/v1/decide", ToJson(request));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  grpc::ClientContext context;
  v1::DecideResponse ignored;
  const grpc::Status s = stub_->Decide(&context, request, &ignored);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(res->body, HasSubstr(s.error_message()));

  // A bad agent beside a good one: its own error, the same as gRPC's.
  request.clear_agents();
  *request.add_agents() = ArenaScenario("Quiet arena");
  *request.add_agents() = ArenaScenario("Quiet arena");
  request.mutable_agents(1)->clear_factors();
  request.mutable_agents(1)->add_factors(1);
  res = Post("/api/v1/decide", ToJson(request));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  auto http = FromJson<v1::DecideResponse>(res->body);
  grpc::ClientContext context2;
  v1::DecideResponse grpc_response;
  ASSERT_TRUE(stub_->Decide(&context2, request, &grpc_response).ok());
  EXPECT_FALSE(http.decisions(0).has_error());
  EXPECT_EQ(http.decisions(1).error().message(),
            grpc_response.decisions(1).error().message());
  // Named factors from the scenario plus one packed value: both forms.
  EXPECT_EQ(http.decisions(1).error().reason(), v1::ERROR_REASON_FACTOR_FORMS);
  EXPECT_EQ(http.decisions(1).error().field(), "agents[1].factors");
}

// The editor's curve kinds come from the engine's registry, under the
// format's JSON names and its YAML names, with their defaults.
TEST_F(AdminApiTest, CurvesListTheEnginesKindsWithDefaults) {
  Start();
  auto res = http_->Get("/api/v1/curves");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const auto curves = FromJson<google::protobuf::Struct>(res->body);
  const auto& kinds = curves.fields().at("kinds").list_value().values();
  ASSERT_EQ(static_cast<size_t>(kinds.size()), engine::AllCurveKinds().size());
  std::map<std::string, const google::protobuf::Struct*> by_name;
  for (const auto& k : kinds) {
    by_name[k.struct_value().fields().at("name").string_value()] =
        &k.struct_value();
  }
  ASSERT_TRUE(by_name.count("inverseQuadratic"));
  EXPECT_EQ(
      by_name["inverseQuadratic"]->fields().at("formatName").string_value(),
      "inverse_quadratic");
  ASSERT_TRUE(by_name.count("piecewiseLinear"));
  ASSERT_TRUE(by_name.count("logistic"));
  const auto& params =
      by_name["logistic"]->fields().at("params").list_value().values();
  ASSERT_EQ(params.size(), 3);
  const auto& steepness = params[0].struct_value().fields();
  EXPECT_EQ(steepness.at("name").string_value(), "steepness");
  EXPECT_EQ(steepness.at("formatName").string_value(), "steepness");
  EXPECT_EQ(steepness.at("type").string_value(), "number");
  EXPECT_EQ(steepness.at("default").number_value(),
            engine::CurveDefinition().steepness);
  EXPECT_EQ(params[2].struct_value().fields().at("type").string_value(),
            "flag");
  // The midpoint is a place on the input; the steepness is not.
  EXPECT_FALSE(steepness.at("onInput").bool_value());
  EXPECT_TRUE(params[1].struct_value().fields().at("onInput").bool_value());
}

// The curve editor's plot: a consideration's output across its factor as
// the engine computes it. food_near falls from 1 at 0 m to its floor 0.4 at
// 25 m (range 25..0, linear, output floor 0.4).
TEST_F(AdminApiTest, CurveIsTheEnginesOutputAcrossTheFactor) {
  Start();
  auto res = http_->Get("/api/v1/sets/eat_hide_wander");
  ASSERT_TRUE(res);
  const std::string set =
      ToJson(FromJson<v1::GetBehaviourSetResponse>(res->body).behaviour_set());
  res = Post("/api/v1/curve?action=eat&consideration=food_near&samples=6", set);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const auto curve = FromJson<google::protobuf::Struct>(res->body);
  EXPECT_EQ(curve.fields().at("factor").string_value(), "food_distance");
  EXPECT_EQ(curve.fields().at("from").number_value(), 0);
  EXPECT_EQ(curve.fields().at("to").number_value(), 25);
  const auto& points = curve.fields().at("points").list_value().values();
  ASSERT_EQ(points.size(), 6);
  for (int i = 0; i < 6; ++i) {
    const auto& p = points[i].list_value().values();
    EXPECT_DOUBLE_EQ(p[0].number_value(), 5.0 * i);
    EXPECT_NEAR(p[1].number_value(), 1.0 - 0.6 * (5.0 * i / 25.0), 1e-6);
  }
  res = Post("/api/v1/curve?action=eat&consideration=nope", set);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_THAT(res->body,
              HasSubstr("action eat has no consideration called nope"));
  res = Post("/api/v1/curve?action=eat&consideration=hunger&samples=1", set);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("samples: give 2 to 1001"));
}

// The inspector's other vocabularies come from the schema: every node kind
// the engine knows, under the format's name and its JSON name, and the
// compensations (COMPENSATION_UNSPECIFIED, which means the default, left
// out).
TEST_F(AdminApiTest, FormatListsTheNodeKindsAndCompensations) {
  Start();
  auto res = http_->Get("/api/v1/format");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const auto format = FromJson<google::protobuf::Struct>(res->body);
  std::map<std::string, std::string> kinds;  // name -> JSON name
  for (const auto& k : format.fields().at("nodeKinds").list_value().values()) {
    kinds[k.struct_value().fields().at("name").string_value()] =
        k.struct_value().fields().at("jsonName").string_value();
  }
  for (const engine::NodeKind k : engine::AllNodeKinds()) {
    const std::string name = engine::NodeKindName(k);
    EXPECT_TRUE(kinds.count(name)) << name;
  }
  EXPECT_EQ(kinds.size(), engine::AllNodeKinds().size());
  EXPECT_EQ(kinds.size(), static_cast<size_t>(engine::NodeKind::kLoop) + 1);
  EXPECT_FALSE(kinds.count("subtree"));
  EXPECT_EQ(kinds["reactive_fallback"], "reactiveFallback");
  EXPECT_EQ(kinds["keep_running_until_failure"], "keepRunningUntilFailure");
  std::vector<std::string> compensations;
  for (const auto& c :
       format.fields().at("compensations").list_value().values()) {
    compensations.push_back(c.string_value());
  }
  EXPECT_THAT(compensations,
              ::testing::ElementsAre(
                  "COMPENSATION_NONE", "COMPENSATION_PER_CONSIDERATION",
                  "COMPENSATION_ON_PRODUCT", "COMPENSATION_GEOMETRIC_MEAN"));
}

TEST_F(AdminApiTest, WhatIfScoresAnEditedSetWithoutStoringIt) {
  Start();
  auto res = http_->Get("/api/v1/sets/arena_mage");
  ASSERT_TRUE(res);
  v1::BehaviourSet set =
      FromJson<v1::GetBehaviourSetResponse>(res->body).behaviour_set();
  const std::string loaded_revision = set.revision();
  v1::AgentSnapshot agent = ArenaScenario("Staff empty, in cover");
  agent.clear_behaviour_set();  // scored with the edited set

  // Unedited, the what-if matches the loaded set.
  v1::WhatIfDecideRequest whatif;
  *whatif.mutable_behaviour_set() = set;
  *whatif.mutable_request()->add_agents() = agent;
  res = Post("/api/v1/whatif", ToJson(whatif));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto before = FromJson<v1::DecideResponse>(res->body);
  EXPECT_EQ(before.decisions(0).action(), "recharge");
  EXPECT_EQ(before.decisions(0).revision(), loaded_revision);

  // Halve recharge's weight: its score halves, and the revision differs.
  for (auto& a : *whatif.mutable_behaviour_set()->mutable_actions()) {
    if (a.name() == "recharge") a.set_weight(a.weight() * 0.5);
  }
  res = Post("/api/v1/whatif", ToJson(whatif));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto after = FromJson<v1::DecideResponse>(res->body);
  float recharge_before = 0, recharge_after = 0;
  for (const auto& a : before.decisions(0).explanation().actions())
    if (a.action() == "recharge") recharge_before = a.score();
  for (const auto& a : after.decisions(0).explanation().actions())
    if (a.action() == "recharge") recharge_after = a.score();
  EXPECT_GT(recharge_before, 0);
  EXPECT_NEAR(recharge_after, recharge_before * 0.5, 1e-5);
  EXPECT_NE(after.decisions(0).revision(), loaded_revision);

  // Nothing was stored: the loaded set is unchanged.
  res = http_->Get("/api/v1/sets/arena_mage");
  ASSERT_TRUE(res);
  EXPECT_EQ(
      FromJson<v1::GetBehaviourSetResponse>(res->body).summary().revision(),
      loaded_revision);

  // A broken edit: 400 naming the field.
  whatif.mutable_behaviour_set()
      ->mutable_actions(0)
      ->mutable_considerations(0)
      ->set_factor("helth");
  res = Post("/api/v1/whatif", ToJson(whatif));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("behaviourSet"));
  EXPECT_THAT(res->body, HasSubstr("helth"));
}

// Rows of a block enter the feed as the snapshots that decide the same:
// the entity id in decimal as the agent id, the row's factors by name, its
// running action, its decision id from the block's base, and the full
// breakdown the feed makes for every sampled decision.
TEST_F(AdminApiTest, RecentDecisionsShowBlockRows) {
  Start({"--recent_sample=1", "--recent_decisions=10"});
  auto set = loader::LoadSetFile("examples/behaviour_sets/arena_mage.yaml");
  ASSERT_THAT(set, IsOk());
  const engine::CompiledBehaviourSet& c = (*set)->compiled;
  v1::DecideRequest request;
  v1::AgentBlock* block = request.add_blocks();
  block->set_behaviour_set("arena_mage");
  block->set_layout(v1::FACTOR_LAYOUT_COLUMNS);
  const v1::AgentSnapshot rows[] = {ArenaScenario("Staff empty, in cover"),
                                    ArenaScenario("Quiet arena")};
  for (int f = 0; f < c.factor_count(); ++f) {
    for (const v1::AgentSnapshot& row : rows) {
      block->add_factors(row.named_factors().empty()
                             ? row.factors(f)
                             : row.named_factors().at(c.factors()[f].name));
    }
  }
  int attack = -1, patrol = -1;
  for (int a = 0; a < c.action_count(); ++a) {
    if (c.actions()[a].name == "attack") attack = a;
    if (c.actions()[a].name == "patrol") patrol = a;
  }
  block->add_agent_ids(9000000000042ull);
  block->add_agent_ids(43);
  block->add_current_action(attack);
  block->add_current_action(patrol);
  grpc::ClientContext context;
  v1::DecideResponse response;
  ASSERT_TRUE(stub_->Decide(&context, request, &response).ok());
  const v1::DecisionBlock& got = response.blocks(0);
  ASSERT_FALSE(got.has_error()) << got.error().message();

  auto res = http_->Get("/api/v1/decisions/recent");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto recent = FromJson<v1::RecentDecisionsResponse>(res->body);
  ASSERT_EQ(recent.decisions_size(), 2);
  EXPECT_EQ(recent.decisions(0).agent_id(), "43");  // newest first
  const v1::DecisionLogEntry& e = recent.decisions(1);
  EXPECT_EQ(e.agent_id(), "9000000000042");
  EXPECT_EQ(e.action(), c.actions()[got.action_index(0)].name);
  EXPECT_EQ(e.action(), "recharge");
  EXPECT_TRUE(e.switched());
  const std::array<char, 16> id =
      DecisionIdHex(DecisionId(got.decision_id_base(), 0));
  EXPECT_EQ(e.decision_id(), std::string(id.data(), id.size()));
  EXPECT_EQ(e.factors().at("charges"), 0);
  EXPECT_GT(e.explanation().actions_size(), 0);
}

TEST_F(AdminApiTest, RecentDecisionsShowRealTrafficAndFilter) {
  Start({"--recent_sample=1", "--recent_decisions=10"});
  v1::DecideRequest request;
  v1::AgentSnapshot cover = ArenaScenario("Staff empty, in cover");
  cover.set_agent_id("mage-7");
  cover.set_current_action("attack");
  *request.add_agents() = cover;
  v1::AgentSnapshot quiet = ArenaScenario("Quiet arena");
  quiet.set_agent_id("mage-8");
  quiet.set_current_action("patrol");  // and patrol it does: no switch
  *request.add_agents() = quiet;
  grpc::ClientContext context;
  v1::DecideResponse response;
  ASSERT_TRUE(stub_->Decide(&context, request, &response).ok());

  auto res = http_->Get("/api/v1/decisions/recent");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto recent = FromJson<v1::RecentDecisionsResponse>(res->body);
  ASSERT_EQ(recent.decisions_size(), 2);
  // Newest first; each carries its snapshot and breakdown.
  EXPECT_EQ(recent.decisions(0).agent_id(), "mage-8");
  const v1::DecisionLogEntry& e = recent.decisions(1);
  EXPECT_EQ(e.agent_id(), "mage-7");
  EXPECT_EQ(e.action(), "recharge");
  EXPECT_TRUE(e.switched());
  EXPECT_EQ(e.decision_id(), response.decisions(0).decision_id());
  EXPECT_EQ(e.factors().at("charges"), 0);
  EXPECT_GT(e.explanation().actions_size(), 0);

  res = http_->Get("/api/v1/decisions/recent?switched=true&set=arena_mage");
  ASSERT_TRUE(res);
  recent = FromJson<v1::RecentDecisionsResponse>(res->body);
  ASSERT_EQ(recent.decisions_size(), 1);
  EXPECT_EQ(recent.decisions(0).agent_id(), "mage-7");
  res = http_->Get("/api/v1/decisions/recent?action=nothing");
  ASSERT_TRUE(res);
  EXPECT_EQ(FromJson<v1::RecentDecisionsResponse>(res->body).decisions_size(),
            0);
  // The inspector's own calls do not enter the feed.
  ASSERT_TRUE(Post("/api/v1/decide", ToJson(request)));
  res = http_->Get("/api/v1/decisions/recent");
  ASSERT_TRUE(res);
  EXPECT_EQ(FromJson<v1::RecentDecisionsResponse>(res->body).decisions_size(),
            2);
  res = http_->Get("/api/v1/decisions/recent?limit=0");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

TEST_F(AdminApiTest, TokenGuardsTheApiButNotProbesOrMetrics) {
  testing::TempDir dir("utilityd_token");
  const std::string file = (dir.path() / "token").string();
  std::ofstream(file) << "s3cret-token\n";
  Start({"--admin_token_file=" + file});
  auto res = http_->Get("/api/v1/sets");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"),
            "Bearer realm=\"utilityd\"");
  EXPECT_EQ(Post("/api/v1/whatif", "{}")->status, 401);
  httplib::Headers wrong = {{"Authorization", "Bearer s3cret-tokem"}};
  EXPECT_EQ(http_->Get("/api/v1/sets", wrong)->status, 401);
  httplib::Headers right = {{"Authorization", "Bearer s3cret-token"}};
  EXPECT_EQ(http_->Get("/api/v1/sets", right)->status, 200);
  EXPECT_EQ(http_->Get("/api/v1/decisions/recent", right)->status, 200);
  EXPECT_EQ(http_->Get("/metrics")->status, 200);
  EXPECT_EQ(http_->Get("/readyz")->status, 200);
  EXPECT_EQ(http_->Get("/api/v1/status")->status, 200);
}

TEST_F(AdminApiTest, InspectorOffLeavesOnlyMetricsAndProbes) {
  Start({"--inspector=false"});
  EXPECT_EQ(http_->Get("/api/v1/sets")->status, 404);
  EXPECT_EQ(Post("/api/v1/decide", "{}")->status, 404);
  EXPECT_EQ(http_->Get("/metrics")->status, 200);
  EXPECT_EQ(http_->Get("/api/v1/status")->status, 200);
}

// Secure by default: on an address other hosts can reach, an inspector
// without a token is locked (403 naming the flags) while metrics and probes
// stay open; a token, or the explicit insecure opt-out, opens it.
TEST_F(AdminApiTest, ReachableAddressWithoutATokenLocksTheInspector) {
  Start({"--http_address=0.0.0.0:0"});
  auto sets = http_->Get("/api/v1/sets");
  ASSERT_TRUE(sets);
  EXPECT_EQ(sets->status, 403);
  EXPECT_THAT(sets->body, HasSubstr("--admin_token"));
  EXPECT_THAT(sets->body, HasSubstr("--inspector_insecure_no_token"));
  EXPECT_EQ(http_->Get("/ui/")->status, 403);
  EXPECT_EQ(http_->Get("/api/v1/decisions/recent")->status, 403);
  EXPECT_EQ(Post("/api/v1/decide", "{}")->status, 403);
  EXPECT_EQ(Post("/api/v1/whatif", "{}")->status, 403);
  EXPECT_EQ(http_->Get("/metrics")->status, 200);
  EXPECT_EQ(http_->Get("/healthz")->status, 200);
  EXPECT_EQ(http_->Get("/readyz")->status, 200);
  EXPECT_THAT(server_->Log(), HasSubstr("event=inspector_locked"));
}

TEST_F(AdminApiTest, ReachableAddressWithATokenRequiresIt) {
  Start({"--http_address=0.0.0.0:0", "--admin_token=s3cret"});
  EXPECT_EQ(http_->Get("/api/v1/sets")->status, 401);
  httplib::Headers auth = {{"Authorization", "Bearer s3cret"}};
  EXPECT_EQ(http_->Get("/api/v1/sets", auth)->status, 200);
  EXPECT_EQ(http_->Get("/ui/")->status, 200);  // it asks for the token
  EXPECT_THAT(server_->Log(), Not(HasSubstr("inspector_locked")));
}

TEST_F(AdminApiTest, InsecureOptOutOpensTheInspectorWithAWarning) {
  Start({"--http_address=0.0.0.0:0", "--inspector_insecure_no_token"});
  EXPECT_EQ(http_->Get("/api/v1/sets")->status, 200);
  EXPECT_THAT(server_->Log(), HasSubstr("event=inspector_insecure"));
}

TEST_F(AdminApiTest, OversizedBodyIsRefusedWith413) {
  Start();
  auto res = Post("/api/v1/decide", std::string((16 << 20) + 1, ' '));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(http_->Get("/healthz")->status, 200);
}

TEST_F(AdminApiTest, LoopbackNeedsNoToken) {
  Start();
  EXPECT_EQ(http_->Get("/api/v1/sets")->status, 200);
  EXPECT_THAT(server_->Log(), Not(HasSubstr("inspector_locked")));
  EXPECT_THAT(server_->Log(), Not(HasSubstr("inspector_insecure")));
}

TEST(AdminAddressTest, LoopbackHostsAreTheOnlyLocalOnes) {
  for (const char* local :
       {"127.0.0.1:8080", "127.1.2.3:0", "localhost:8080", "[::1]:8080"}) {
    EXPECT_TRUE(server::IsLoopbackAddress(local)) << local;
  }
  for (const char* reachable :
       {"0.0.0.0:8080", "[::]:8080", ":8080", "10.0.0.5:8080",
        "example.com:8080", "127.example.com:8080"}) {
    EXPECT_FALSE(server::IsLoopbackAddress(reachable)) << reachable;
  }
}

}  // namespace
}  // namespace utilityd
