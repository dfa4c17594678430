#include "ctl/commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ctl/run_utilityctl.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/v1/analysis.pb.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::ctl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::utilityd::testing::IsOk;

using test_util::Ctl;
using test_util::Result;

TEST(UtilityctlTest, ValidateIsCleanOnTheExamples) {
  const Result r = Ctl({"validate", "examples/behaviour_sets"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_THAT(r.out, HasSubstr("arena_mage@"));
  EXPECT_THAT(r.out, HasSubstr("9 scenarios hold"));
  EXPECT_THAT(r.out, HasSubstr("villager_needs@"));
  EXPECT_THAT(r.out, HasSubstr("eat_hide_wander@"));
}

TEST(UtilityctlTest, ValidateReportsEveryProblemAndExitsOne) {
  const Result r = Ctl({"validate", "tests/testdata/bad_set.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("bad_set.yaml:9:9: actions[0].considerations[0]."
                              "factor: unknown factor \"helth\" (did you mean "
                              "\"health\"?)"),
                    HasSubstr("curve.logistic.steepness: must be > 0"),
                    HasSubstr("selection.fallback_action: unknown action "
                              "\"sleep\"")));
}

TEST(UtilityctlTest, ValidateCatchesAScenarioThatNoLongerHolds) {
  const auto dir = std::filesystem::temp_directory_path() / "utilityctl_scn";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "s.yaml") << R"(name: s
factors: [{name: f}]
actions:
  - {name: a, considerations: [{name: c, factor: f}]}
  - {name: b, considerations: [{name: c, factor: f, curve: {linear: {}, invert: true}}]}
scenarios:
  - {name: High, factors: {f: 0.9}, expected_action: b}
)";
  const Result r = Ctl({"validate", dir.string()});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("scenario \"High\": expected b to win, got a"));
}

TEST(UtilityctlTest, DecideWritesTheResponseAsProtobufJson) {
  const Result r = Ctl({"decide", "--config_dir", "examples/behaviour_sets",
                        "--input", "examples/requests/arena_decide.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  v1::DecideResponse response;
  ASSERT_THAT(loader::ReadMessageOrError(r.out, "stdout", &response), IsOk());
  ASSERT_EQ(response.decisions_size(), 3);
  EXPECT_EQ(response.request_id(), 1u);
  EXPECT_EQ(response.decisions(0).action(), "recharge");
  EXPECT_TRUE(response.decisions(0).switched());
  EXPECT_EQ(response.decisions(1).action(), "eat");
  EXPECT_EQ(response.decisions(2).action(), "hide");
  EXPECT_GT(response.decisions(0).explanation().actions_size(), 7);
  EXPECT_THAT(r.out, HasSubstr("\"vetoed_by\": \"charges_left\""));
}

TEST(UtilityctlTest, DecideRunsScenariosAsATable) {
  const Result r =
      Ctl({"decide", "--set", "arena_mage", "--scenario",
           "staff empty, in cover", "--explain", "--format", "table"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("-> recharge"));
  EXPECT_THAT(r.out, HasSubstr("vetoed by charges_left"));
  EXPECT_THAT(r.out, HasSubstr("charges_missing"));
  EXPECT_THAT(r.out, HasSubstr("runner-up"));
}

TEST(UtilityctlTest, DecideSensitivityNamesWhatWouldChangeEachDecision) {
  Result r =
      Ctl({"decide", "--set", "arena_mage", "--scenario",
           "staff empty, in the open", "--sensitivity", "--format", "table"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("WHAT WOULD CHANGE IT"));
  // Health low enough makes her heal; charges enough make her attack.
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "health +80 hp +[0-9.]+ \\(-[0-9.]+\\) -> heal"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "charges .* none down to 0 +[0-9.]+ \\(\\+[0-9.]+\\) "
                         "-> attack@goblin-1"));
  r = Ctl({"decide", "--set", "arena_mage", "--scenario",
           "staff empty, in the open", "--sensitivity"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"sensitivity\""));
  EXPECT_THAT(r.out, HasSubstr("\"range_max\": 100"));
}

TEST(UtilityctlTest, DecideExplainLevelsAndBadFlags) {
  Result r = Ctl({"decide", "--set", "eat_hide_wander", "--explain=top"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("runner_up_action"));
  EXPECT_THAT(r.out, Not(HasSubstr("\"considerations\"")));
  r = Ctl({"decide", "--set", "eat_hide_wander", "--explain=most"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("expected none, top or full"));
  r = Ctl({"decide", "--set", "arena_mage", "--scenario", "nope"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("\"Staff empty, in cover\""));
  r = Ctl({"decide", "--bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown option --bogus"));
  r = Ctl({"decide"});
  EXPECT_EQ(r.code, 2);
}

TEST(UtilityctlTest, DecideReportsAnUnreadableRequest) {
  const Result r = Ctl({"decide", "--input", "tests/testdata/bad_set.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown field \"name\""));
}

TEST(UtilityctlTest, AnalyseGatesOnFindingsAndPrintsWitnesses) {
  // A set with one action outscored everywhere (analysis_test uses it too).
  const std::string dir = "tests/testdata/analysis";
  // A dead action fails by default; the table names it and the others'
  // witnesses.
  Result r = Ctl({"analyse", dir});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("weak: can never be selected: outscored by"),
                    HasSubstr("outscored by strong in"),
                    HasSubstr("name: \"analyse: strong wins\"")));
  EXPECT_THAT(r.err, HasSubstr("1 finding of the kinds --fail_on names"));
  // --fail_on none: the same report, exit 0; JSON parses as the report.
  r = Ctl({"analyse", dir, "--fail_on=none", "--format=json", "--samples=2000",
           "--map=x,y"});
  EXPECT_EQ(r.code, 0) << r.err;
  v1::AnalysisReport report;
  ASSERT_THAT(loader::ReadMessageOrError(r.out, "out", &report), IsOk());
  ASSERT_EQ(report.sets_size(), 1);
  EXPECT_EQ(report.sets(0).coverage().samples(), 2000);
  EXPECT_EQ(report.sets(0).coverage().map_rows_size(), 16);
  // Bad flags are usage errors naming what is wrong.
  r = Ctl({"analyse", dir, "--fail_on=deadly"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown finding \"deadly\""));
  r = Ctl({"analyse", dir, "--map=x,z"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--map: expected two different factors"));
  EXPECT_EQ(Ctl({"analyse"}).code, 2);
}

TEST(UtilityctlTest, TuneUnlocksWhatItIsToldAndNamesWhatItIsNot) {
  const std::string mage = "examples/behaviour_sets/arena_mage.yaml";
  // A margin the mage's scenarios miss: action weights fix it, exactly.
  Result r = Ctl({"tune", mage, "--margin=0.1", "--unlock=action_weights"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("exact"), HasSubstr("take_cover"),
                           HasSubstr("patch:")));
  r = Ctl({"tune", mage, "--margin=0.1", "--unlock=weights+bookends",
           "--format=json"});
  EXPECT_EQ(r.code, 0) << r.err;
  v1::TuneReport report;
  ASSERT_THAT(loader::ReadMessageOrError(r.out, "out", &report), IsOk());
  EXPECT_TRUE(report.feasible());
  EXPECT_EQ(report.method(), "local");
  r = Ctl({"tune", mage, "--unlock=colours"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown \"colours\""));
  r = Ctl({"tune", mage, "--keep_log"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--keep_log needs --log"));
}

TEST(UtilityctlTest, EveryCommandHasHelp) {
  // Every command of the table, so a new one cannot miss its help.
  const std::vector<std::string> commands = CommandNames();
  EXPECT_GE(commands.size(), 12u);
  const Result top = Ctl({"--help"});
  EXPECT_EQ(top.code, 0);
  for (const std::string& command : commands) {
    const Result r = Ctl({command, "--help"});
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_THAT(r.out, HasSubstr("usage: utilityctl " + command));
    EXPECT_THAT(top.out, HasSubstr("  " + command + " ")) << command;
  }
  EXPECT_EQ(Ctl({}).code, 2);
  EXPECT_EQ(Ctl({"frobnicate"}).code, 2);
}

}  // namespace
}  // namespace utilityd::ctl
