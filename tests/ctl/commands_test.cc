#include "ctl/commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ctl/replay_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ctl/run_utilityctl.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
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

// replay's text report: the totals, a set's table of actions and moves
// (unchanged moves left out), and an example with both sides.
TEST(ReplayReportTest, SaysTheTotalsTheMovesAndTheExamples) {
  v1::ReplayReport r;
  r.set_entries_read(10);
  r.set_replayed(9);
  r.set_errors(1);
  r.set_baseline("log");
  r.set_flipped(2);
  r.set_churn(0.25);
  v1::SetChurn* set = r.add_sets();
  set->set_behaviour_set("villager_needs");
  set->set_baseline_revision("aaaa");
  set->set_candidate_revision("bbbb");
  set->set_flipped(2);
  set->set_decisions(8);
  set->set_churn(0.25);
  v1::ActionChurn* a = set->add_actions();
  a->set_action("eat");
  a->set_baseline_wins(5);
  a->set_candidate_wins(3);
  v1::Transition* moved = set->add_transitions();
  moved->set_from("eat");
  moved->set_to("sleep");
  moved->set_count(2);
  v1::Transition* kept = set->add_transitions();
  kept->set_from("sleep");
  kept->set_to("sleep");
  kept->set_count(6);
  v1::ReplayExample* x = r.add_examples();
  x->set_decision_id("0123456789abcdef");
  x->set_agent_id("villager-7");
  x->set_behaviour_set("villager_needs");
  x->mutable_baseline()->set_action("eat");
  x->mutable_candidate()->set_action("sleep");
  x->mutable_candidate()->set_summary("sleep: tired 0.9");
  const std::string text = FormatReplayReport(r);
  EXPECT_THAT(text, HasSubstr("entries read 10, replayed 9, errors 1; "
                              "baseline: log\n"));
  EXPECT_THAT(text, HasSubstr("churn 25.00%  (2 flipped of 8 compared)"));
  EXPECT_THAT(text, HasSubstr("villager_needs  aaaa -> bbbb  churn 25.00%"));
  EXPECT_THAT(
      text,
      HasSubstr("    eat                -> sleep                     2\n"));
  EXPECT_THAT(text, Not(HasSubstr("sleep                -> sleep")));
  EXPECT_THAT(text, HasSubstr("example 0123456789abcdef  villager-7"));
  EXPECT_THAT(text, HasSubstr("  candidate: sleep: tired 0.9\n"));
}

TEST(UtilityctlTest, ValidateIsCleanOnTheExamples) {
  const Result r = Ctl({"validate", "examples/behaviour_sets"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_THAT(r.out, HasSubstr("arena_mage@"));
  EXPECT_THAT(r.out, HasSubstr("9 scenarios hold"));
  EXPECT_THAT(r.out, HasSubstr("villager_needs@"));
  EXPECT_THAT(r.out, HasSubstr("eat_hide_wander@"));
  // The catalog of packages and archetypes: every scenario holds.
  const Result c = Ctl({"validate", "examples/catalog"});
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_THAT(c.out, AllOf(HasSubstr("package survival  (2 factors, 2 actions; "
                                     "used by bandit, deer, wolf)"),
                           HasSubstr("3 scenarios hold; packages melee, "
                                     "archery, survival)")));
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

// A catalog of packages and the archetypes composing them: validate reports
// each package with its users, and `packages` says what an edit reaches.
TEST(UtilityctlTest, ValidateAndPackagesReportPerArchetypeAndPackage) {
  const testing::TempDir dir("utilityctl_packages");
  std::ofstream(dir.path() / "survival.yaml") << R"(package: survival
factors: [{name: health, max: 100}]
actions:
  - {name: flee, considerations: [{name: hurt, factor: health, range: {min: 100, max: 0}}]}
)";
  std::ofstream(dir.path() / "pack.yaml") << R"(package: pack
uses: [{package: survival}]
actions: [{name: howl, weight: 0.2}]
)";
  std::ofstream(dir.path() / "unused.yaml") << "package: unused\n";
  std::ofstream(dir.path() / "wolf.yaml") << R"(name: wolf
factors: [{name: health, max: 60}]
uses: [{package: pack}]
actions: [{name: bite, weight: 0.5}]
scenarios:
  - {name: Nearly dead, factors: {health: 3}, expected_action: flee}
)";
  std::ofstream(dir.path() / "deer.yaml") << R"(name: deer
uses: [{package: survival, actions: {flee: {weight: 2}}}]
actions: [{name: graze, weight: 0.1}]
)";
  const Result v = Ctl({"validate", dir.path().string()});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_THAT(v.out, AllOf(HasSubstr("package survival  (1 factors, 1 actions; "
                                     "used by deer, wolf)"),
                           HasSubstr("package unused  (0 factors, 0 actions; "
                                     "used by no set)"),
                           HasSubstr("1 scenarios hold; packages pack, "
                                     "survival)")));
  const Result list = Ctl({"packages", dir.path().string()});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_THAT(list.out, AllOf(HasSubstr("PACKAGE"), HasSubstr("deer,wolf"),
                              HasSubstr("unused")));
  const Result one =
      Ctl({"packages", dir.path().string(), "--package", "survival"});
  EXPECT_EQ(one.out, "deer\nwolf\n");
  const Result typo =
      Ctl({"packages", dir.path().string(), "--package", "survivl"});
  EXPECT_EQ(typo.code, 1);
  EXPECT_THAT(typo.err, HasSubstr("did you mean \"survival\""));
  // An override of what the package lacks fails validation, naming both.
  std::ofstream(dir.path() / "deer.yaml") << R"(name: deer
uses: [{package: survival, actions: {fle: {weight: 2}}}]
actions: [{name: graze, weight: 0.1}]
)";
  const Result bad = Ctl({"validate", dir.path().string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, AllOf(HasSubstr("deer.yaml:2:"),
                             HasSubstr("has no action \"fle\" (did you mean "
                                       "\"flee\"?)"),
                             HasSubstr("survival.yaml")));
}

// A package consideration that vetoes everywhere is one finding of the
// package, naming every archetype it affects, not one per archetype only.
TEST(UtilityctlTest, AnalyseReportsAPackagesFindingOnceWithItsSets) {
  const testing::TempDir dir("utilityctl_analyse_packages");
  std::ofstream(dir.path() / "broken.yaml") << R"(package: broken
factors: [{name: depth}]
actions:
  - name: dig
    considerations:
      - {name: never, factor: depth, curve: {linear: {slope: 0, intercept: 0}}}
)";
  for (const char* name : {"a", "b"}) {
    std::ofstream(dir.path() / (std::string(name) + ".yaml"))
        << "name: " << name << "\nuses: [{package: broken}]\n"
        << "actions: [{name: idle, weight: 0.1}]\n";
  }
  const Result r = Ctl({"analyse", dir.path().string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("packages:\n  broken           always_veto      "
                               " dig.never: in 2 sets (a, b): vetoes "
                               "everywhere"));
  const Result json = Ctl({"analyse", dir.path().string(), "--format", "json"});
  v1::AnalysisReport report;
  ASSERT_THAT(loader::ReadMessageOrError(json.out, "report", &report), IsOk());
  ASSERT_GE(report.packages_size(), 1);
  const v1::PackageFinding& f = report.packages(0);
  EXPECT_EQ(f.package(), "broken");
  EXPECT_EQ(f.kind(), "always_veto");
  EXPECT_EQ(f.subject(), "dig.never");
  EXPECT_THAT(f.sets(), ::testing::ElementsAre("a", "b"));
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
