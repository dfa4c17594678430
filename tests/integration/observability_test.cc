// The real utilityd's HTTP admin endpoint: metrics after real traffic, a
// clean promtool lint of a live scrape, health and status.
#include <grpcpp/create_channel.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "ctl/commands.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/exposition.h"
#include "tests/testing/goblins.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/engine/curve.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/v1/decision_log.pb.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using testing::SampleLabels;

// `more`, with the labels of set `name`'s live decisions.
SampleLabels LiveSet(const std::string& name, SampleLabels more) {
  more["behaviour_set"] = name;
  more["variant"] = "live";
  return more;
}
using ::utilityd::testing::IsOk;

v1::AgentSnapshot Forager(float hunger, float danger) {
  v1::AgentSnapshot a;
  a.set_agent_id("f");
  a.set_behaviour_set("eat_hide_wander");
  for (float v : {hunger, danger, 5.0f, 2.0f}) a.add_factors(v);
  return a;
}

class ObservabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::UtilitydProcess>(
        std::vector<std::string>{"--config_dir=examples/behaviour_sets"});
    ASSERT_THAT(server_->StartServing(), IsOk());
    ASSERT_GT(server_->http_port(), 0);
    http_ =
        std::make_unique<httplib::Client>("127.0.0.1", server_->http_port());
    stub_ = v1::DecisionService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  std::string Get(const std::string& path, int* status = nullptr) {
    auto res = http_->Get(path);
    EXPECT_TRUE(res) << path;
    if (!res) return "";
    if (status != nullptr) *status = res->status;
    return res->body;
  }

  // Each snapshot of `request` as a block of one row (entity id i + 1).
  static void AsBlocks(v1::DecideRequest* request) {
    const std::vector<std::string> actions = {"eat", "hide", "wander"};
    for (int i = 0; i < request->agents_size(); ++i) {
      const v1::AgentSnapshot& a = request->agents(i);
      v1::AgentBlock* b = request->add_blocks();
      b->set_behaviour_set(a.behaviour_set());
      b->add_agent_ids(i + 1);
      *b->mutable_factors() = a.factors();
      if (!a.current_action().empty()) {
        b->add_current_action(static_cast<int>(
            std::find(actions.begin(), actions.end(), a.current_action()) -
            actions.begin()));
      }
    }
    request->clear_agents();
  }

  // The traffic in one of three forms: full, compact, or blocks (form
  // unspecified, every agent a block row).
  void Traffic(v1::DecisionForm form = v1::DECISION_FORM_FULL,
               bool blocks = false) {
    // Unary: two good agents (one switches), one unknown set, one NaN.
    v1::DecideRequest request;
    request.set_form(form);
    v1::AgentSnapshot eat = Forager(0.8f, 0.1f);
    eat.set_current_action("wander");
    *request.add_agents() = eat;
    *request.add_agents() = Forager(0.8f, 0.95f);
    v1::AgentSnapshot unknown = Forager(0.1f, 0.1f);
    unknown.set_behaviour_set("attacker-chosen-name");
    *request.add_agents() = unknown;
    v1::AgentSnapshot nan = Forager(0.5f, 0.1f);
    nan.set_factors(1, NAN);
    *request.add_agents() = nan;
    if (blocks) AsBlocks(&request);
    grpc::ClientContext context;
    v1::DecideResponse response;
    ASSERT_TRUE(stub_->Decide(&context, request, &response).ok());
    if (blocks) {
      EXPECT_EQ(response.blocks_size(), 4);
      EXPECT_TRUE(response.blocks(2).has_error());  // the unknown set
    }
    // A stream of three batches.
    grpc::ClientContext stream_context;
    auto stream = stub_->DecideStream(&stream_context);
    for (int i = 1; i <= 3; ++i) {
      v1::DecideRequest batch;
      batch.set_request_id(i);
      batch.set_form(form);
      *batch.add_agents() = Forager(0.1f, 0.05f);
      if (blocks) AsBlocks(&batch);
      ASSERT_TRUE(stream->Write(batch));
      ASSERT_TRUE(stream->Read(&response));
    }
    stream->WritesDone();
    ASSERT_TRUE(stream->Finish().ok());
  }

  std::unique_ptr<testing::UtilitydProcess> server_;
  std::unique_ptr<httplib::Client> http_;
  std::unique_ptr<v1::DecisionService::Stub> stub_;
};

// The same counts whichever form the decisions travel in: metrics are
// counted per batch from the engine's outcomes, before the answer is packed.
enum class Wire { kFull, kCompact, kBlocks };

class MetricsFormTest : public ObservabilityTest,
                        public ::testing::WithParamInterface<Wire> {};

INSTANTIATE_TEST_SUITE_P(Forms, MetricsFormTest,
                         ::testing::Values(Wire::kFull, Wire::kCompact,
                                           Wire::kBlocks),
                         [](const auto& p) {
                           return std::string(p.param == Wire::kFull ? "Full"
                                              : p.param == Wire::kCompact
                                                  ? "Compact"
                                                  : "Blocks");
                         });

TEST_P(MetricsFormTest, MetricsCountRealTraffic) {
  Traffic(GetParam() == Wire::kCompact ? v1::DECISION_FORM_COMPACT
                                       : v1::DECISION_FORM_FULL,
          GetParam() == Wire::kBlocks);
  // The server ends a stream's call (and decrements the gauge) just after
  // the client sees it finish: wait for it.
  std::string m = Get("/metrics");
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (m.find("utilityd_active_streams 0\n") == std::string::npos &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
    m = Get("/metrics");
  }
  using testing::Sample;
  auto set = [](SampleLabels more) { return LiveSet("eat_hide_wander", more); };
  EXPECT_EQ(Sample(m, "utilityd_decisions_total", set({{"action", "eat"}})), 1);
  EXPECT_EQ(Sample(m, "utilityd_decisions_total", set({{"action", "hide"}})),
            1);
  EXPECT_EQ(Sample(m, "utilityd_decisions_total", set({{"action", "wander"}})),
            3);
  EXPECT_EQ(Sample(m, "utilityd_decision_switches_total", set({})), 1);
  EXPECT_EQ(Sample(m, "utilityd_invalid_factors_total", set({})), 1);
  // The unknown set's name is not a label.
  EXPECT_EQ(Sample(m, "utilityd_agent_errors_total",
                   {{"behaviour_set", "(unknown)"},
                    {"code", "NotFound"},
                    {"variant", "live"}}),
            1);
  EXPECT_THAT(m, ::testing::Not(HasSubstr("attacker-chosen-name")));
  // The NaN forager's every action reads danger: no action, no score.
  EXPECT_EQ(Sample(m, "utilityd_no_action_total", set({})), 1);
  EXPECT_EQ(Sample(m, "utilityd_selected_score_count", set({})), 5);
  EXPECT_EQ(Sample(m, "utilityd_selected_score_bucket", set({{"le", "+Inf"}})),
            5);
  EXPECT_EQ(Sample(m, "utilityd_decision_margin_count", set({})), 5);
  EXPECT_EQ(Sample(m, "utilityd_batch_agents_count"), 4);
  EXPECT_EQ(
      Sample(m, "utilityd_batch_duration_seconds_bucket", {{"le", "+Inf"}}), 4);
  EXPECT_GE(Sample(m, "utilityd_vetoes_total", set({{"action", "eat"}})), 1);
  const SampleLabels unary = {{"grpc_type", "unary"},
                              {"grpc_service", "utilityd.v1.DecisionService"},
                              {"grpc_method", "Decide"}};
  SampleLabels unary_ok = unary;
  unary_ok["grpc_code"] = "OK";
  EXPECT_EQ(Sample(m, "grpc_server_handled_total", unary_ok), 1);
  const SampleLabels stream = {{"grpc_type", "bidi_stream"},
                               {"grpc_service", "utilityd.v1.DecisionService"},
                               {"grpc_method", "DecideStream"}};
  EXPECT_EQ(Sample(m, "grpc_server_msg_received_total", stream), 3);
  EXPECT_EQ(Sample(m, "grpc_server_msg_sent_total", stream), 3);
  EXPECT_EQ(Sample(m, "utilityd_active_streams"), 0);
  EXPECT_EQ(Sample(m, "utilityd_behaviour_sets"), 5);
  EXPECT_EQ(Sample(m, "utilityd_config_reloads_total", {{"result", "success"}}),
            1);
  EXPECT_THAT(m,
              ContainsRegex("utilityd_behaviour_set_info\\{behaviour_set="
                            "\"arena_mage\",revision=\"[0-9a-f]{16}\"\\} 1"));
  EXPECT_EQ(Sample(m, "utilityd_build_info",
                   {{"version", UTILITYD_VERSION},
                    {"simd_target", engine::SimdTarget()}}),
            1);
  EXPECT_THAT(m, ContainsRegex("process_resident_memory_bytes [1-9]"));
}

// Tree metrics count exactly: three ticks of one guard (patrol; the player
// seen: patrol halted, the approach starts; the approach continues), and a
// state from another set, which restarts the tree.
TEST_F(ObservabilityTest, TreeMetricsCountTicksLeavesHaltsAndResets) {
  auto guard = [](float visible, const std::string& state, double t) {
    v1::AgentSnapshot a;
    a.set_agent_id("guard-1");
    a.set_behaviour_set("guard_tree");
    (*a.mutable_named_factors())["player_visible"] = visible;
    (*a.mutable_named_factors())["player_distance"] = 30;
    (*a.mutable_named_factors())["health"] = 90;
    (*a.mutable_named_factors())["mana"] = 80;
    a.set_tree_state(state);
    a.set_game_time(t);
    return a;
  };
  std::string state;
  const float visible[] = {0, 1, 1};
  for (int k = 0; k < 3; ++k) {
    v1::DecideRequest request;
    *request.add_agents() = guard(visible[k], state, 0.5 * k);
    grpc::ClientContext context;
    v1::DecideResponse response;
    ASSERT_TRUE(stub_->Decide(&context, request, &response).ok());
    state = response.decisions(0).tree_state();
  }
  v1::DecideRequest request;
  *request.add_agents() =
      guard(1, std::string("\x01\x00\x00\x00\x00\x00\x00\x00", 8), 2);
  grpc::ClientContext context;
  v1::DecideResponse response;
  ASSERT_TRUE(stub_->Decide(&context, request, &response).ok());
  EXPECT_EQ(response.decisions(0).tree_reset(), "other_set");

  const std::string m = Get("/metrics");
  auto set = [](SampleLabels more) { return LiveSet("guard_tree", more); };
  using testing::Sample;
  EXPECT_EQ(
      Sample(m, "utilityd_tree_ticks_total", set({{"status", "running"}})), 4);
  EXPECT_EQ(Sample(m, "utilityd_tree_leaves_started_total",
                   set({{"leaf", "patrol"}})),
            1);
  // Started on the second tick and again after the reset.
  EXPECT_EQ(Sample(m, "utilityd_tree_leaves_started_total",
                   set({{"leaf", "move_to_player"}})),
            2);
  EXPECT_EQ(
      Sample(m, "utilityd_tree_leaves_halted_total", set({{"leaf", "patrol"}})),
      1);
  EXPECT_EQ(Sample(m, "utilityd_tree_state_resets_total",
                   set({{"reason", "other_set"}})),
            1);
  EXPECT_EQ(Sample(m, "utilityd_tree_state_resets_total",
                   set({{"reason", "corrupt"}})),
            0);
  EXPECT_EQ(Sample(m, "utilityd_decisions_total",
                   set({{"action", "move_to_player"}})),
            3);
  EXPECT_EQ(Sample(m, "utilityd_decisions_total", set({{"action", "patrol"}})),
            1);
}

// Coordination over gRPC: six goblins near one mage, two tokens per mage.
// Batch one: two granted, four denied. Batch two: goblin-0 reports its
// token and keeps it. The set has no preemption, so nothing is preempted.
// Metrics count exactly that; the set's resource has its preemptions at
// 0; a resource named only in the request is never a label.
TEST_F(ObservabilityTest, CoordinationMetricsCountGrantsAndDenials) {
  auto goblins = [] { return testing::GoblinsAroundOneMage(6); };
  v1::DecideRequest first = goblins();
  v1::ResourcePool* odd = first.add_pools();
  odd->set_resource("attacker-chosen-resource");
  grpc::ClientContext c1;
  v1::DecideResponse r1;
  ASSERT_TRUE(stub_->Decide(&c1, first, &r1).ok());
  int attackers = 0;
  for (const v1::Decision& d : r1.decisions()) {
    attackers += d.action() == "attack";
  }
  EXPECT_EQ(attackers, 2);

  v1::DecideRequest second = goblins();
  v1::HeldResource* held = second.mutable_agents(0)->add_held();
  held->set_resource("attack_token");
  held->set_target_id("mage-0");
  grpc::ClientContext c2;
  v1::DecideResponse r2;
  ASSERT_TRUE(stub_->Decide(&c2, second, &r2).ok());
  ASSERT_EQ(r2.decisions(0).coordination().granted_size(), 1);
  EXPECT_TRUE(r2.decisions(0).coordination().granted(0).kept());

  const std::string m = Get("/metrics");
  // Two new grants in the first batch, one in the second (goblin-0 kept
  // its own); four denials in each.
  EXPECT_EQ(testing::Sample(m, "utilityd_resource_grants_total",
                            {{"resource", "attack_token"}}),
            3);
  EXPECT_EQ(testing::Sample(m, "utilityd_resource_denials_total",
                            {{"resource", "attack_token"}}),
            8);
  // Exposed at 0 from the set's first decision.
  EXPECT_EQ(testing::Sample(m, "utilityd_resource_preemptions_total",
                            {{"resource", "attack_token"}}),
            0);
  EXPECT_THAT(m, ::testing::Not(HasSubstr("attacker-chosen-resource")));
}

TEST_F(ObservabilityTest, PromtoolLintsALiveScrapeClean) {
  Traffic();
  testing::TempDir dir("utilityd_scrape");
  const std::string file = (dir.path() / "scrape.txt").string();
  std::ofstream(file) << Get("/metrics");
  const std::string cmd = "promtool check metrics < " + file + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  const int rc = ::pclose(p);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "") << "promtool lint warnings";
}

TEST_F(ObservabilityTest, HealthReadinessAndStatus) {
  int status = 0;
  EXPECT_EQ(Get("/healthz", &status), "ok\n");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(Get("/readyz", &status), "ready\n");
  EXPECT_EQ(status, 200);
  const std::string json = Get("/api/v1/status", &status);
  EXPECT_EQ(status, 200);
  EXPECT_THAT(json, HasSubstr("\"version\":\"" UTILITYD_VERSION "\""));
  EXPECT_THAT(json, HasSubstr("\"ready\":true"));
  // The SIMD target the server's curves run on: this machine's best.
  EXPECT_THAT(json, HasSubstr("\"simd_target\":\"" +
                              std::string(engine::SimdTarget()) + "\""));
  EXPECT_THAT(
      json,
      ContainsRegex("\"name\":\"arena_mage\",\"revision\":\"[0-9a-f]{16}\""));
  EXPECT_THAT(json, HasSubstr("\"last_reload\":{\"ok\":true"));
  auto res = http_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
}

// --simd_target pins the scoring columns to one target: the status says
// which, and the scores are the very bits the best target gives.
TEST_F(ObservabilityTest, SimdTargetCanBePinnedWithoutChangingAScore) {
  const std::vector<std::string> targets = engine::AvailableSimdTargets();
  ASSERT_FALSE(targets.empty());
  const std::string slowest = targets.back();  // SCALAR on x86-64
  testing::UtilitydProcess pinned(
      {"--config_dir=examples/behaviour_sets", "--simd_target=" + slowest});
  ASSERT_THAT(pinned.StartServing(), IsOk());
  httplib::Client http("127.0.0.1", pinned.http_port());
  auto status = http.Get("/api/v1/status");
  ASSERT_TRUE(status);
  EXPECT_THAT(status->body, HasSubstr("\"simd_target\":\"" + slowest + "\""));
  EXPECT_THAT(status->body, HasSubstr("\"simd_targets\":[\"" + targets[0]));
  // Random mages on both servers, at every explain level: below full the
  // engine takes its fused pass, at full the traced one.
  v1::DecideRequest request;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0, 1);
  for (int i = 0; i < 64; ++i) {
    v1::AgentSnapshot* a = request.add_agents();
    a->set_behaviour_set("arena_mage");
    for (float scale : {100, 6, 5, 30, 10, 40, 1, 1, 1, 40}) {
      a->add_factors(std::round(u(rng) * scale * 4) / 4);
    }
    for (int t = 0; t < 2; ++t) {
      v1::TargetSnapshot* g = a->add_targets();
      g->set_target_id(absl::StrCat("g", t));
      g->add_factors(u(rng) * 30);
      g->add_factors(u(rng) * 30);
    }
  }
  auto decide = [&](const std::string& address) {
    auto stub = v1::DecisionService::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    v1::DecideResponse response;
    EXPECT_TRUE(stub->Decide(&context, request, &response).ok());
    for (v1::Decision& d : *response.mutable_decisions()) d.clear_decision_id();
    return response;
  };
  for (v1::Explain explain :
       {v1::EXPLAIN_NONE, v1::EXPLAIN_TOP, v1::EXPLAIN_FULL}) {
    request.set_explain(explain);
    const v1::DecideResponse best = decide(server_->address());
    const v1::DecideResponse scalar = decide(pinned.address());
    ASSERT_EQ(best.decisions_size(), 64);
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(best, scalar))
        << v1::Explain_Name(explain);
  }
  // An unknown target is refused at start-up, naming the flag.
  testing::UtilitydProcess wrong(
      {"--config_dir=examples/behaviour_sets", "--simd_target=NEON9"});
  EXPECT_FALSE(wrong.Start(absl::Seconds(10)).ok());
  wrong.Wait();
  EXPECT_THAT(wrong.Log(), HasSubstr("--simd_target: SIMD target \"NEON9\""));
}

TEST_F(ObservabilityTest, ASecondServerCannotShareThePorts) {
  testing::UtilitydProcess second({"--config_dir=examples/behaviour_sets"},
                                  server_->port());
  const absl::Status grpc = second.Start(absl::Seconds(10));
  EXPECT_FALSE(grpc.ok()) << "two servers bound the same gRPC port";
  // It fails for the port, and says so, not for something else.
  EXPECT_THAT(std::string(grpc.message()),
              HasSubstr(absl::StrCat("grpc_address: cannot listen on "
                                     "127.0.0.1:",
                                     server_->port())));
  testing::UtilitydProcess third(
      {"--config_dir=examples/behaviour_sets",
       absl::StrCat("--http_address=127.0.0.1:", server_->http_port())});
  const absl::Status s = third.Start(absl::Seconds(10));
  EXPECT_FALSE(s.ok()) << "two servers bound the same HTTP port";
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("http_address: cannot listen"));
}

}  // namespace
}  // namespace utilityd

namespace utilityd {
namespace {

TEST(DecisionLogIntegrationTest, EveryDecisionIsALineAndSamplingHolds) {
  testing::TempDir dir("utilityd_declog");
  const std::string log = (dir.path() / "decisions.jsonl").string();
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                                   "--decision_log=" + log,
                                   "--decision_log_sample=0.25"});
  ASSERT_THAT(server.StartServing(), IsOk());
  auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
  constexpr int kBatches = 40, kAgents = 50;
  for (int b = 0; b < kBatches; ++b) {
    v1::DecideRequest request;
    for (int a = 0; a < kAgents; ++a) {
      v1::AgentSnapshot agent = Forager(0.02f * a, 0.1f);
      agent.set_agent_id(absl::StrCat("forager-", a));
      *request.add_agents() = agent;
    }
    grpc::ClientContext context;
    v1::DecideResponse response;
    ASSERT_TRUE(stub->Decide(&context, request, &response).ok());
  }
  server.Signal(SIGTERM);  // flushes the log on the way out
  ASSERT_EQ(server.Wait(), 0) << server.Log();

  std::ifstream in(log);
  std::string line;
  int lines = 0, explained = 0;
  std::set<std::string> ids;
  while (std::getline(in, line)) {
    v1::DecisionLogEntry e;
    ASSERT_THAT(loader::ReadMessageOrError(line, "log", &e), IsOk()) << line;
    ++lines;
    ids.insert(e.decision_id());
    EXPECT_EQ(e.behaviour_set(), "eat_hide_wander");
    EXPECT_EQ(e.factors().size(), 4u);
    EXPECT_FALSE(e.action().empty());
    if (e.has_explanation()) {
      ++explained;
      EXPECT_EQ(e.explanation().actions_size(), 3);
      EXPECT_FALSE(e.explanation().summary().empty());
    }
  }
  EXPECT_EQ(lines, kBatches * kAgents);
  EXPECT_EQ(ids.size(), static_cast<size_t>(lines));
  EXPECT_NEAR(explained / static_cast<double>(lines), 0.25, 0.05);

  std::ostringstream out, err;
  EXPECT_EQ(ctl::RunUtilityctl({"log", log, "--sampled"}, out, err), 0)
      << err.str();
  EXPECT_THAT(
      out.str(),
      ContainsRegex(
          "eat_hide_wander@[0-9a-f]{8}  forager-[0-9]+ -> (eat|wander|hide) "));
  EXPECT_THAT(out.str(), HasSubstr("\n    "));  // breakdowns indented
}

TEST(DecisionLogIntegrationTest, MasksAgentIdsAndDropsFactorValues) {
  testing::TempDir dir("utilityd_declog_private");
  const std::string log = (dir.path() / "decisions.jsonl").string();
  testing::UtilitydProcess server(testing::PrivateDecisionLogFlags(log));
  ASSERT_THAT(server.StartServing(), IsOk());
  auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
  v1::DecideRequest request;
  for (const char* id : {"player-alice", "player-bob", "player-alice"}) {
    v1::AgentSnapshot agent = Forager(0.8f, 0.1f);
    agent.set_agent_id(id);
    *request.add_agents() = agent;
  }
  grpc::ClientContext context;
  v1::DecideResponse response;
  ASSERT_TRUE(stub->Decide(&context, request, &response).ok());
  server.Signal(SIGTERM);
  ASSERT_EQ(server.Wait(), 0);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), ::testing::Not(HasSubstr("player-")));
  EXPECT_THAT(text.str(), ::testing::Not(HasSubstr("\"raw\"")));
  std::vector<v1::DecisionLogEntry> entries;
  for (absl::string_view line :
       absl::StrSplit(text.str(), '\n', absl::SkipEmpty())) {
    v1::DecisionLogEntry e;
    ASSERT_THAT(loader::ReadMessageOrError(line, "log", &e), IsOk());
    EXPECT_TRUE(e.factors().empty());
    EXPECT_TRUE(e.has_explanation());
    entries.push_back(e);
  }
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_THAT(entries[0].agent_id(), ContainsRegex("^[0-9a-f]{16}$"));
  EXPECT_EQ(entries[0].agent_id(), entries[2].agent_id());  // same agent
  EXPECT_NE(entries[0].agent_id(), entries[1].agent_id());
}

}  // namespace
}  // namespace utilityd
