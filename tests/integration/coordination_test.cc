// Coordination end to end: the real utilityd, the real simulator's goblin
// world (examples/sim, arena_goblin.yaml: six goblins to a mage, two
// attack tokens per mage). With tokens, never more than two goblins attack
// one mage, tick after tick, and the tokens are used; offering a token per
// goblin lets them crowd in. Two replicas answer the same batch
// identically (any replica answers any batch). A decision log of the
// goblins replays with no churn against the unchanged sets: replay compares
// each agent's own decision, before allocation, which the log keeps.
#include <csignal>
#include <regex>
#include <sstream>

#include "ctl/commands.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "tests/testing/child_process.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/v1/decision_service.grpc.pb.h"
#include "utilityd/v1/replay.pb.h"

namespace utilityd {
namespace {

using ::utilityd::testing::IsOk;

struct Attackers {
  double mean = 0;
  int max = 0;
};

// Runs the goblin world for 40 simulated seconds; returns its attackers
// per mage from the final line.
Attackers RunGoblinsFor(const std::string& target, bool tokens,
                        const testing::TempDir& dir,
                        const std::string& duration);

Attackers RunGoblins(const std::string& target, bool tokens,
                     const testing::TempDir& dir) {
  return RunGoblinsFor(target, tokens, dir, "40s");
}

Attackers RunGoblinsFor(const std::string& target, bool tokens,
                        const testing::TempDir& dir,
                        const std::string& duration) {
  const std::string log =
      (dir.path() / (tokens ? "tokens.log" : "free.log")).string();
  auto sim = testing::SpawnProcess(
      {UTILITYD_SIM_BINARY, "--target=" + target, "--world=goblins",
       "--agents=36", "--duration=" + duration, "--realtime=false",
       "--report_every=100s", tokens ? "--tokens=true" : "--tokens=false"},
      log);
  EXPECT_THAT(sim.status(), IsOk());
  if (!sim.ok()) return {};
  EXPECT_EQ(testing::WaitProcess(*sim, absl::Seconds(120)), 0)
      << testing::ReadWholeFile(log);
  const std::string out = testing::ReadWholeFile(log);
  std::smatch m;
  static const std::regex kLine(
      "final:.*attackers/mage mean=([0-9.]+) max=([0-9]+)");
  EXPECT_TRUE(std::regex_search(out, m, kLine)) << out;
  if (m.empty()) return {};
  return {std::stod(m[1]), std::stoi(m[2])};
}

TEST(CoordinationIntegrationTest, TokensCapAttackersPerMageInTheSimulator) {
  testing::TempDir dir("utilityd_coordination");
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets"});
  ASSERT_THAT(server.StartServing(), IsOk());
  const Attackers with = RunGoblins(server.address(), true, dir);
  const Attackers without = RunGoblins(server.address(), false, dir);
  // Two tokens per mage: never more than two attackers, and the tokens
  // are in use most of the time.
  EXPECT_LE(with.max, 2);
  EXPECT_GT(with.mean, 1.0);
  // Without the limit the goblins crowd in.
  EXPECT_GT(without.max, 2);
  EXPECT_GT(without.mean, with.mean);
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(), 0) << server.Log();
}

TEST(CoordinationIntegrationTest,
     ALogOfCoordinatedDecisionsReplaysWithoutChurn) {
  testing::TempDir dir("utilityd_coordination_log");
  const std::string log = (dir.path() / "decisions.bin").string();
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                                   "--decision_log=" + log,
                                   "--decision_log_format=binary"});
  ASSERT_THAT(server.StartServing(), IsOk());
  const Attackers with = RunGoblinsFor(server.address(), true, dir, "10s");
  EXPECT_LE(with.max, 2);
  server.Signal(SIGTERM);  // writes what is queued
  ASSERT_EQ(server.Wait(), 0) << server.Log();

  std::ostringstream out, err;
  const int code = ctl::RunUtilityctl(
      {"replay", "--format", "json", "--log", log, "--candidate",
       "examples/behaviour_sets", "--max_churn", "0"},
      out, err);
  EXPECT_EQ(code, 0) << err.str();
  v1::ReplayReport report;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(out.str(), &report).ok())
      << out.str() << err.str();
  // 36 goblins x 10 Hz x 10 s, and the tick at 0; many of them denied.
  EXPECT_GE(report.replayed(), 3600);
  EXPECT_EQ(report.flipped(), 0);
}

TEST(CoordinationIntegrationTest, TwoReplicasAllocateABatchIdentically) {
  v1::DecideRequest request;
  for (int i = 0; i < 12; ++i) {
    v1::AgentSnapshot* a = request.add_agents();
    a->set_agent_id("goblin-" + std::to_string(i));
    a->set_behaviour_set("arena_goblin");
    (*a->mutable_named_factors())["health"] = 10.0f + i;
    (*a->mutable_named_factors())["courage"] = 0.9f;
    for (int m = 0; m < 3; ++m) {
      v1::TargetSnapshot* t = a->add_targets();
      t->set_target_id("mage-" + std::to_string(m));
      (*t->mutable_named_factors())["distance"] = 1.0f + (i * 7 + m * 5) % 13;
      (*t->mutable_named_factors())["mage_health"] = 40.0f + 20 * m;
    }
  }
  v1::ResourcePool* pool = request.add_pools();
  pool->set_resource("attack_token");
  pool->set_target_id("mage-1");
  pool->add_holders()->set_agent_id("goblin-7");
  request.set_explain(v1::EXPLAIN_TOP);

  std::vector<std::string> answers;
  for (int replica = 0; replica < 2; ++replica) {
    testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets"});
    ASSERT_THAT(server.StartServing(), IsOk());
    auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
        server.address(), grpc::InsecureChannelCredentials()));
    for (int run = 0; run < 2; ++run) {
      grpc::ClientContext context;
      v1::DecideResponse response;
      ASSERT_TRUE(stub->Decide(&context, request, &response).ok());
      int attackers[3] = {};
      for (v1::Decision& d : *response.mutable_decisions()) {
        ASSERT_FALSE(d.has_error()) << d.error().message();
        if (d.action() == "attack") {
          ++attackers[d.target_id().back() - '0'];
        }
        d.clear_decision_id();  // per replica by design
      }
      for (int n : attackers) EXPECT_LE(n, 2);
      answers.push_back(response.SerializeAsString());
    }
    server.Signal(SIGTERM);
    EXPECT_EQ(server.Wait(), 0);
  }
  for (const std::string& a : answers) EXPECT_EQ(a, answers[0]);
}

}  // namespace
}  // namespace utilityd
