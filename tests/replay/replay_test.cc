// The replay library on logs written here: both log forms and their errors,
// skips, errors, churn and total variation against independent
// computations through the engine's API. tests/integration/replay_test.cc
// replays what the real server logged under the simulator.
#include "utilityd/replay/replay.h"

#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/engine/decide.h"
#include "utilityd/replay/log_reader.h"

namespace utilityd::replay {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;

// A forager's snapshot with random factors (some exactly 0 or 1).
v1::AgentSnapshot RandomForager(std::mt19937& rng, int i) {
  std::uniform_real_distribution<float> u(0, 1);
  auto pick = [&] {
    const float x = u(rng);
    return x < 0.1f ? 0.0f : x > 0.9f ? 1.0f : u(rng);
  };
  v1::AgentSnapshot s;
  s.set_agent_id(absl::StrCat("forager-", i));
  s.set_behaviour_set("eat_hide_wander");
  for (float v : {pick(), pick(), 25 * pick(), 20 * pick()}) s.add_factors(v);
  if (i % 3 == 0) s.set_current_action("wander");
  s.set_seed(static_cast<uint64_t>(rng()));
  return s;
}

// What `set` decides for `snapshot`, through the engine's own API.
engine::Decision Decided(const loader::LoadedSet& set,
                         const v1::AgentSnapshot& snapshot,
                         engine::ExplainLevel level) {
  codec::AgentScratch scratch;
  engine::AgentInput input;
  engine::Decision d;
  EXPECT_THAT(codec::ResolveAgent(set, snapshot, &scratch, &input), IsOk());
  EXPECT_THAT(engine::Decide(set.compiled, input, level, &d), IsOk());
  return d;
}

// A log entry as the server writes it: the snapshot and the decision `set`
// made for it.
v1::DecisionLogEntry Logged(const loader::LoadedSet& set,
                            const v1::AgentSnapshot& s, int i) {
  v1::DecisionLogEntry e;
  e.set_decision_id(absl::StrCat("id-", i));
  e.set_agent_id(s.agent_id());
  e.set_behaviour_set(s.behaviour_set());
  e.set_revision(set.revision());
  *e.mutable_snapshot() = s;
  const engine::Decision d = Decided(set, s, engine::ExplainLevel::kNone);
  e.set_action(set.compiled.actions()[d.action].name);
  e.set_score(d.score);
  return e;
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream in("examples/behaviour_sets/eat_hide_wander.yaml");
    std::stringstream text;
    text << in.rdbuf();
    original_ = text.str();
    baseline_ = Load(original_);
  }

  static loader::Catalog Load(const std::string& text) {
    auto set = loader::LoadSetText(text, "eat_hide_wander.yaml");
    EXPECT_THAT(set.status(), IsOk());
    return *loader::Catalog::Of({*set});
  }
  // The forager with `from` replaced by `to` in its YAML, without its
  // scenarios (which expect the original's winners).
  loader::Catalog Changed(absl::string_view from, absl::string_view to) {
    EXPECT_THAT(original_, HasSubstr(std::string(from)));
    const std::string text = absl::StrReplaceAll(original_, {{from, to}});
    return Load(text.substr(0, text.find("\nscenarios:")));
  }
  std::vector<v1::DecisionLogEntry> Log(int n) {
    std::mt19937 rng(7);
    std::vector<v1::DecisionLogEntry> log;
    const auto set = baseline_.Find("eat_hide_wander");
    for (int i = 0; i < n; ++i)
      log.push_back(Logged(*set, RandomForager(rng, i), i));
    return log;
  }

  std::string original_;
  loader::Catalog baseline_;
};

TEST_F(ReplayTest, AnUnchangedCandidateChangesNothing) {
  Replayer replayer({.candidate = InCatalog(baseline_)});
  for (auto& e : Log(600)) replayer.Add(e);
  const v1::ReplayReport r = replayer.Report();
  EXPECT_EQ(r.entries_read(), 600);
  EXPECT_EQ(r.replayed(), 600);
  EXPECT_EQ(r.flipped(), 0);
  EXPECT_EQ(r.churn(), 0);
  EXPECT_EQ(r.winner_score_change().max(), 0);
  ASSERT_EQ(r.sets_size(), 1);
  int64_t wins = 0;
  for (const auto& a : r.sets(0).actions()) wins += a.baseline_wins();
  EXPECT_EQ(wins, 600);
}

// Flips, transitions and margins equal those counted here by deciding each
// snapshot with the candidate through the engine.
TEST_F(ReplayTest, FlipsAndMarginsEqualAnIndependentCount) {
  const loader::Catalog candidate =
      Changed("  - name: hide\n", "  - name: hide\n    weight: 0.5\n");
  const auto set = candidate.Find("eat_hide_wander");
  std::vector<v1::DecisionLogEntry> log = Log(700);
  int64_t flips = 0;
  std::map<std::pair<std::string, std::string>, int64_t> moves;
  std::vector<double> margins;
  for (const auto& e : log) {
    const engine::Decision d =
        Decided(*set, e.snapshot(), engine::ExplainLevel::kTop);
    const std::string now = set->compiled.actions()[d.action].name;
    if (now == e.action()) continue;
    ++flips;
    ++moves[{e.action(), now}];
    for (const auto& c : d.candidates) {
      if (set->compiled.actions()[c.action].name == e.action()) {
        margins.push_back(d.score - c.score);
      }
    }
  }
  ASSERT_GT(flips, 20) << "the change should flip some decisions";

  int64_t told_flips = 0, told = 0;
  Replayer replayer({.candidate = InCatalog(candidate),
                     .on_compared = [&](const Comparison& c) {
                       ++told;
                       told_flips += c.result == Comparison::Result::kFlipped;
                       EXPECT_EQ(c.churn,
                                 c.result == Comparison::Result::kFlipped);
                     }});
  // Reported half way, then to the end: the report covers all added.
  for (size_t i = 0; i < log.size() / 2; ++i) replayer.Add(log[i]);
  EXPECT_EQ(replayer.Report().replayed(), 350);
  for (size_t i = log.size() / 2; i < log.size(); ++i) replayer.Add(log[i]);
  const v1::ReplayReport r = replayer.Report();
  EXPECT_EQ(told, 700);
  EXPECT_EQ(told_flips, flips);
  EXPECT_EQ(r.flipped(), flips);
  EXPECT_DOUBLE_EQ(r.churn(), static_cast<double>(flips) / 700);
  std::map<std::pair<std::string, std::string>, int64_t> reported;
  for (const auto& t : r.sets(0).transitions()) {
    if (t.from() != t.to()) reported[{t.from(), t.to()}] = t.count();
  }
  EXPECT_EQ(reported, moves);
  EXPECT_EQ(r.flip_margin().count(), flips);
  std::sort(margins.begin(), margins.end());
  EXPECT_FLOAT_EQ(r.flip_margin().max(), margins.back());
  // Halving hide only takes wins from it.
  for (const auto& a : r.sets(0).actions()) {
    if (a.action() == "hide") {
      EXPECT_EQ(a.newly_winning(), 0);
      EXPECT_GT(a.churn(), 0);
    }
  }
  ASSERT_EQ(r.examples_size(), 3);
  EXPECT_EQ(r.examples(0).baseline().action(), "hide");
  EXPECT_THAT(r.examples(0).candidate().summary(), HasSubstr("hide"));
}

TEST_F(ReplayTest, ABaselineDirectoryAtTheLoggedRevisionMatchesTheLog) {
  const loader::Catalog candidate =
      Changed("  - name: hide\n", "  - name: hide\n    weight: 0.5\n");
  Replayer logged({.candidate = InCatalog(candidate)});
  Replayer decided({.candidate = InCatalog(candidate),
                    .baseline = InCatalog(baseline_),
                    .baseline_name = "examples"});
  for (auto& e : Log(300)) {
    logged.Add(e);
    decided.Add(e);
  }
  const v1::ReplayReport a = logged.Report(), b = decided.Report();
  EXPECT_EQ(b.baseline_mismatches(), 0);
  EXPECT_EQ(b.baseline(), "examples");
  EXPECT_EQ(a.flipped(), b.flipped());
  EXPECT_EQ(a.churn(), b.churn());
  // A baseline that decides otherwise than the log at the logged revision
  // is reported.
  const loader::Catalog other =
      Changed("  - name: eat\n", "  - name: eat\n    weight: 0.2\n");
  Replayer checked(
      {.candidate = InCatalog(candidate), .baseline = InCatalog(other)});
  for (auto e : Log(300)) {
    e.set_revision(other.Find("eat_hide_wander")->revision());
    checked.Add(e);
  }
  EXPECT_GT(checked.Report().baseline_mismatches(), 0);
}

// A random strategy is compared by the total variation between the two
// selection distributions; without the baseline's sets it cannot be known.
TEST_F(ReplayTest, RandomStrategiesCompareDistributions) {
  const loader::Catalog candidate =
      Changed("selection:\n  highest: {}", "selection:\n  weighted_random: {}");
  const auto set = candidate.Find("eat_hide_wander");
  std::vector<v1::DecisionLogEntry> log = Log(200);
  double tv_sum = 0;
  for (const auto& e : log) {
    const engine::Decision d =
        Decided(*set, e.snapshot(), engine::ExplainLevel::kTop);
    // The baseline (highest) puts everything on the logged action.
    double p_logged = 0;
    bool any = false;
    for (const auto& c : d.candidates) {
      any |= c.probability > 0;
      if (set->compiled.actions()[c.action].name == e.action()) {
        p_logged = c.probability;
      }
    }
    if (!any) p_logged = set->compiled.actions()[d.action].name == e.action();
    tv_sum += 1 - p_logged;
  }
  Replayer without({.candidate = InCatalog(candidate)});
  Replayer with(
      {.candidate = InCatalog(candidate), .baseline = InCatalog(baseline_)});
  for (auto& e : log) {
    without.Add(e);
    with.Add(e);
  }
  const v1::ReplayReport a = without.Report();
  EXPECT_EQ(a.skipped().at("revision_not_available"), 200);
  EXPECT_EQ(a.replayed(), 0);
  const v1::ReplayReport b = with.Report();
  EXPECT_EQ(b.random_decisions(), 200);
  EXPECT_NEAR(b.churn(), tv_sum / 200, 1e-9);
  EXPECT_GT(b.churn(), 0.05);
  EXPECT_NEAR(b.total_variation().mean(), tv_sum / 200, 1e-9);
}

TEST_F(ReplayTest, SkipsAndErrorsAreCountedNeverGuessed) {
  std::vector<v1::DecisionLogEntry> log = Log(10);
  log[0].clear_snapshot();           // written before replay existed
  log[1].set_factors_dropped(true);  // the privacy option
  log[1].mutable_snapshot()->clear_factors();
  log[2].set_behaviour_set("gone");           // no such set
  log[3].mutable_snapshot()->add_factors(1);  // one value too many
  // A candidate with a factor more refuses every packed snapshot.
  const loader::Catalog grown = Changed(
      "  - {name: idle_time,", "  - {name: smell}\n  - {name: idle_time,");
  for (const loader::Catalog* c :
       {static_cast<const loader::Catalog*>(&baseline_), &grown}) {
    Replayer replayer({.candidate = InCatalog(*c)});
    for (const auto& e : log) replayer.Add(e);
    const v1::ReplayReport r = replayer.Report();
    EXPECT_EQ(r.entries_read(), 10);
    EXPECT_EQ(r.skipped().at("not_replayable"), 2);
    EXPECT_EQ(r.skipped().at("unknown_set"), 1);
    EXPECT_EQ(r.replayed(), 7);
    // The snapshot with a value too many fits the grown set.
    EXPECT_EQ(r.errors(), c == &baseline_ ? 1 : 6);
    ASSERT_EQ(r.sets_size(), 1);
    EXPECT_THAT(r.sets(0).first_error(), HasSubstr("factors"));
  }
}

TEST(LogReaderTest, ReadsBothFormsAndDetectsThem) {
  testing::TempDir dir("utilityd_logreader");
  std::vector<v1::DecisionLogEntry> entries(3);
  for (int i = 0; i < 3; ++i) {
    entries[i].mutable_time()->set_seconds(1700000000 + i);
    entries[i].set_decision_id(absl::StrCat("d", i));
    entries[i].mutable_snapshot()->add_factors(0.5f * i);
  }
  std::string binary, json;
  for (const auto& e : entries) {
    AppendDelimited(e, &binary);
    json += "{\"time\":\"2023-11-14T22:13:20Z\",\"decision_id\":\"" +
            e.decision_id() + "\",\"some_future_field\":1}\n\n";
  }
  std::ofstream(dir.path() / "log.bin") << binary;
  std::ofstream(dir.path() / "log.jsonl") << json;
  for (const char* name : {"log.bin", "log.jsonl"}) {
    auto reader = LogReader::Open((dir.path() / name).string());
    ASSERT_THAT(reader.status(), IsOk());
    v1::DecisionLogEntry e;
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<bool> more = (*reader)->Next(&e);
      ASSERT_THAT(more.status(), IsOk());
      ASSERT_TRUE(*more);
      EXPECT_EQ(e.decision_id(), absl::StrCat("d", i));
    }
    EXPECT_FALSE(*(*reader)->Next(&e));
    EXPECT_EQ((*reader)->form(), std::string(name) == "log.bin"
                                     ? LogReader::Form::kBinary
                                     : LogReader::Form::kJson);
  }
  EXPECT_FALSE(LogReader::Open((dir.path() / "missing").string()).ok());

  // A binary entry of 10 bytes starts with '\n': still binary. A JSON log
  // may start with blank lines; its lines keep their numbers.
  v1::DecisionLogEntry small;
  small.mutable_time()->set_seconds(1);
  small.set_decision_id("abcd");
  std::string tiny;
  AppendDelimited(small, &tiny);
  ASSERT_EQ(tiny[0], '\n');
  std::ofstream(dir.path() / "tiny.bin") << tiny << tiny;
  std::ofstream(dir.path() / "blank.jsonl")
      << "\n \n{\"decision_id\":\"x\"}\n{oops\n";
  auto t = LogReader::Open((dir.path() / "tiny.bin").string());
  v1::DecisionLogEntry e;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(*(*t)->Next(&e));
    EXPECT_EQ(e.decision_id(), "abcd");
  }
  EXPECT_FALSE(*(*t)->Next(&e));
  auto b = LogReader::Open((dir.path() / "blank.jsonl").string());
  ASSERT_TRUE(*(*b)->Next(&e));
  EXPECT_EQ(e.decision_id(), "x");
  EXPECT_THAT(std::string((*b)->Next(&e).status().message()),
              HasSubstr("blank.jsonl:4:"));
}

// A bad JSON line names its line and reading goes on; a binary log cut
// short or corrupt names the byte offset of the entry and ends.
TEST(LogReaderTest, BadEntriesNameTheirLineOrOffset) {
  testing::TempDir dir("utilityd_logreader_bad");
  std::ofstream(dir.path() / "bad.jsonl")
      << "{\"decision_id\":\"a\"}\n{\"decision_id\": "
         "12\n{\"decision_id\":\"c\"}\n";
  auto json = LogReader::Open((dir.path() / "bad.jsonl").string());
  ASSERT_THAT(json.status(), IsOk());
  v1::DecisionLogEntry e;
  EXPECT_TRUE(*(*json)->Next(&e));
  const absl::StatusOr<bool> bad = (*json)->Next(&e);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("bad.jsonl:2:"));
  EXPECT_TRUE(*(*json)->Next(&e));
  EXPECT_EQ(e.decision_id(), "c");

  v1::DecisionLogEntry one;
  one.mutable_time()->set_seconds(1);
  one.set_decision_id("first");
  std::string binary;
  AppendDelimited(one, &binary);
  const size_t second = binary.size();
  AppendDelimited(one, &binary);
  std::ofstream(dir.path() / "cut.bin") << binary.substr(0, binary.size() - 3);
  auto cut = LogReader::Open((dir.path() / "cut.bin").string());
  EXPECT_TRUE(*(*cut)->Next(&e));
  const absl::StatusOr<bool> truncated = (*cut)->Next(&e);
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(truncated.status().message()),
              HasSubstr(absl::StrCat("byte offset ", second)));
  EXPECT_TRUE((*cut)->failed());
  EXPECT_FALSE(*(*cut)->Next(&e));

  // A size far beyond any entry, then garbage where an entry should be.
  std::string huge = binary.substr(0, second) + "\xff\xff\xff\xff\x0f";
  std::ofstream(dir.path() / "huge.bin") << huge;
  auto h = LogReader::Open((dir.path() / "huge.bin").string());
  EXPECT_TRUE(*(*h)->Next(&e));
  EXPECT_THAT(std::string((*h)->Next(&e).status().message()),
              HasSubstr("limit"));
  std::string garbage = binary.substr(0, second) + "\x03\xff\xff\xff";
  std::ofstream(dir.path() / "garbage.bin") << garbage;
  auto g = LogReader::Open((dir.path() / "garbage.bin").string());
  EXPECT_TRUE(*(*g)->Next(&e));
  EXPECT_THAT(std::string((*g)->Next(&e).status().message()),
              HasSubstr("not a decision-log entry"));
}

}  // namespace
}  // namespace utilityd::replay
