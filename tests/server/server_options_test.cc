// ServerOptions::Validate, the one check of the server's options (the flags
// only read them), and the DecisionServiceImpl example of its header.
#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/src/config_store.h"
#include "server/src/decision_service.h"
#include "server/src/server.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/engine/curve.h"

namespace utilityd::server {
namespace {

using ::testing::HasSubstr;

TEST(ServerOptionsTest, TheDefaultsAreValid) {
  EXPECT_TRUE(ServerOptions().Validate().ok());
}

TEST(ServerOptionsTest, EachOptionOutOfRangeIsRefusedNamingItsFlag) {
  struct Case {
    const char* flag;
    std::function<void(ServerOptions&)> spoil;
  };
  const Case cases[] = {
      {"--http_max_connections",
       [](ServerOptions& o) { o.http_limits.max_connections = 0; }},
      {"--http_max_connections_per_address",
       [](ServerOptions& o) { o.http_limits.max_per_address = 0; }},
      {"--http_idle_timeout",
       [](ServerOptions& o) {
         o.http_limits.idle_timeout = absl::Milliseconds(10);
       }},
      {"--workers", [](ServerOptions& o) { o.service.queue.workers = -1; }},
      {"--max_queued_agents",
       [](ServerOptions& o) { o.service.queue.max_agents = -1; }},
      {"--max_queued_bytes",
       [](ServerOptions& o) { o.service.queue.max_bytes = -1; }},
      {"--max_memory_bytes", [](ServerOptions& o) { o.max_memory_bytes = -1; }},
      {"--max_concurrent_streams",
       [](ServerOptions& o) { o.max_concurrent_streams = -1; }},
      {"--max_agents_per_request",
       [](ServerOptions& o) { o.service.max_agents_per_request = 0; }},
      {"--max_targets_per_request",
       [](ServerOptions& o) { o.service.max_targets_per_request = -1; }},
      {"--max_pools_per_request",
       [](ServerOptions& o) { o.service.max_pools_per_request = -1; }},
      {"--max_holders_per_request",
       [](ServerOptions& o) { o.service.max_holders_per_request = -1; }},
      {"--max_message_bytes",
       [](ServerOptions& o) { o.max_message_bytes = 1023; }},
      {"--recent_sample", [](ServerOptions& o) { o.recent_sample = 1.5; }},
      {"--recent_sample", [](ServerOptions& o) { o.recent_sample = -0.1; }},
      {"--recent_max_per_second",
       [](ServerOptions& o) { o.recent_max_per_second = -1; }},
      {"--simd_target", [](ServerOptions& o) { o.simd_target = "NEON9"; }},
  };
  for (const Case& c : cases) {
    ServerOptions options;
    c.spoil(options);
    const absl::Status s = options.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.flag;
    EXPECT_THAT(s.message(), HasSubstr(c.flag));
  }
}

TEST(ServerOptionsTest, EverySimdTargetThisCpuRunsIsAccepted) {
  ServerOptions options;
  for (const std::string& t : engine::AvailableSimdTargets()) {
    options.simd_target = t;
    EXPECT_TRUE(options.Validate().ok()) << t;
  }
  options.simd_target = "BEST";
  EXPECT_TRUE(options.Validate().ok());
  options.simd_target = "NEON9";
  EXPECT_THAT(options.Validate().message(),
              HasSubstr(engine::AvailableSimdTargets().front()));
}

TEST(ServerOptionsTest, StartRefusesOptionsThatDoNotValidate) {
  ServerOptions options;
  options.config_dir = "examples/behaviour_sets";
  options.grpc_address = "127.0.0.1:0";
  options.http_address = "";
  options.service.max_agents_per_request = 0;
  const auto server = UtilitydServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("--max_agents_per_request"));
}

// decision_service.h's example, as written there, decides a batch.
TEST(DecisionServiceExampleTest, TheHeaderExampleDecides) {
  ConfigStore store("examples/behaviour_sets");
  ASSERT_TRUE(store.Reload().ok());
  prometheus::Registry registry;
  ServiceMetrics metrics(&registry);
  DecisionServiceImpl service(&store, {.max_agents_per_request = 10000},
                              &metrics);
  // A scenario of the set, whose winner the set names, as the agent.
  const auto set = store.Current()->catalog.Find("villager_needs");
  ASSERT_NE(set, nullptr);
  const v1::Scenario* scenario = nullptr;
  for (const v1::Scenario& sc : set->definition.scenarios()) {
    if (!sc.expected_action().empty()) scenario = &sc;
  }
  ASSERT_NE(scenario, nullptr);
  v1::DecideRequest request;
  *request.add_agents() = codec::ScenarioSnapshot(set->name(), *scenario);
  v1::DecideResponse response;
  ASSERT_TRUE(service.DecideBatch(request, &response).ok());
  ASSERT_EQ(response.decisions_size(), 1);
  EXPECT_EQ(response.decisions(0).action(), scenario->expected_action());
  EXPECT_EQ(response.decisions(0).decision_id().size(), 16u);
}

}  // namespace
}  // namespace utilityd::server
