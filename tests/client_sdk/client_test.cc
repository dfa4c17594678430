// The client SDK against the real utilityd binary.
#include "utilityd/client/client.h"

#include <netdb.h>
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/client/block.h"
#include "utilityd/client/compact.h"
#include "utilityd/client/tree_tracker.h"

namespace utilityd::client {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;
using ::utilityd::testing::StatusIs;
using ::utilityd::testing::UtilitydProcess;

v1::AgentSnapshot Forager(float hunger, float danger) {
  v1::AgentSnapshot a;
  a.set_agent_id("forager");
  a.set_behaviour_set("eat_hide_wander");
  auto& f = *a.mutable_named_factors();
  f["hunger"] = hunger;
  f["danger"] = danger;
  f["food_distance"] = 5;
  f["idle_time"] = 2;
  return a;
}

// A mage with packed factors and two goblins, each drawn from `rng`.
v1::AgentSnapshot Mage(int i, std::mt19937& rng) {
  auto u = [&](float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(rng);
  };
  v1::AgentSnapshot a;
  a.set_agent_id(absl::StrCat("mage-", i));
  a.set_behaviour_set("arena_mage");
  for (float v : {u(0, 100), std::floor(u(0, 7)), u(0, 5), u(0, 30), u(0, 10),
                  u(0, 40), std::round(u(0, 1)), std::round(u(0, 1)),
                  std::round(u(0, 1)), u(0, 40)}) {
    a.add_factors(v);
  }
  for (int t = 0; t < 2; ++t) {
    v1::TargetSnapshot* g = a.add_targets();
    g->set_target_id(absl::StrCat("goblin-", t));
    g->add_factors(u(0, 30));
    g->add_factors(u(0, 30));
  }
  static const char* const kActions[] = {"", "attack", "recharge", "flee"};
  a.set_current_action(kActions[i % 4]);
  if (a.current_action() == "attack") a.set_current_target("goblin-1");
  return a;
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& e : fs::directory_iterator("examples/behaviour_sets")) {
      fs::copy_file(e.path(), dir_ / e.path().filename());
    }
  }

  void StartServer(int port = 0) {
    server_ = std::make_unique<UtilitydProcess>(
        std::vector<std::string>{"--config_dir=" + dir_.string(),
                                 "--reload_interval=50ms"},
        port);
    ASSERT_THAT(server_->Start(), IsOk());
    ASSERT_TRUE(server_->WaitServing()) << server_->Log();
  }

  std::unique_ptr<Client> Connect() {
    ClientOptions options;
    options.target = server_->address();
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
    EXPECT_THAT(client, IsOk());
    return *std::move(client);
  }

  ::utilityd::testing::TempDir temp_{"utilityd_sdk"};
  const fs::path& dir_ = temp_.path();
  std::unique_ptr<UtilitydProcess> server_;
};

TEST(ResolveTargetTest, TurnsAddressListsIntoIpv4Targets) {
  EXPECT_THAT(
      ResolveTarget("127.0.0.1:1,127.0.0.1:2"),
      ::utilityd::testing::IsOkAndHolds("ipv4:127.0.0.1:1,127.0.0.1:2"));
  EXPECT_THAT(ResolveTarget("dns:///utilityd:50051"),
              ::utilityd::testing::IsOkAndHolds("dns:///utilityd:50051"));
}

// Each address a target names is a replica of its own.
TEST(ReplicasTest, EveryAddressOfTheTargetIsAReplica) {
  auto client = Client::Connect({.target = "127.0.0.1:1, 127.0.0.1:2"});
  ASSERT_THAT(client, IsOk());
  std::vector<ReplicaState> replicas = (*client)->Replicas();
  ASSERT_EQ(replicas.size(), 2u);
  EXPECT_EQ(replicas[0].address, "127.0.0.1:1");
  EXPECT_EQ(replicas[1].address, "127.0.0.1:2");
  // A name is resolved by the SDK; one that does not resolve (yet: a
  // service being created, or a minimal root without /etc/hosts) is not
  // an error, and names no replica until it does.
  auto named = Client::Connect({.target = "dns:///localhost:7"});
  ASSERT_THAT(named, IsOk());
  addrinfo* found = nullptr;
  const bool resolves = getaddrinfo("localhost", "7", nullptr, &found) == 0;
  if (found != nullptr) freeaddrinfo(found);
  EXPECT_EQ((*named)->Replicas().empty(), !resolves);
  EXPECT_THAT(Client::Connect({.target = "127.0.0.1"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"127.0.0.1\" has no port")));
  EXPECT_THAT(Client::Connect({.target = "127.0.0.1:99999"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("port is not 1..65535")));
  EXPECT_THAT(
      Client::Connect({.target = "x:1", .ai_tick = absl::ZeroDuration()})
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ai_tick")));
}

TEST(SetSchemaTest, PacksNamedFactorsInDeclaredOrder) {
  v1::BehaviourSetSummary summary;
  summary.set_name("s");
  summary.set_revision("r1");
  summary.add_factors("b");
  summary.add_factors("a");
  summary.add_target_factors("d");
  const SetSchema schema(summary);
  v1::AgentSnapshot agent;
  (*agent.mutable_named_factors())["a"] = 1;
  (*agent.mutable_named_factors())["b"] = 2;
  (*agent.add_targets()->mutable_named_factors())["d"] = 3;
  ASSERT_THAT(schema.Pack(&agent), IsOk());
  EXPECT_THAT(agent.factors(), ::testing::ElementsAre(2, 1));
  EXPECT_THAT(agent.targets(0).factors(), ::testing::ElementsAre(3));
  EXPECT_TRUE(agent.named_factors().empty());
  EXPECT_EQ(agent.expected_revision(), "r1");
  v1::AgentSnapshot missing;
  (*missing.mutable_named_factors())["a"] = 1;
  EXPECT_THAT(
      schema.Pack(&missing),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing b")));
  // A bad target leaves the whole snapshot as it was.
  v1::AgentSnapshot bad_target;
  (*bad_target.mutable_named_factors())["a"] = 1;
  (*bad_target.mutable_named_factors())["b"] = 2;
  (*bad_target.add_targets()->mutable_named_factors())["e"] = 3;
  const v1::AgentSnapshot before = bad_target;
  EXPECT_THAT(schema.Pack(&bad_target),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("targets[0].named_factors: unknown factor")));
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(bad_target, before));
  EXPECT_TRUE(bad_target.expected_revision().empty());
}

TEST_F(ClientTest, DecidesWithNamedFactorsPackedOnTheClient) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = Connect();
  v1::DecideRequest request;
  *request.add_agents() = Forager(0.8f, 0.1f);
  *request.add_agents() = Forager(0.8f, 0.95f);
  absl::StatusOr<v1::DecideResponse> r = client->Decide(request);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->decisions(0).action(), "eat");
  EXPECT_EQ(r->decisions(1).action(), "hide");
  absl::StatusOr<std::shared_ptr<const SetSchema>> schema =
      client->Schema("eat_hide_wander");
  ASSERT_THAT(schema, IsOk());
  EXPECT_EQ((*schema)->FactorIndex("danger"), 1);
  EXPECT_EQ((*schema)->revision(), r->decisions(0).revision());
}

// The tree helper: the game only reports leaf outcomes; the tracker carries
// each agent's state from decision to decision.
TEST_F(ClientTest, TreeTrackerCarriesStateAndOutcomes) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = Connect();
  TreeTracker trees;
  auto tick = [&](float visible, float distance, double t) {
    v1::DecideRequest request;
    v1::AgentSnapshot* a = request.add_agents();
    a->set_agent_id("guard-1");
    a->set_behaviour_set("guard_tree");
    (*a->mutable_named_factors())["player_visible"] = visible;
    (*a->mutable_named_factors())["player_distance"] = distance;
    (*a->mutable_named_factors())["health"] = 90;
    (*a->mutable_named_factors())["mana"] = 80;
    v1::TargetSnapshot* player = a->add_targets();
    player->set_target_id("player");
    (*player->mutable_named_factors())["distance"] = distance;
    (*player->mutable_named_factors())["health"] = 100;
    a->set_game_time(t);
    trees.Prepare(a);
    absl::StatusOr<v1::DecideResponse> r = client->Decide(request);
    EXPECT_THAT(r, IsOk());
    trees.Update(r->decisions(0));
    return r->decisions(0);
  };
  v1::Decision d = tick(0, 30, 0);
  ASSERT_EQ(d.run_leaves_size(), 1);
  EXPECT_EQ(d.run_leaves(0).action(), "patrol");
  EXPECT_TRUE(d.run_leaves(0).started());
  EXPECT_EQ(trees.Running("guard-1").size(), 1u);

  d = tick(0, 30, 0.5);  // the state went back: patrol continues
  ASSERT_EQ(d.run_leaves_size(), 1);
  EXPECT_FALSE(d.run_leaves(0).started());
  EXPECT_EQ(d.tree_reset(), "");

  d = tick(1, 8, 1.0);  // in sight and in range: attack, patrol halted
  ASSERT_EQ(d.run_leaves_size(), 1);
  EXPECT_EQ(d.run_leaves(0).action(), "fireball");
  EXPECT_EQ(d.run_leaves(0).target_id(), "player");
  ASSERT_EQ(d.halted_leaves_size(), 1);
  EXPECT_EQ(d.halted_leaves(0).action(), "patrol");

  trees.Report("guard-1", d.run_leaves(0).node(), v1::NODE_STATUS_SUCCESS);
  d = tick(1, 8, 1.5);  // the outcome went back: the attack is done
  EXPECT_EQ(d.tree_status(), v1::NODE_STATUS_SUCCESS);
  EXPECT_EQ(d.run_leaves_size(), 0);

  trees.Forget("guard-1");
  EXPECT_EQ(trees.size(), 0u);
  d = tick(0, 30, 2.0);
  ASSERT_EQ(d.run_leaves_size(), 1);
  EXPECT_TRUE(d.run_leaves(0).started());
}

TEST_F(ClientTest, RepacksWhenTheSetsFactorOrderChanges) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = Connect();
  auto compact_client = Connect();  // the same, asking for compact answers
  v1::DecideRequest request;
  *request.add_agents() = Forager(0.8f, 0.1f);
  ASSERT_THAT(client->Decide(request), IsOk());  // caches the schema
  ASSERT_THAT(compact_client->Decide(request), IsOk());
  const std::string old_revision =
      (*client->Schema("eat_hide_wander"))->revision();
  // Swap the first two factors: a stale client would send hunger as danger.
  const fs::path file = dir_ / "eat_hide_wander.yaml";
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string swapped = absl::StrReplaceAll(
      text.str(),
      {{"  - {name: hunger, unit: need, description: 0 fed .. 1 starving.}\n",
        "@@HUNGER@@"},
       {"  - {name: danger, unit: threat, description: 0 no predator .. 1 "
        "predator adjacent.}\n",
        "  - {name: danger, unit: threat, description: 0 no predator .. 1 "
        "predator adjacent.}\n  - {name: hunger, unit: need, description: 0 "
        "fed .. 1 starving.}\n"}});
  std::ofstream(file) << absl::StrReplaceAll(swapped, {{"@@HUNGER@@", ""}});
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    auto got = client->GetBehaviourSet("eat_hide_wander");
    if (got.ok() && got->summary().revision() != old_revision) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  // The cached schema is stale; the SDK must notice, re-pack and re-send.
  EXPECT_EQ((*client->Schema("eat_hide_wander"))->revision(), old_revision);
  *request.add_agents() = Forager(0.8f, 0.95f);
  absl::StatusOr<v1::DecideResponse> r = client->Decide(request);
  ASSERT_THAT(r, IsOk());
  EXPECT_FALSE(r->decisions(0).has_error())
      << r->decisions(0).error().message();
  EXPECT_EQ(r->decisions(0).action(), "eat");
  EXPECT_EQ(r->decisions(1).action(), "hide");
  EXPECT_NE(r->decisions(0).revision(), old_revision);
  EXPECT_EQ((*client->Schema("eat_hide_wander"))->summary().factors(0),
            "danger");
  // In the compact form the repaired agents come back as FULL decisions.
  request.set_form(v1::DECISION_FORM_COMPACT);
  r = compact_client->Decide(request);
  ASSERT_THAT(r, IsOk());
  const CompactReader reader(request, *r);
  ASSERT_THAT(reader.Check(), IsOk());
  for (int i = 0; i < 2; ++i) {
    ASSERT_NE(reader.full(i), nullptr) << i;
    EXPECT_FALSE(reader.full(i)->has_error())
        << reader.full(i)->error().message();
    EXPECT_NE(reader.full(i)->revision(), old_revision);
  }
  EXPECT_EQ(reader.full(0)->action(), "eat");
  EXPECT_EQ(reader.full(1)->action(), "hide");
}

// The compact form carries exactly what the full form does: a batch mixing
// three sets, per-target actions, a tree tick and failing agents, asked in
// both forms, expands to the same decisions.
TEST_F(ClientTest, CompactAndFullFormsDecodeToTheSameDecisions) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = Connect();
  std::mt19937 rng(7);
  v1::DecideRequest request;
  for (int i = 0; i < 40; ++i) {
    if (i % 5 == 3) {
      *request.add_agents() = Forager(0.1f * (i % 10), 0.3f);
    } else {
      *request.add_agents() = Mage(i, rng);
    }
  }
  request.mutable_agents(7)->set_behaviour_set("no_such_set");
  request.mutable_agents(11)->mutable_factors()->RemoveLast();
  v1::AgentSnapshot* guard = request.mutable_agents(20);
  guard->Clear();
  guard->set_agent_id("guard-1");
  guard->set_behaviour_set("guard_tree");
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, float>>{{"player_visible", 1},
                                                  {"player_distance", 8},
                                                  {"health", 90},
                                                  {"mana", 80}}) {
    (*guard->mutable_named_factors())[name] = value;
  }
  v1::TargetSnapshot* player = guard->add_targets();
  player->set_target_id("player");
  (*player->mutable_named_factors())["distance"] = 8;
  (*player->mutable_named_factors())["health"] = 100;

  absl::StatusOr<v1::DecideResponse> full = client->Decide(request);
  ASSERT_THAT(full, IsOk());
  request.set_form(v1::DECISION_FORM_COMPACT);
  absl::StatusOr<v1::DecideResponse> compact = client->Decide(request);
  ASSERT_THAT(compact, IsOk());
  EXPECT_EQ(compact->decisions_size(), 0);
  const CompactReader reader(request, *compact);
  ASSERT_THAT(reader.Check(), IsOk());
  ASSERT_EQ(reader.size(), 40);
  // The FULL ones: the two failures and the tick, nothing else.
  std::vector<int> flagged;
  for (int i = 0; i < reader.size(); ++i) {
    if (reader.full(i) != nullptr) flagged.push_back(i);
  }
  EXPECT_THAT(flagged, ::testing::ElementsAre(7, 11, 20));
  EXPECT_EQ(compact->compact().revisions_size(), 3);
  // Decision ids are SplitMix64(base + position): the tick's full decision
  // carries the id the service gave it, the same the formula gives.
  ASSERT_TRUE(compact->compact().has_decision_id_base());
  EXPECT_EQ(reader.decision_id(20), reader.full(20)->decision_id());
  EXPECT_EQ(reader.decision_id(20).size(), 16u);
  EXPECT_NE(reader.decision_id(0), reader.decision_id(1));

  absl::StatusOr<v1::DecideResponse> expanded =
      client->ExpandCompact(request, *compact);
  ASSERT_THAT(expanded, IsOk());
  ASSERT_EQ(expanded->decisions_size(), 40);
  int per_target = 0;
  for (int i = 0; i < 40; ++i) {
    v1::Decision a = full->decisions(i);
    v1::Decision b = expanded->decisions(i);
    EXPECT_EQ(a.decision_id().size(), b.decision_id().size()) << i;
    a.clear_decision_id();  // two calls: two numberings
    b.clear_decision_id();
    if (i == 20) {  // the tick's state carries no clock; the same bytes
      EXPECT_EQ(a.tree_state(), b.tree_state());
    }
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a, b))
        << "agent " << i << "\nfull:     " << a.ShortDebugString()
        << "\nexpanded: " << b.ShortDebugString();
    per_target += !a.target_id().empty();
  }
  EXPECT_GT(per_target, 0);  // target indexes were exercised
  // Smaller on the wire: at most 16 bytes per decision without failures.
  v1::DecideRequest clean;
  clean.set_form(v1::DECISION_FORM_COMPACT);
  for (int i = 0; i < 256; ++i) *clean.add_agents() = Mage(i, rng);
  absl::StatusOr<v1::DecideResponse> small = client->Decide(clean);
  ASSERT_THAT(small, IsOk());
  EXPECT_LE(small->ByteSizeLong(), 16u * 256);
  std::cout << "compact answer: " << small->ByteSizeLong() / 256.0
            << " bytes per decision\n";
  // Explanations need the full form.
  request.set_explain(v1::EXPLAIN_TOP);
  EXPECT_THAT(client->Decide(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("form: the compact form carries no "
                                 "explanations")));
}

TEST_F(ClientTest, StreamDeliversEveryResultAndAppliesBackpressure) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = Connect();
  std::unique_ptr<DecisionStream> stream =
      client->OpenStream({.max_in_flight = 4});
  std::vector<std::future<BatchResult>> futures;
  for (int i = 0; i < 100; ++i) {
    v1::DecideRequest batch;
    *batch.add_agents() = Forager(i % 2 ? 0.8f : 0.1f, 0.05f);
    futures.push_back(stream->Submit(batch));
    EXPECT_LE(stream->in_flight(), 4);
  }
  std::set<uint64_t> ids;
  for (int i = 0; i < 100; ++i) {
    BatchResult r = futures[i].get();
    ASSERT_THAT(r.status, IsOk());
    ids.insert(r.request_id);
    EXPECT_EQ(r.response.decisions(0).action(), i % 2 ? "eat" : "wander");
  }
  EXPECT_EQ(ids.size(), 100u);
  stream->Close();
  EXPECT_EQ(stream->reconnects(), 0);
}

TEST_F(ClientTest, StreamSurvivesAKilledServerWithoutLosingOrDuplicating) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const int port = server_->port();
  auto client = Connect();
  std::unique_ptr<DecisionStream> stream =
      client->OpenStream({.max_in_flight = 8});
  constexpr int kBatches = 300;
  std::vector<std::future<BatchResult>> futures;
  std::thread restart([&] {
    absl::SleepFor(absl::Milliseconds(150));
    server_->Signal(SIGKILL);
    server_->Wait();
    absl::SleepFor(absl::Milliseconds(300));
    server_ = std::make_unique<UtilitydProcess>(
        std::vector<std::string>{"--config_dir=" + dir_.string()}, port);
    ASSERT_THAT(server_->Start(), IsOk());
  });
  const absl::Time start = absl::Now();
  for (int i = 0; i < kBatches; ++i) {
    v1::DecideRequest batch;
    v1::AgentSnapshot agent = Forager(0.8f, 0.05f);
    agent.set_agent_id(absl::StrCat("forager-", i));
    *batch.add_agents() = agent;
    futures.push_back(stream->Submit(batch));
    absl::SleepFor(absl::Milliseconds(2));
  }
  restart.join();
  std::set<uint64_t> ids;
  int ok = 0;
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_EQ(futures[i].wait_for(std::chrono::seconds(30)),
              std::future_status::ready)
        << "batch " << i << " got no result";
    BatchResult r = futures[i].get();  // exactly one result each
    EXPECT_THAT(r.status, IsOk()) << i;
    if (!r.status.ok()) continue;
    ++ok;
    EXPECT_TRUE(ids.insert(r.request_id).second)
        << "duplicate " << r.request_id;
    ASSERT_EQ(r.response.decisions_size(), 1);
    EXPECT_EQ(r.response.decisions(0).agent_id(), absl::StrCat("forager-", i));
  }
  EXPECT_EQ(ok, kBatches);
  EXPECT_GE(stream->reconnects(), 1);
  std::cout << "stream recovered: " << kBatches << " batches, "
            << stream->reconnects() << " reconnect(s), "
            << absl::FormatDuration(absl::Now() - start) << " in all\n";
  stream->Close();
}

// What Stats says, on the Borrow path: the replicas the stream is on, and
// counters that follow a frozen and then a killed replica.
TEST_F(ClientTest, StreamStatsNameItsReplicasAndCountWhatHappened) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  UtilitydProcess second({"--config_dir=" + dir_.string()});
  ASSERT_THAT(second.StartServing(), IsOk());
  ClientOptions options;
  options.target = absl::StrCat(server_->address(), ",", second.address());
  auto connected = Client::Connect(options);
  ASSERT_THAT(connected, IsOk());
  std::unique_ptr<DecisionStream> stream = (*connected)->OpenStream();
  v1::AgentSnapshot agent = Forager(0.8f, 0.05f);
  agent.clear_named_factors();  // packed by the caller
  for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) agent.add_factors(v);
  int failed = 0;
  auto ticks = [&](int n) {
    for (int i = 0; i < n; ++i) {
      StreamBatch* b = stream->Borrow();
      *b->request().add_agents() = agent;
      stream->Send(b);
      failed += !stream->Wait(b).status.ok();
      stream->Return(b);
    }
  };
  ticks(10);
  StreamStats stats = stream->Stats();
  EXPECT_EQ(stats.batches, 10);
  EXPECT_EQ(stats.answered, 10);
  EXPECT_THAT(stats.replicas, ::testing::UnorderedElementsAre(
                                  server_->address(), second.address()));
  EXPECT_EQ(stats.deadline_misses, 0);

  // Both replicas admitted (on a loaded machine a probe may have missed its
  // deadline and ejected one), so round robin sends the frozen one batches.
  ASSERT_TRUE(::utilityd::testing::WaitFor(
      [&] {
        for (const ReplicaState& r : (*connected)->Replicas()) {
          if (r.ejected) return false;
        }
        return true;
      },
      absl::Seconds(10)));
  second.Signal(SIGSTOP);  // frozen: its batches are raced elsewhere
  // Round robin reaches it within a few ticks; a little later when a
  // refusal under load (sanitizers, a busy machine) pushed it back for a
  // while. Ten ticks at least, more until one of its batches is missed.
  int frozen_ticks = 0;
  while (frozen_ticks < 10 ||
         (frozen_ticks < 200 && stream->Stats().deadline_misses == 0)) {
    ticks(1);
    ++frozen_ticks;
  }
  stats = stream->Stats();
  EXPECT_GE(stats.deadline_misses, 1);
  second.Signal(SIGCONT);
  second.Signal(SIGKILL);
  second.Wait();
  ticks(10);
  ASSERT_TRUE(::utilityd::testing::WaitFor(
      [&] { return stream->Stats().reconnects >= 1; }, absl::Seconds(10)));
  stats = stream->Stats();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(stats.batches, 20 + frozen_ticks);
  EXPECT_EQ(stats.answered, 20 + frozen_ticks);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_THAT(stats.replicas, ::testing::ElementsAre(server_->address()));
}

// An ECS chunk: components as the caller's arrays, factor-major.
struct MageChunk {
  std::vector<uint64_t> ids;
  std::vector<float> factors;  // factor-major
  std::vector<int32_t> running;
};

MageChunk Chunk(int rows, std::mt19937& rng) {
  MageChunk c;
  std::vector<v1::AgentSnapshot> mages;
  for (int r = 0; r < rows; ++r) {
    mages.push_back(Mage(r, rng));
    c.ids.push_back(70'000 + r);
    c.running.push_back(r % 4 - 1);  // none, attack, recharge, flee
  }
  for (int f = 0; f < mages[0].factors_size(); ++f) {
    for (int r = 0; r < rows; ++r) c.factors.push_back(mages[r].factors(f));
  }
  return c;
}

TEST_F(ClientTest, BlocksFromCallerArraysSurviveAKilledServerExactlyOnce) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const int port = server_->port();
  auto client = Connect();
  std::mt19937 rng(11);
  constexpr int kRows = 256;
  const MageChunk chunk = Chunk(kRows, rng);
  const BlockColumns in{.behaviour_set = "arena_mage",
                        .agent_ids = chunk.ids,
                        .factors = chunk.factors,
                        .layout = v1::FACTOR_LAYOUT_COLUMNS,
                        .current_action = chunk.running,
                        .fixed_width_indices = true};
  // What the rows decide, asked once, unary.
  v1::DecideRequest once;
  WriteBlock(in, once.add_blocks());
  absl::StatusOr<v1::DecideResponse> first = client->Decide(once);
  ASSERT_THAT(first, IsOk());
  // The block asked for fixed-width indices: the server answered in those
  // columns only.
  EXPECT_EQ(first->blocks(0).action_index_fixed_size(), kRows);
  EXPECT_EQ(first->blocks(0).action_index_size(), 0);
  std::vector<int32_t> want(kRows);
  std::vector<float> want_score(kRows);
  ASSERT_THAT(ReadBlock(first->blocks(0), kRows,
                        {.action_index = absl::MakeSpan(want),
                         .score = absl::MakeSpan(want_score)}),
              IsOk());
  EXPECT_GT(std::set<int32_t>(want.begin(), want.end()).size(), 1u);

  std::unique_ptr<DecisionStream> stream =
      client->OpenStream({.max_in_flight = 4});
  constexpr int kBatches = 120;
  std::vector<std::future<BatchResult>> futures;
  std::thread restart([&] {
    absl::SleepFor(absl::Milliseconds(100));
    server_->Signal(SIGKILL);
    server_->Wait();
    absl::SleepFor(absl::Milliseconds(300));
    server_ = std::make_unique<UtilitydProcess>(
        std::vector<std::string>{"--config_dir=" + dir_.string()}, port);
    ASSERT_THAT(server_->Start(), IsOk());
  });
  v1::DecideRequest batch;  // reused: its columns keep their capacity
  for (int i = 0; i < kBatches; ++i) {
    batch.clear_request_id();
    WriteBlock(in, batch.blocks_size() > 0 ? batch.mutable_blocks(0)
                                           : batch.add_blocks());
    futures.push_back(stream->Submit(batch));
    absl::SleepFor(absl::Milliseconds(2));
  }
  restart.join();
  std::set<uint64_t> ids;
  std::vector<int32_t> action(kRows);
  std::vector<float> score(kRows);
  std::vector<uint8_t> flags(kRows);
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_EQ(futures[i].wait_for(std::chrono::seconds(30)),
              std::future_status::ready)
        << "batch " << i << " got no result";
    BatchResult r = futures[i].get();
    ASSERT_THAT(r.status, IsOk()) << i;
    EXPECT_TRUE(ids.insert(r.request_id).second) << r.request_id;
    ASSERT_EQ(r.response.blocks_size(), 1);
    std::vector<RowError> errors;
    ASSERT_THAT(ReadBlock(r.response.blocks(0), kRows,
                          {.action_index = absl::MakeSpan(action),
                           .score = absl::MakeSpan(score),
                           .flags = absl::MakeSpan(flags)},
                          &errors),
                IsOk());
    EXPECT_TRUE(errors.empty());
    EXPECT_EQ(action, want) << i;
    EXPECT_EQ(score, want_score) << i;
  }
  EXPECT_GE(stream->reconnects(), 1);
  stream->Close();
}

TEST(ReadBlockTest, NamesWhatDoesNotFit) {
  v1::DecisionBlock answer;
  for (int v : {2, -1}) answer.add_action_index(v);
  for (int v : {-1, -1}) answer.add_target_index(v);
  for (float v : {0.5f, 0.0f}) answer.add_score(v);
  answer.set_flags(std::string("\0\4", 2));
  v1::IndexedDecision* failed = answer.add_full();
  failed->set_agent(1);
  failed->mutable_decision()->mutable_error()->set_code(
      v1::ERROR_CODE_INVALID_ARGUMENT);
  failed->mutable_decision()->mutable_error()->set_message(
      "blocks[0].rows[1].current_action: index 9 is out of range");
  std::vector<int32_t> action(2);
  std::vector<RowError> errors;
  ASSERT_THAT(
      ReadBlock(answer, 2, {.action_index = absl::MakeSpan(action)}, &errors),
      IsOk());
  EXPECT_EQ(action, (std::vector<int32_t>{2, -1}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].row, 1);
  EXPECT_THAT(errors[0].status, StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("rows[1].current_action")));
  std::vector<float> short_score(1);
  EXPECT_THAT(ReadBlock(answer, 2, {.score = absl::MakeSpan(short_score)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("BlockAnswers.score: sized for 1 rows")));
  EXPECT_THAT(ReadBlock(answer, 3, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("expected 3 rows")));
  answer.mutable_error()->set_code(v1::ERROR_CODE_NOT_FOUND);
  answer.mutable_error()->set_message("blocks[0].behaviour_set: unknown set");
  EXPECT_THAT(ReadBlock(answer, 2, {}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("unknown set")));
}

TEST_F(ClientTest, CloseAnswersUnansweredBatchesWithAnError) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = Connect();
  std::unique_ptr<DecisionStream> stream = client->OpenStream();
  server_->Signal(SIGKILL);
  server_->Wait();
  v1::DecideRequest batch;
  v1::AgentSnapshot agent = Forager(0.8f, 0.05f);
  agent.clear_named_factors();  // packed, so Submit needs no schema lookup
  for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) agent.add_factors(v);
  *batch.add_agents() = agent;
  std::future<BatchResult> pending = stream->Submit(batch);
  stream->Close(absl::Milliseconds(300));
  const BatchResult r = pending.get();
  EXPECT_THAT(r.status, StatusIs(absl::StatusCode::kUnavailable,
                                 HasSubstr("closed before an answer")));
}

// gRPC 1.51 aborts (grpc_cq_internal_unref: prior > 0) when the last
// reference to a channel drops inside one of its callback threads; a client
// destroyed right after its calls, as every game server does at shutdown,
// must end its channels on its own thread instead.
TEST_F(ClientTest, ClientsComeAndGoRightAfterTheirCalls) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  v1::DecideRequest request;
  *request.add_agents() = Forager(0.8f, 0.1f);
  for (int i = 0; i < 200; ++i) {
    auto client = Connect();
    ASSERT_THAT(client->Decide(request), IsOk());
    std::unique_ptr<DecisionStream> stream = client->OpenStream();
    EXPECT_THAT(stream->Submit(request).get().status, IsOk());
    stream.reset();
    client.reset();  // before the stream's and the call's callbacks let go
  }
}

}  // namespace
}  // namespace utilityd::client
