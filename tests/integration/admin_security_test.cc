// The admin endpoint against an attacker on the network, on the real
// utilityd (docs/INSPECTOR.md, "Security"): requests that once crashed the
// process or took its memory, a page on another site reaching the API by
// DNS rebinding or a cross-site request, and framing. Each test sends the
// request as found, then checks the process still answers.
#include <grpcpp/create_channel.h>
#include <httplib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/admin_server.h"
#include "tests/testing/sanitizers.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd {
namespace {

using ::testing::HasSubstr;

class AdminSecurityTest : public testing::AdminServerTest {
 protected:
  // The process answers both ports: the probe, and a gRPC decision.
  void ExpectAlive() {
    ASSERT_TRUE(server_->running());
    auto probe = http_->Get("/healthz");
    ASSERT_TRUE(probe) << "the admin port does not answer";
    EXPECT_EQ(probe->status, 200);
    EXPECT_EQ(server_->Health(), "SERVING");
    v1::DecideRequest request;
    v1::AgentSnapshot* agent = request.add_agents();
    agent->set_behaviour_set("eat_hide_wander");
    for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) agent->add_factors(v);
    v1::DecideResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Decide(&context, request, &response).ok());
    ASSERT_EQ(response.decisions_size(), 1);
    EXPECT_FALSE(response.decisions(0).has_error());
  }
};

TEST_F(AdminSecurityTest, ALongPathIsRefusedWith414AndTheServerLives) {
  Start();
  const std::string long_name(30000, 'a');
  for (const std::string& path :
       {"/ui/" + long_name, "/api/v1/sets/" + long_name,
        "/metrics/" + long_name, "/" + long_name}) {
    auto res = http_->Get(path);
    ASSERT_TRUE(res) << "no answer: the process died";
    EXPECT_EQ(res->status, 414);
    ExpectAlive();
  }
  // Just under the limit: routed as usual.
  auto res = http_->Get("/api/v1/sets/" + std::string(2000, 'a'));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

TEST_F(AdminSecurityTest, ALongPathBeforeTheTokenCheckIsRefusedToo) {
  Start({"--admin_token=s3cret"});
  auto res = http_->Get("/ui/" + std::string(30000, 'a'));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 414);
  ExpectAlive();
}

TEST_F(AdminSecurityTest, ALockedInspectorRefusesALongPathToo) {
  Start({"--http_address=0.0.0.0:0"});
  http_ = std::make_unique<httplib::Client>("127.0.0.1", server_->http_port());
  auto res = http_->Get("/api/v1/sets/" + std::string(30000, 'a'));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 414);
  ExpectAlive();
}

// A set of `actions` x `considerations`, each reading its own factor of 64.
std::string WideSetJson(int actions, int considerations) {
  std::string json = R"({"name":"wide","factors":[)";
  for (int f = 0; f < 64; ++f) {
    absl::StrAppend(&json, f ? "," : "", R"({"name":"f)", f, R"("})");
  }
  json += R"(],"actions":[)";
  for (int a = 0; a < actions; ++a) {
    absl::StrAppend(&json, a ? "," : "", R"({"name":"a)", a,
                    R"(","considerations":[)");
    for (int c = 0; c < considerations; ++c) {
      absl::StrAppend(&json, c ? "," : "", R"({"name":"c)", c,
                      R"(","factor":"f)", c % 64, R"("})");
    }
    json += "]}";
  }
  return json + "]}";
}

// {"f0": value, ..., "f63": value}
std::string AllFactors(double value) {
  std::string json = "{";
  for (int f = 0; f < 64; ++f) {
    absl::StrAppend(&json, f ? "," : "", "\"f", f, "\":", value);
  }
  return json + "}";
}

std::string WhatIfBody(const std::string& set, int agents) {
  std::string json = R"({"behaviourSet":)" + set + R"(,"request":{"agents":[)";
  for (int i = 0; i < agents; ++i) {
    absl::StrAppend(&json, i ? "," : "", R"({"factors":[)");
    for (int f = 0; f < 64; ++f) absl::StrAppend(&json, f ? "," : "", "0.5");
    json += "]}";
  }
  return json + "]}}";
}

TEST_F(AdminSecurityTest, AWhatIfOverTheBudgetIsRefusedBeforeItTakesMemory) {
  Start();
  // As found: 512 actions x 64 considerations, 2, 8 and 200 agents (then
  // 317 MiB, 1,123 MiB and the OOM killer). Over the body limit now: the
  // set alone would cost 85 MiB to parse.
  const std::string found = WideSetJson(512, 64);
  for (int agents : {2, 8, 200}) {
    auto res = http_->Post("/api/v1/whatif", WhatIfBody(found, agents),
                           "application/json");
    ASSERT_TRUE(res) << agents << " agents: no answer";
    EXPECT_EQ(res->status, 413) << res->body;
    EXPECT_THAT(res->body, HasSubstr("--http_max_body_bytes"));
  }
  // Under the body limit, 200 x 64: 4 agents would explain 52,000
  // considerations, 8 twice that.
  const std::string set = WideSetJson(200, 64);
  for (int agents : {4, 8}) {
    const std::string body = WhatIfBody(set, agents);
    ASSERT_LT(body.size(), 512u << 10);
    auto res = http_->Post("/api/v1/whatif", body, "application/json");
    ASSERT_TRUE(res) << agents << " agents: no answer";
    EXPECT_EQ(res->status, 413) << res->body.substr(0, 300);
    EXPECT_THAT(res->body, HasSubstr("budget"));
    EXPECT_THAT(res->body, HasSubstr("explain"));
  }
  // Three agents' 39,000 explained considerations fit.
  auto one =
      http_->Post("/api/v1/whatif", WhatIfBody(set, 3), "application/json");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200) << one->body.substr(0, 300);
  // Parsing, scoring and printing all of that stays small. (Not asserted
  // under AddressSanitizer, whose shadow memory and quarantine are not
  // utilityd's.)
#ifndef UTILITYD_TESTING_ASAN
  EXPECT_LT(server_->MemoryMiB("VmHWM"), 200);
#endif
  ExpectAlive();
  // Explaining less fits more agents: 8 at explain none.
  std::string body = WhatIfBody(set, 8);
  body.insert(body.size() - 2, R"(,"explain":"EXPLAIN_NONE")");
  auto res = http_->Post("/api/v1/whatif", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body.substr(0, 500);
}

TEST_F(AdminSecurityTest, AnalysisAndTuneOverTheBudgetAreRefused) {
  Start();
  const std::string set = WideSetJson(200, 64);
  auto analysis = http_->Post(
      "/api/v1/analysis", R"({"behaviourSet":)" + set + R"(,"samples":100000})",
      "application/json");
  ASSERT_TRUE(analysis);
  EXPECT_EQ(analysis->status, 413) << analysis->body;
  EXPECT_THAT(analysis->body, HasSubstr("budget"));
  // Tune: ten scenarios x 200 actions x 13,000 considerations.
  std::string scenarios;
  for (int i = 0; i < 10; ++i) {
    absl::StrAppend(&scenarios, i ? "," : "", R"({"name":"s)", i,
                    R"(","factors":)", AllFactors(0.1 * i),
                    R"(,"expectedAction":"a)", i, "\"}");
  }
  std::string with_scenarios = set;
  with_scenarios.insert(with_scenarios.size() - 1,
                        R"(,"scenarios":[)" + scenarios + "]");
  auto tune =
      http_->Post("/api/v1/tune", R"({"behaviourSet":)" + with_scenarios + "}",
                  "application/json");
  ASSERT_TRUE(tune);
  EXPECT_EQ(tune->status, 413) << tune->body.substr(0, 300);
  EXPECT_THAT(tune->body, HasSubstr("budget"));
  ExpectAlive();
}

TEST_F(AdminSecurityTest, WithoutATokenOnlyLoopbackHostsAreAnswered) {
  Start();
  const httplib::Headers rebound = {{"Host", "rebind.attacker.example:8080"}};
  for (const char* path :
       {"/api/v1/decisions/recent", "/api/v1/sets", "/ui/", "/ui/app.js"}) {
    auto res = http_->Get(path, rebound);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403) << path;
    EXPECT_THAT(res->body, HasSubstr("--admin_allowed_hosts")) << path;
  }
  for (const char* host : {"localhost:8080", "127.0.0.1", "[::1]:1234"}) {
    auto res = http_->Get("/api/v1/sets", {{"Host", host}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << host;
  }
  // Probes and metrics answer whatever the Host (kubelet and Prometheus
  // name the pod's address).
  EXPECT_EQ(http_->Get("/metrics", rebound)->status, 200);
  EXPECT_EQ(http_->Get("/readyz", rebound)->status, 200);
}

TEST_F(AdminSecurityTest, AnOperatorListsMoreHosts) {
  Start({"--admin_allowed_hosts=inspector.internal,tunnel:9000"});
  EXPECT_EQ(
      http_->Get("/api/v1/sets", {{"Host", "inspector.internal:8080"}})->status,
      200);
  EXPECT_EQ(http_->Get("/api/v1/sets", {{"Host", "tunnel:9000"}})->status, 200);
  EXPECT_EQ(http_->Get("/api/v1/sets", {{"Host", "tunnel:9001"}})->status, 403);
  EXPECT_EQ(http_->Get("/api/v1/sets", {{"Host", "other.internal"}})->status,
            403);
}

TEST_F(AdminSecurityTest, ATokenMakesTheHostIrrelevant) {
  Start({"--admin_token=s3cret"});
  auto res = http_->Get("/api/v1/sets", {{"Host", "utilityd.prod:8080"},
                                         {"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(AdminSecurityTest, CrossSiteRequestsAreRefusedBeforeTheWork) {
  Start();
  const std::string analysis =
      R"({"behaviourSet":{"name":"x","factors":[{"name":"f"}],)"
      R"("actions":[{"name":"a","considerations":[{"name":"c","factor":"f"}]}]},)"
      R"("samples":1000})";
  // As found: a simple request from another origin, text/plain.
  auto res =
      http_->Post("/api/v1/analysis", {{"Origin", "http://evil.example"}},
                  analysis, "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  EXPECT_THAT(res->body, HasSubstr("evil.example"));
  // A form or text/plain body from no origin at all: 415.
  res = http_->Post("/api/v1/analysis", analysis, "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415) << res->body;
  res =
      http_->Post("/api/v1/decide", "{}", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415);
  // Fetch metadata: a cross-site or same-site request is refused.
  for (const char* site : {"cross-site", "same-site"}) {
    res = http_->Post("/api/v1/analysis", {{"Sec-Fetch-Site", site}}, analysis,
                      "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403) << site;
  }
  // The page's own requests: same origin, JSON.
  const std::string self =
      absl::StrCat("http://127.0.0.1:", server_->http_port());
  res = http_->Post("/api/v1/analysis",
                    {{"Origin", self}, {"Sec-Fetch-Site", "same-origin"}},
                    analysis, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  // A link from another site to the page opens it (it does nothing
  // until it calls the API from its own origin).
  res = http_->Get("/ui/", {{"Sec-Fetch-Site", "cross-site"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  // A cross-origin GET of the feed is refused.
  res = http_->Get("/api/v1/decisions/recent",
                   {{"Origin", "http://evil.example"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
}

TEST_F(AdminSecurityTest, ThePageCannotBeFramed) {
  Start();
  for (const char* path : {"/ui/", "/ui/app.js"}) {
    auto res = http_->Get(path);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
    EXPECT_THAT(res->get_header_value("Content-Security-Policy"),
                HasSubstr("frame-ancestors 'none'"));
    EXPECT_EQ(res->get_header_value("X-Frame-Options"), "DENY");
  }
}

}  // namespace
}  // namespace utilityd
