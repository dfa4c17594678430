// Canary rollouts through the real binary (docs/CANARY.md): two replicas
// serve the same agents the canary, within the share's binomial bound and
// the same call after call; per-variant metrics, the decision log and the
// reverse comparison count exactly; promotion (the share file at 1) and
// rollback (the directory removed) under a live stream lose nothing; a bad
// canary is refused while the live sets serve.
#include <httplib.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
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
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/codec/variants.h"
#include "utilityd/v1/decision_service.grpc.pb.h"
#include "utilityd/v1/replay.pb.h"

namespace utilityd {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::utilityd::testing::IsOk;

// The canary: the example sets, the forager's hide at half weight.
void WriteCanary(const fs::path& dir) {
  fs::create_directories(dir);
  for (const auto& f : fs::directory_iterator("examples/behaviour_sets")) {
    std::string text = testing::ReadWholeFile(f.path().string());
    if (f.path().filename() == "eat_hide_wander.yaml") {
      ASSERT_EQ(absl::StrReplaceAll(
                    {{"  - name: hide\n", "  - name: hide\n    weight: 0.5\n"}},
                    &text),
                1);
    }
    std::ofstream(dir / f.path().filename()) << text;
  }
}

// `n` foragers with ids "forager-<first + i>" and varied factors.
v1::DecideRequest Foragers(int first, int n) {
  v1::DecideRequest request;
  for (int i = first; i < first + n; ++i) {
    v1::AgentSnapshot* a = request.add_agents();
    a->set_agent_id(absl::StrCat("forager-", i));
    a->set_behaviour_set("eat_hide_wander");
    a->add_factors(0.1f * (i % 11));         // hunger
    a->add_factors(0.1f * ((i / 11) % 11));  // danger
    a->add_factors(2.5f * (i % 7));          // food_distance
    a->add_factors(1.0f * (i % 13));         // idle_time
  }
  return request;
}

// The sum of `family`'s samples on /metrics whose labels contain `labels`.
double MetricSum(const testing::UtilitydProcess& server,
                 const std::string& family, const std::string& labels) {
  httplib::Client http("127.0.0.1", server.http_port());
  auto res = http.Get("/metrics");
  if (!res || res->status != 200) return -1;
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(res->body, '\n')) {
    if (!absl::StartsWith(line, family + "{") ||
        !absl::StrContains(line, labels)) {
      continue;
    }
    sum += std::stod(std::string(line.substr(line.rfind(' ') + 1)));
  }
  return sum;
}

std::unique_ptr<v1::DecisionService::Stub> Stub(
    const testing::UtilitydProcess& server) {
  return v1::DecisionService::NewStub(grpc::CreateChannel(
      server.address(), grpc::InsecureChannelCredentials()));
}

// Agent id -> variant, of one unary call.
std::map<std::string, v1::Variant> Decide(v1::DecisionService::Stub& stub,
                                          const v1::DecideRequest& request) {
  grpc::ClientContext context;
  v1::DecideResponse response;
  const grpc::Status s = stub.Decide(&context, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  std::map<std::string, v1::Variant> variants;
  for (const v1::Decision& d : response.decisions()) {
    EXPECT_FALSE(d.has_error()) << d.error().message();
    variants[d.agent_id()] = d.variant();
  }
  return variants;
}

TEST(CanaryTest, TwoReplicasServeTheSameShareAndCountItExactly) {
  testing::TempDir dir("utilityd_canary");
  const fs::path canary = dir.path() / "canary";
  WriteCanary(canary);
  const std::string log = (dir.path() / "decisions.jsonl").string();
  constexpr double kShare = 0.3;
  std::vector<std::unique_ptr<testing::UtilitydProcess>> replicas;
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> args = {"--config_dir=examples/behaviour_sets",
                                     "--canary_config_dir=" + canary.string(),
                                     absl::StrCat("--canary_share=", kShare),
                                     "--canary_compare_sample=1"};
    if (r == 0) args.push_back("--decision_log=" + log);
    replicas.push_back(std::make_unique<testing::UtilitydProcess>(args));
    ASSERT_THAT(replicas.back()->StartServing(), IsOk());
  }
  constexpr int kAgents = 4000;
  const v1::DecideRequest request = Foragers(0, kAgents);
  auto a = Stub(*replicas[0]), b = Stub(*replicas[1]);
  const auto first = Decide(*a, request);
  const auto second = Decide(*b, request);
  const auto again = Decide(*a, request);
  ASSERT_EQ(first.size(), kAgents);
  int canaries = 0;
  for (const auto& [id, variant] : first) {
    ASSERT_EQ(second.at(id), variant) << id << ": replicas disagree";
    ASSERT_EQ(again.at(id), variant) << id << ": flipped variant";
    ASSERT_EQ(variant == v1::VARIANT_CANARY, codec::InCanaryShare(id, kShare))
        << id;
    canaries += variant == v1::VARIANT_CANARY ? 1 : 0;
  }
  const double sd = std::sqrt(kAgents * kShare * (1 - kShare));
  EXPECT_LT(std::abs(canaries - kAgents * kShare), 5 * sd) << canaries;

  // Metrics: replica a decided the request twice.
  const std::string set = "behaviour_set=\"eat_hide_wander\"";
  EXPECT_EQ(
      MetricSum(*replicas[0], "utilityd_decisions_total", "variant=\"canary\""),
      2 * canaries);
  EXPECT_EQ(
      MetricSum(*replicas[0], "utilityd_decisions_total", "variant=\"live\""),
      2 * (kAgents - canaries));
  EXPECT_EQ(MetricSum(*replicas[1], "utilityd_selected_score_count",
                      set + ",variant=\"canary\""),
            canaries);
  // Every canary decision decided again with the live sets; the halved
  // hide flips some.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return MetricSum(*replicas[0],
                         "utilityd_canary_compare_decisions_total",
                         set) == 2 * canaries;
      },
      absl::Seconds(20)));
  const double flipped =
      MetricSum(*replicas[0], "utilityd_canary_compare_decisions_total",
                "result=\"flipped\"");
  EXPECT_GT(flipped, 0);
  httplib::Client http("127.0.0.1", replicas[0]->http_port());
  auto status = http.Get("/api/v1/status");
  ASSERT_TRUE(status);
  EXPECT_THAT(status->body, HasSubstr("\"canary\":{\"config_dir\":"));
  EXPECT_THAT(status->body, HasSubstr("\"share\":0.3"));
  for (auto& r : replicas) {
    r->Signal(SIGTERM);
    EXPECT_EQ(r->Wait(), 0) << r->Log();
  }
  // The decision log says which variant decided each entry.
  int logged_canary = 0, logged = 0;
  for (absl::string_view line :
       absl::StrSplit(testing::ReadWholeFile(log), '\n', absl::SkipEmpty())) {
    ++logged;
    if (absl::StrContains(line, "\"variant\":\"VARIANT_CANARY\"")) {
      ++logged_canary;
    }
  }
  EXPECT_EQ(logged, 2 * kAgents);
  EXPECT_EQ(logged_canary, 2 * canaries);
  // utilityctl replay of the canary's decisions with the live sets flips
  // exactly what the server's comparison counted.
  std::ostringstream out, err;
  ASSERT_EQ(ctl::RunUtilityctl(
                {"replay", "--format", "json", "--log", log, "--candidate",
                 "examples/behaviour_sets", "--variant", "canary"},
                out, err),
            0)
      << err.str();
  v1::ReplayReport report;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(out.str(), &report).ok())
      << out.str();
  EXPECT_EQ(report.variants().at("canary"), 2 * canaries);
  EXPECT_EQ(report.variants().at("live"), 2 * (kAgents - canaries));
  EXPECT_EQ(report.skipped().at("other_variant"), 2 * (kAgents - canaries));
  EXPECT_EQ(report.replayed(), 2 * canaries);
  EXPECT_EQ(report.flipped(), flipped);
}

// What a stream of batches saw.
struct StreamTally {
  int sent = 0;
  int answered = 0;
  int duplicates = 0;
  int failed = 0;
  grpc::Status status;
};

// Streams batches of 200 foragers to `server`, every 5 ms, and calls
// `seen(canaries)` with each answer's count of canary decisions until it
// returns true or 30 s pass.
StreamTally StreamUntil(const testing::UtilitydProcess& server,
                        const std::function<bool(int)>& seen) {
  auto stub = Stub(server);
  grpc::ClientContext context;
  auto stream = stub->DecideStream(&context);
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      v1::DecideRequest request = Foragers(0, 200);
      request.set_request_id(static_cast<uint64_t>(i) + 1);
      if (!stream->Write(request)) break;
      sent.store(i + 1);
      absl::SleepFor(absl::Milliseconds(5));
    }
    stream->WritesDone();
  });
  StreamTally tally;
  std::set<uint64_t> answered;
  v1::DecideResponse response;
  const absl::Time start = absl::Now();
  while (stream->Read(&response)) {
    if (!answered.insert(response.request_id()).second) ++tally.duplicates;
    int canaries = 0;
    for (const v1::Decision& d : response.decisions()) {
      tally.failed += d.has_error() ? 1 : 0;
      canaries += d.variant() == v1::VARIANT_CANARY ? 1 : 0;
    }
    tally.failed += response.has_error() ? 1 : 0;
    if (seen(canaries) || absl::Now() - start > absl::Seconds(30)) {
      stop.store(true);
    }
  }
  writer.join();
  tally.status = stream->Finish();
  tally.sent = sent.load();
  tally.answered = static_cast<int>(answered.size());
  return tally;
}

void ExpectNothingLost(const StreamTally& tally) {
  EXPECT_TRUE(tally.status.ok()) << tally.status.error_message();
  EXPECT_EQ(tally.answered, tally.sent);
  EXPECT_EQ(tally.duplicates, 0);
  EXPECT_EQ(tally.failed, 0);
}

// A stream keeps deciding while the share file promotes the canary to
// every agent and the directory's removal rolls it back: every batch is
// answered exactly once, no agent fails, and each phase is seen.
TEST(CanaryTest, PromotionAndRollbackUnderALiveStreamLoseNothing) {
  testing::TempDir dir("utilityd_canary_stream");
  const fs::path canary = dir.path() / "canary";
  WriteCanary(canary);
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                                   "--canary_config_dir=" + canary.string(),
                                   "--canary_share=0.2",
                                   "--reload_interval=100ms"});
  ASSERT_THAT(server.StartServing(), IsOk());
  // Shares of the canary seen per batch: partial, all, then none.
  bool partial = false, all = false, none_after_all = false;
  int phase = 0;  // 0: share 0.2; 1: promoted; 2: rolled back
  const StreamTally tally = StreamUntil(server, [&](int canaries) {
    if (phase == 0 && canaries > 0 && canaries < 200) {
      partial = true;
      std::ofstream(canary / "share") << "1\n";
      phase = 1;
    } else if (phase == 1 && canaries == 200) {
      all = true;
      fs::remove_all(canary);
      phase = 2;
    } else if (phase == 2 && canaries == 0) {
      none_after_all = true;
    }
    return none_after_all;
  });
  ExpectNothingLost(tally);
  EXPECT_TRUE(partial);
  EXPECT_TRUE(all) << "the share file never promoted the canary";
  EXPECT_TRUE(none_after_all) << "removing the directory never rolled back";
  EXPECT_EQ(server.MetricTotal("utilityd_canary_share"), 0);
  server.Signal(SIGTERM);
  ASSERT_EQ(server.Wait(), 0) << server.Log();
  EXPECT_THAT(server.Log(), HasSubstr("event=canary_off"));
}

// docs/CANARY.md: "remove the canary directory, or every set in it". A
// ConfigMap mount cannot be removed, only emptied: two replicas serving
// the canary to every agent (share file 1) over live streams both go back
// to the live sets when every set is removed and the directory stays, with
// its share file; and once more with the share file gone too, under
// --canary_share.
TEST(CanaryTest, EmptyingTheDirectoryRollsBackOnTwoReplicas) {
  for (const bool keep_share_file : {true, false}) {
    SCOPED_TRACE(keep_share_file ? "share file kept" : "share file removed");
    testing::TempDir dir("utilityd_canary_empty");
    const fs::path canary = dir.path() / "canary";
    WriteCanary(canary);
    std::ofstream(canary / "share") << "1\n";
    const std::vector<std::string> flags = {
        "--config_dir=examples/behaviour_sets",
        "--canary_config_dir=" + canary.string(), "--canary_share=0.5",
        "--reload_interval=100ms"};
    testing::UtilitydProcess a(flags), b(flags);
    ASSERT_THAT(a.StartServing(), IsOk());
    ASSERT_THAT(b.StartServing(), IsOk());
    std::atomic<int> promoted{0};
    std::atomic<bool> emptied{false};
    auto watch = [&](int canaries, bool* all, bool* none_after) {
      if (!*all && canaries == 200) {
        *all = true;
        ++promoted;
      }
      if (emptied.load() && canaries == 0) *none_after = true;
      return *none_after;
    };
    bool all_a = false, all_b = false, none_a = false, none_b = false;
    StreamTally tally_a, tally_b;
    std::thread stream_a([&] {
      tally_a =
          StreamUntil(a, [&](int c) { return watch(c, &all_a, &none_a); });
    });
    std::thread stream_b([&] {
      tally_b =
          StreamUntil(b, [&](int c) { return watch(c, &all_b, &none_b); });
    });
    ASSERT_TRUE(testing::WaitFor([&] { return promoted.load() == 2; },
                                 absl::Seconds(20)));
    for (const auto& f : fs::directory_iterator(canary)) {
      if (f.path().filename() != "share" || !keep_share_file) {
        fs::remove(f.path());
      }
    }
    emptied.store(true);
    stream_a.join();
    stream_b.join();
    ExpectNothingLost(tally_a);
    ExpectNothingLost(tally_b);
    EXPECT_TRUE(none_a) << "replica a still serves the canary";
    EXPECT_TRUE(none_b) << "replica b still serves the canary";
    for (testing::UtilitydProcess* server : {&a, &b}) {
      EXPECT_THAT(server->Log(), HasSubstr("event=canary_off"));
      EXPECT_THAT(server->Log(),
                  Not(HasSubstr("event=canary_config_rejected")));
    }
  }
}

// A canary that does not load is refused, with the reason, and every agent
// is decided by the live sets; a later good one is served.
TEST(CanaryTest, ABadCanaryIsRefusedWhileTheLiveSetsServe) {
  testing::TempDir dir("utilityd_canary_bad");
  const fs::path canary = dir.path() / "canary";
  fs::create_directories(canary);
  std::ofstream(canary / "eat_hide_wander.yaml") << "name: [unclosed\n";
  testing::UtilitydProcess server({"--config_dir=examples/behaviour_sets",
                                   "--canary_config_dir=" + canary.string(),
                                   "--canary_share=1",
                                   "--reload_interval=100ms"});
  ASSERT_THAT(server.StartServing(), IsOk());
  auto stub = Stub(server);
  for (const auto& [id, variant] : Decide(*stub, Foragers(0, 50))) {
    EXPECT_EQ(variant, v1::VARIANT_LIVE) << id;
  }
  EXPECT_GE(
      MetricSum(server, "utilityd_canary_reloads_total", "result=\"failure\""),
      1);
  EXPECT_THAT(server.Log(), HasSubstr("event=canary_config_rejected"));
  fs::remove(canary / "eat_hide_wander.yaml");
  WriteCanary(canary);
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        const auto v = Decide(*stub, Foragers(0, 50));
        return v.begin()->second == v1::VARIANT_CANARY;
      },
      absl::Seconds(10)));
  for (const auto& [id, variant] : Decide(*stub, Foragers(0, 50))) {
    EXPECT_EQ(variant, v1::VARIANT_CANARY) << id;
  }
}

}  // namespace
}  // namespace utilityd
