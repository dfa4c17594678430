// Replay end to end: the real utilityd logs what the real simulator asks of
// it (villager, arena and the guard's tree), and `utilityctl replay`
// reports on that log what a test here counts on its own by deciding every
// logged snapshot through the library API.
#include <httplib.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "ctl/commands.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "tests/testing/child_process.h"
#include "tests/testing/exposition.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/base/decision_id.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/engine/decide.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/v1/decision_service.grpc.pb.h"
#include "utilityd/v1/replay.pb.h"

namespace utilityd {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;

namespace fs = std::filesystem;

// (set, from, to) -> decisions.
using Moves =
    std::map<std::tuple<std::string, std::string, std::string>, int64_t>;

// Copies the example sets into `dir`, with arena_mage's take_cover at half
// its weight when `halve` is set.
void WriteCandidate(const fs::path& dir, bool halve) {
  fs::create_directories(dir);
  for (const auto& f : fs::directory_iterator("examples/behaviour_sets")) {
    std::string text = testing::ReadWholeFile(f.path().string());
    if (halve && f.path().filename() == "arena_mage.yaml") {
      const std::string before = text;
      text = absl::StrReplaceAll(text,
                                 {{"  - name: take_cover\n",
                                   "  - name: take_cover\n    weight: 0.5\n"}});
      EXPECT_NE(text, before);
    }
    std::ofstream(dir / f.path().filename()) << text;
  }
}

// Every logged decision that `candidate` decides otherwise, counted by
// deciding each snapshot here: flat sets through engine::Decide, sets with
// a tree through the codec as the service ticks them.
Moves CountFlips(const std::string& log, const loader::Catalog& candidate,
                 int64_t* entries) {
  Moves moves;
  auto reader = replay::LogReader::Open(log);
  EXPECT_THAT(reader.status(), IsOk());
  v1::DecisionLogEntry e;
  *entries = 0;
  while (*(*reader)->Next(&e)) {
    ++*entries;
    const auto set = candidate.Find(e.behaviour_set());
    v1::AgentSnapshot s = e.snapshot();
    s.clear_expected_revision();
    std::string action, target;
    if (set->compiled.tree() != nullptr) {
      v1::DecideRequest request;
      *request.add_agents() = s;
      v1::DecideResponse response;
      codec::DecideBatch(candidate, request, &response);
      action = response.decisions(0).action();
      target = response.decisions(0).target_id();
    } else {
      codec::AgentScratch scratch;
      engine::AgentInput input;
      EXPECT_THAT(codec::ResolveAgent(*set, s, &scratch, &input), IsOk());
      engine::Decision d;
      EXPECT_THAT(
          engine::Decide(set->compiled, input, engine::ExplainLevel::kNone, &d),
          IsOk());
      if (d.action >= 0) action = set->compiled.actions()[d.action].name;
      if (d.target >= 0) target = s.targets(d.target).target_id();
    }
    if (action != e.action() || target != e.target_id()) {
      ++moves[{e.behaviour_set(), e.action(), action}];
    }
  }
  return moves;
}

v1::ReplayReport RunReplay(const std::vector<std::string>& args, int* code,
                           std::string* err_text = nullptr) {
  std::ostringstream out, err;
  std::vector<std::string> all = {"replay", "--format", "json"};
  all.insert(all.end(), args.begin(), args.end());
  *code = ctl::RunUtilityctl(all, out, err);
  if (err_text != nullptr) *err_text = err.str();
  v1::ReplayReport report;
  EXPECT_TRUE(
      google::protobuf::util::JsonStringToMessage(out.str(), &report).ok())
      << out.str() << err.str();
  return report;
}

class ReplayIntegrationTest : public ::testing::Test {
 protected:
  // One simulator run against a server logging in binary, shared by the
  // tests of this suite.
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("utilityd_replay");
    log_ = (dir_->path() / "decisions.bin").string();
    testing::UtilitydProcess server(
        {"--config_dir=examples/behaviour_sets", "--decision_log=" + log_,
         "--decision_log_format=binary", "--decision_log_sample=0.1"});
    ASSERT_THAT(server.StartServing(), IsOk());
    const std::string sim_log = (dir_->path() / "sim.log").string();
    auto sim = testing::SpawnProcess(
        {UTILITYD_SIM_BINARY, "--target=" + server.address(), "--world=all",
         "--agents=40", "--duration=15s", "--realtime=false",
         "--report_every=100s"},
        sim_log);
    ASSERT_THAT(sim.status(), IsOk());
    ASSERT_EQ(testing::WaitProcess(*sim, absl::Seconds(120)), 0)
        << testing::ReadWholeFile(sim_log);
    server.Signal(SIGTERM);  // writes what is queued
    ASSERT_EQ(server.Wait(), 0) << server.Log();
  }
  static void TearDownTestSuite() { delete dir_; }

  static testing::TempDir* dir_;
  static std::string log_;
};
testing::TempDir* ReplayIntegrationTest::dir_ = nullptr;
std::string ReplayIntegrationTest::log_;

TEST_F(ReplayIntegrationTest, AnUnchangedCandidateReportsNoChurn) {
  int code = 0;
  const v1::ReplayReport r =
      RunReplay({"--log", log_, "--candidate", "examples/behaviour_sets",
                 "--max_churn", "0"},
                &code);
  EXPECT_EQ(code, 0);
  // 3 worlds x 40 agents x 10 Hz x 15 s (and the tick at 0).
  EXPECT_GE(r.entries_read(), 18000);
  EXPECT_EQ(r.replayed(), r.entries_read());
  EXPECT_EQ(r.errors(), 0);
  EXPECT_EQ(r.flipped(), 0);
  EXPECT_EQ(r.churn(), 0);
  EXPECT_EQ(r.sets_size(), 3);  // the tree's ticks replay too
}

TEST_F(ReplayIntegrationTest, FlipsEqualAnIndependentCount) {
  const fs::path candidate_dir = dir_->path() / "halved";
  WriteCandidate(candidate_dir, true);
  auto candidate = loader::LoadCatalog({candidate_dir.string()});
  ASSERT_THAT(candidate.status(), IsOk());
  int64_t entries = 0;
  const Moves expected = CountFlips(log_, *candidate, &entries);
  int64_t flips = 0;
  for (const auto& [key, n] : expected) flips += n;
  ASSERT_GT(flips, 100) << "halving take_cover should flip decisions";

  for (const char* baseline : {"", "examples/behaviour_sets"}) {
    SCOPED_TRACE(baseline);
    std::vector<std::string> args = {"--log", log_, "--candidate",
                                     candidate_dir.string()};
    if (*baseline != '\0') args.insert(args.end(), {"--baseline", baseline});
    int code = 0;
    const v1::ReplayReport r = RunReplay(args, &code);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(r.entries_read(), entries);
    EXPECT_EQ(r.flipped(), flips);
    EXPECT_DOUBLE_EQ(r.churn(),
                     static_cast<double>(flips) / static_cast<double>(entries));
    EXPECT_EQ(r.baseline_mismatches(), 0);
    Moves reported;
    for (const v1::SetChurn& s : r.sets()) {
      for (const v1::Transition& t : s.transitions()) {
        if (t.from() != t.to()) {
          reported[{s.behaviour_set(), t.from(), t.to()}] = t.count();
        }
      }
      if (s.behaviour_set() != "arena_mage") {
        EXPECT_EQ(s.flipped(), 0);
      }
    }
    EXPECT_EQ(reported, expected);
    EXPECT_GT(r.flip_margin().count(), 0);
    EXPECT_GT(r.examples_size(), 0);
  }

  // As a gate: above --max_churn exits 1 and says why.
  int code = 0;
  std::string err;
  RunReplay({"--log", log_, "--candidate", candidate_dir.string(),
             "--max_churn", "0.001"},
            &code, &err);
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("above --max_churn"));
}

// The same entries in JSON lines replay to the same report.
TEST_F(ReplayIntegrationTest, JsonAndBinaryFormsReplayAlike) {
  const std::string json = (dir_->path() / "decisions.jsonl").string();
  {
    auto reader = replay::LogReader::Open(log_);
    ASSERT_THAT(reader.status(), IsOk());
    std::ofstream out(json);
    v1::DecisionLogEntry e;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    while (*(*reader)->Next(&e)) {
      std::string line;
      ASSERT_TRUE(
          google::protobuf::util::MessageToJsonString(e, &line, options).ok());
      out << line << "\n";
    }
  }
  const fs::path candidate_dir = dir_->path() / "halved_too";
  WriteCandidate(candidate_dir, true);
  int code_a = 0, code_b = 0;
  v1::ReplayReport a = RunReplay(
      {"--log", log_, "--candidate", candidate_dir.string()}, &code_a);
  v1::ReplayReport b = RunReplay(
      {"--log", json, "--candidate", candidate_dir.string()}, &code_b);
  EXPECT_EQ(code_a, 0);
  EXPECT_EQ(code_b, 0);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
}

TEST_F(ReplayIntegrationTest, ACutLogNamesTheOffsetAndFails) {
  const std::string text = testing::ReadWholeFile(log_);
  const std::string cut = (dir_->path() / "cut.bin").string();
  // One byte short: the last entry is cut wherever entries fall (a cut at
  // half the file could land between two entries, and once did).
  std::ofstream(cut) << text.substr(0, text.size() - 1);
  int code = 0;
  std::string err;
  const v1::ReplayReport r = RunReplay(
      {"--log", cut, "--candidate", "examples/behaviour_sets"}, &code, &err);
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("byte offset"));
  EXPECT_GT(r.entries_read(), 0);  // what came before the cut is replayed
}

// Rows of a block are logged as the snapshots that decide the same: with
// their decision ids and entity ids, replayable, and counted by replay as
// the independent count says.
// A candidate catalog with one package changed: replay reports the churn
// per archetype, and an archetype that does not compose the package keeps
// every decision.
TEST(PackageReplayTest, AChangedPackageChurnsOnlyTheArchetypesComposingIt) {
  testing::TempDir dir("utilityd_package_replay");
  const std::string log = (dir.path() / "decisions.bin").string();
  {
    testing::UtilitydProcess server({"--config_dir=examples/catalog",
                                     "--decision_log=" + log,
                                     "--decision_log_format=binary"});
    ASSERT_THAT(server.StartServing(), IsOk());
    auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
        server.address(), grpc::InsecureChannelCredentials()));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(0, 1);
    v1::DecideRequest request;
    for (int i = 0; i < 400; ++i) {
      v1::AgentSnapshot* a = request.add_agents();
      const bool deer = i % 2 == 0;
      a->set_agent_id(absl::StrCat(i));
      a->set_behaviour_set(deer ? "deer" : "wolf");
      auto& f = *a->mutable_named_factors();
      f["health"] = unit(rng) * (deer ? 40 : 80);
      f["threat"] = unit(rng);
      f["hunger"] = unit(rng);
      f["food_distance"] = unit(rng) * 25;
      if (deer) continue;
      f["pack_distance"] = unit(rng) * 200;
      v1::TargetSnapshot* t = a->add_targets();
      t->set_target_id("deer-1");
      (*t->mutable_named_factors())["distance"] = unit(rng) * 30;
      (*t->mutable_named_factors())["target_health"] = unit(rng) * 100;
    }
    grpc::ClientContext context;
    v1::DecideResponse response;
    ASSERT_TRUE(stub->Decide(&context, request, &response).ok());
    server.Signal(SIGTERM);  // writes what is queued
    ASSERT_EQ(server.Wait(), 0) << server.Log();
  }
  // The candidates: the catalog with survival's flee counting hurt sooner,
  // and with melee's attack weighed down (the deer composes no melee).
  auto candidate = [&](const std::string& name, const std::string& file,
                       const std::string& from, const std::string& to) {
    const fs::path d = dir.path() / name;
    fs::create_directories(d);
    for (const auto& e : fs::directory_iterator("examples/catalog")) {
      fs::copy_file(e.path(), d / e.path().filename());
    }
    const std::string text = testing::ReadWholeFile((d / file).string());
    EXPECT_TRUE(absl::StrContains(text, from));
    std::ofstream(d / file) << absl::StrReplaceAll(text, {{from, to}});
    return d.string();
  };
  auto churn = [&](const std::string& candidate_dir) {
    int code = 0;
    const v1::ReplayReport r =
        RunReplay({"--log", log, "--candidate", candidate_dir}, &code);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(r.entries_read(), 400);
    std::map<std::string, int64_t> flipped;
    for (const v1::SetChurn& s : r.sets()) {
      flipped[s.behaviour_set()] = s.flipped();
      EXPECT_NE(s.baseline_revision(), "");
    }
    return flipped;
  };
  const auto survival = churn(
      candidate("survival", "survival.yaml", "midpoint: 0.3", "midpoint: 0.6"));
  EXPECT_GT(survival.at("deer"), 0);
  EXPECT_GT(survival.at("wolf"), 0);
  const auto melee =
      churn(candidate("melee", "melee.yaml", "  - name: attack\n",
                      "  - name: attack\n    weight: 0.2\n"));
  EXPECT_EQ(melee.at("deer"), 0);
  EXPECT_GT(melee.at("wolf"), 0);
}

TEST(BlockReplayTest, ALoggedBlockReplaysAsItsRowsDecided) {
  testing::TempDir dir("utilityd_block_replay");
  const std::string log = (dir.path() / "decisions.jsonl").string();
  testing::UtilitydProcess server(
      {"--config_dir=examples/behaviour_sets", "--decision_log=" + log});
  ASSERT_THAT(server.StartServing(), IsOk());
  auto catalog = loader::LoadCatalog({"examples/behaviour_sets"});
  ASSERT_THAT(catalog.status(), IsOk());
  const auto mage = catalog->Find("arena_mage");
  const engine::CompiledBehaviourSet& set = mage->compiled;
  constexpr int kRows = 96;
  v1::DecideRequest request;
  v1::AgentBlock* block = request.add_blocks();
  block->set_behaviour_set("arena_mage");
  block->set_layout(v1::FACTOR_LAYOUT_COLUMNS);
  for (int r = 0; r < kRows; ++r) block->add_agent_ids(9000 + 7 * r);
  for (int f = 0; f < set.factor_count(); ++f) {
    const engine::FactorDefinition& d = set.factors()[f];
    for (int r = 0; r < kRows; ++r) {
      const double t = ((r * 37 + f * 11) % kRows) / double{kRows - 1};
      block->add_factors(static_cast<float>(d.min + (d.max - d.min) * t));
    }
  }
  for (int r = 0; r < kRows; ++r) {
    block->add_current_action(r % (set.action_count() + 1) - 1);
  }
  auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::DecideResponse response;
  ASSERT_TRUE(stub->Decide(&context, request, &response).ok());
  server.Signal(SIGTERM);  // writes what is queued
  ASSERT_EQ(server.Wait(), 0) << server.Log();
  const v1::DecisionBlock& got = response.blocks(0);
  ASSERT_FALSE(got.has_error()) << got.error().message();
  ASSERT_TRUE(got.has_decision_id_base());

  auto reader = replay::LogReader::Open(log);
  ASSERT_THAT(reader.status(), IsOk());
  v1::DecisionLogEntry e;
  int r = 0;
  std::map<std::string, int> actions;
  while (*(*reader)->Next(&e)) {
    ASSERT_LT(r, kRows);
    SCOPED_TRACE(r);
    EXPECT_EQ(
        e.decision_id(),
        std::string(DecisionIdHex(DecisionId(got.decision_id_base(), r)).data(),
                    16));
    EXPECT_EQ(e.snapshot().agent_id(), absl::StrCat(9000 + 7 * r));
    const int a = got.action_index(r);
    EXPECT_EQ(e.action(), a >= 0 ? set.actions()[a].name : "");
    ++actions[e.action()];
    ++r;
  }
  EXPECT_EQ(r, kRows);
  EXPECT_GE(actions.size(), 3u) << "the rows should choose variously";

  int code = 0;
  const v1::ReplayReport same =
      RunReplay({"--log", log, "--candidate", "examples/behaviour_sets",
                 "--max_churn", "0"},
                &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(same.replayed(), kRows);
  EXPECT_EQ(same.flipped(), 0);
  const fs::path halved = dir.path() / "halved";
  WriteCandidate(halved, true);
  auto candidate = loader::LoadCatalog({halved.string()});
  ASSERT_THAT(candidate.status(), IsOk());
  int64_t entries = 0;
  const Moves expected = CountFlips(log, *candidate, &entries);
  int64_t flips = 0;
  for (const auto& [key, n] : expected) flips += n;
  EXPECT_GT(flips, 0) << "halving take_cover should move some rows";
  const v1::ReplayReport moved =
      RunReplay({"--log", log, "--candidate", halved.string()}, &code);
  EXPECT_EQ(moved.replayed(), kRows);
  EXPECT_EQ(moved.flipped(), flips);
}

// A log written with masked ids and without factor values: every entry is
// counted as not replayable, nothing is guessed, nothing crashes.
TEST(ReplayPrivacyTest, DroppedFactorsAreSkippedAndCounted) {
  testing::TempDir dir("utilityd_replay_private");
  const std::string log = (dir.path() / "decisions.jsonl").string();
  testing::UtilitydProcess server(testing::PrivateDecisionLogFlags(log));
  ASSERT_THAT(server.StartServing(), IsOk());
  auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
  v1::DecideRequest request;
  for (int i = 0; i < 5; ++i) {
    v1::AgentSnapshot* a = request.add_agents();
    a->set_agent_id(absl::StrCat("player-", i));
    a->set_behaviour_set("eat_hide_wander");
    for (float v : {0.1f * i, 0.2f, 5.0f, 3.0f}) a->add_factors(v);
  }
  grpc::ClientContext context;
  v1::DecideResponse response;
  ASSERT_TRUE(stub->Decide(&context, request, &response).ok());
  server.Signal(SIGTERM);
  ASSERT_EQ(server.Wait(), 0);
  const std::string text = testing::ReadWholeFile(log);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("player-")));
  EXPECT_THAT(text, HasSubstr("\"factors_dropped\":true"));
  int code = 0;
  const v1::ReplayReport r = RunReplay(
      {"--log", log, "--candidate", "examples/behaviour_sets"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(r.entries_read(), 5);
  EXPECT_EQ(r.skipped().at("not_replayable"), 5);
  EXPECT_EQ(r.replayed(), 0);
}

// The value of one labelled sample on /metrics: 0 when it was never
// incremented, -1 when /metrics does not answer.
double MetricValue(const testing::UtilitydProcess& server,
                   const std::string& name,
                   const testing::SampleLabels& labels) {
  httplib::Client http("127.0.0.1", server.http_port());
  auto res = http.Get("/metrics");
  if (!res || res->status != 200) return -1;
  const double value = testing::Sample(res->body, name, labels);
  return std::isnan(value) ? 0 : value;
}

// Waits until shadow evaluation has caught up: its counts stop moving.
void WaitShadowSettled(const testing::UtilitydProcess& server) {
  double last = -1;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const double now =
            server.MetricTotal("utilityd_shadow_decisions_total") +
            server.MetricTotal("utilityd_shadow_dropped_total");
        const bool settled = now > 0 && now == last;
        last = now;
        return settled;
      },
      absl::Seconds(30), absl::Milliseconds(300)));
}

// With every decision shadowed and logged, the server's shadow counters and
// its running report equal what utilityctl replay reports on the log: with
// the simulator's agents sent as snapshots, and with its worlds (but the
// goblins) as blocks of columns (a sampled block row is shadowed and logged as
// the snapshot that decides the same).
class ShadowFormsTest : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Forms, ShadowFormsTest,
                         ::testing::Values("snapshots", "columnar"),
                         [](const auto& param) { return param.param; });

TEST_P(ShadowFormsTest, CountersEqualWhatReplayReports) {
  testing::TempDir dir("utilityd_shadow");
  const fs::path candidate = dir.path() / "candidate";
  WriteCandidate(candidate, true);
  const std::string log = (dir.path() / "decisions.bin").string();
  // Every flip logged: at the default 1% sample (by the random decision
  // ids) a run with few flips may log none, which failed once.
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                                   "--shadow_config_dir=" + candidate.string(),
                                   "--shadow_sample=1", "--shadow_log_flips=1",
                                   "--decision_log=" + log,
                                   "--decision_log_format=binary"});
  ASSERT_THAT(server.StartServing(), IsOk());
  const std::string sim_log = (dir.path() / "sim.log").string();
  auto sim = testing::SpawnProcess(
      {UTILITYD_SIM_BINARY, "--target=" + server.address(), "--world=all",
       "--agents=30", "--duration=10s", "--realtime=false",
       "--report_every=100s", "--form=" + GetParam()},
      sim_log);
  ASSERT_THAT(sim.status(), IsOk());
  ASSERT_EQ(testing::WaitProcess(*sim, absl::Seconds(120)), 0)
      << testing::ReadWholeFile(sim_log);
  if (GetParam() == "columnar") {
    EXPECT_THAT(
        testing::ReadWholeFile(sim_log),
        HasSubstr("(as blocks: villager_needs, arena_mage, guard_tree)"));
  }
  WaitShadowSettled(server);
  EXPECT_EQ(server.MetricTotal("utilityd_shadow_dropped_total"), 0);
  httplib::Client http("127.0.0.1", server.http_port());
  auto res = http.Get("/api/v1/shadow");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  v1::ReplayReport shadow;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(res->body, &shadow).ok());
  const double flipped_metric =
      MetricValue(server, "utilityd_shadow_decisions_total",
                  {{"behaviour_set", "arena_mage"}, {"result", "flipped"}});
  const double total_metric =
      server.MetricTotal("utilityd_shadow_decisions_total");
  server.Signal(SIGTERM);
  ASSERT_EQ(server.Wait(), 0) << server.Log();
  EXPECT_THAT(server.Log(), HasSubstr("event=shadow_flip"));

  int code = 0;
  const v1::ReplayReport replayed =
      RunReplay({"--log", log, "--candidate", candidate.string()}, &code);
  ASSERT_EQ(code, 0);
  ASSERT_GT(replayed.flipped(), 50);
  EXPECT_EQ(total_metric, replayed.entries_read());
  EXPECT_EQ(shadow.entries_read(), replayed.entries_read());
  EXPECT_EQ(shadow.flipped(), replayed.flipped());
  EXPECT_DOUBLE_EQ(shadow.churn(), replayed.churn());
  EXPECT_EQ(shadow.baseline(), "live");
  ASSERT_EQ(shadow.sets_size(), replayed.sets_size());
  for (int i = 0; i < shadow.sets_size(); ++i) {
    const v1::SetChurn& a = shadow.sets(i);
    const v1::SetChurn& b = replayed.sets(i);
    SCOPED_TRACE(a.behaviour_set());
    EXPECT_EQ(a.behaviour_set(), b.behaviour_set());
    EXPECT_EQ(a.decisions(), b.decisions());
    EXPECT_EQ(a.flipped(), b.flipped());
    ASSERT_EQ(a.transitions_size(), b.transitions_size());
    for (int t = 0; t < a.transitions_size(); ++t) {
      EXPECT_EQ(a.transitions(t).SerializeAsString(),
                b.transitions(t).SerializeAsString());
    }
    if (a.behaviour_set() == "arena_mage") {
      EXPECT_EQ(flipped_metric, a.flipped());
    }
  }
}

// A shadow queue of one cannot keep up with a batch of 3,000: the rest is
// dropped and counted, and every agent still gets its decision.
TEST(ShadowIntegrationTest, AFullQueueDropsAndCounts) {
  testing::TempDir dir("utilityd_shadow_full");
  const fs::path candidate = dir.path() / "candidate";
  WriteCandidate(candidate, true);
  // The scoring workers at the shadow worker's priority: at their default
  // lower one (--worker_nice 10), on a busy machine the shadow worker got
  // the CPU first and kept up with a queue of one.
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                                   "--shadow_config_dir=" + candidate.string(),
                                   "--shadow_sample=1", "--shadow_queue=1",
                                   "--worker_nice=0"});
  ASSERT_THAT(server.StartServing(), IsOk());
  auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
  v1::DecideRequest request;
  for (int i = 0; i < 3000; ++i) {
    v1::AgentSnapshot* a = request.add_agents();
    a->set_agent_id(absl::StrCat("forager-", i));
    a->set_behaviour_set("villager_needs");
    for (int f = 0; f < 8; ++f) a->add_factors(0.1f * ((i + f) % 10));
  }
  grpc::ClientContext context;
  v1::DecideResponse response;
  ASSERT_TRUE(stub->Decide(&context, request, &response).ok());
  ASSERT_EQ(response.decisions_size(), 3000);
  for (const v1::Decision& d : response.decisions()) {
    ASSERT_FALSE(d.has_error()) << d.error().message();
  }
  WaitShadowSettled(server);
  const double dropped = server.MetricTotal("utilityd_shadow_dropped_total");
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(server.MetricTotal("utilityd_shadow_decisions_total") + dropped,
            3000);
}

// The candidate reloads like the live sets: a bad file is refused (the last
// good candidate stays), a good one replaces it and starts a new report.
TEST(ShadowIntegrationTest, TheCandidateReloadsAndABadOneIsRefused) {
  testing::TempDir dir("utilityd_shadow_reload");
  const fs::path candidate = dir.path() / "candidate";
  WriteCandidate(candidate, true);
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                                   "--shadow_config_dir=" + candidate.string(),
                                   "--shadow_sample=1",
                                   "--reload_interval=100ms"});
  ASSERT_THAT(server.StartServing(), IsOk());
  auto stub = v1::DecisionService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
  httplib::Client http("127.0.0.1", server.http_port());
  // The revision of the candidate that decided the latest arena decision. A
  // reload starts an empty report, and a decision queued just before it is
  // counted in the report it replaces: so each poll decides once more until
  // the report shows the set.
  auto candidate_revision = [&]() -> std::string {
    std::string revision;
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          v1::DecideRequest request;
          v1::AgentSnapshot* a = request.add_agents();
          a->set_behaviour_set("arena_mage");
          for (int f = 0; f < 10; ++f) a->add_factors(1);
          grpc::ClientContext context;
          v1::DecideResponse response;
          if (!stub->Decide(&context, request, &response).ok()) return false;
          auto res = http.Get("/api/v1/shadow");
          v1::ReplayReport r;
          if (!res || res->status != 200 ||
              !google::protobuf::util::JsonStringToMessage(res->body, &r)
                   .ok() ||
              r.sets_size() == 0) {
            return false;
          }
          revision = r.sets(0).candidate_revision();
          return true;
        },
        absl::Seconds(20)));
    return revision;
  };
  auto loads = [&]() -> size_t {
    const std::string log = server.Log();
    const std::vector<absl::string_view> parts =
        absl::StrSplit(log, "shadow_config_loaded");
    return parts.size() - 1;
  };
  const std::string first = candidate_revision();
  ASSERT_FALSE(first.empty());
  ASSERT_EQ(loads(), 1u);  // the start-up load

  const fs::path arena = candidate / "arena_mage.yaml";
  const std::string good = testing::ReadWholeFile(arena.string());
  std::ofstream(arena) << "name: arena_mage\nactions: [";
  ASSERT_TRUE(testing::WaitFor(
      [&] { return absl::StrContains(server.Log(), "shadow_config_rejected"); },
      absl::Seconds(10)));
  EXPECT_EQ(candidate_revision(), first);  // the last good one stays
  EXPECT_EQ(loads(), 1u);

  std::ofstream(arena) << absl::StrReplaceAll(
      good, {{"weight: 0.5\n", "weight: 0.25\n"}});
  ASSERT_TRUE(
      testing::WaitFor([&] { return loads() >= 2; }, absl::Seconds(10)));
  const std::string second = candidate_revision();
  EXPECT_FALSE(second.empty());
  EXPECT_NE(second, first);
}

TEST(ShadowIntegrationTest, OffUnlessConfigured) {
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets"});
  ASSERT_THAT(server.Start(), IsOk());
  httplib::Client http("127.0.0.1", server.http_port());
  auto res = http.Get("/api/v1/shadow");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(res->body, HasSubstr("--shadow_config_dir"));
  testing::UtilitydProcess bad({"--config_dir=examples/behaviour_sets",
                                "--shadow_config_dir=/tmp",
                                "--shadow_sample=2"});
  EXPECT_FALSE(bad.Start(absl::Seconds(10)).ok());
  EXPECT_THAT(bad.Log(), HasSubstr("shadow_sample: must be within 0..1"));
}

}  // namespace
}  // namespace utilityd
