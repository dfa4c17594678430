// utilityctl import-bt and export-bt on BehaviorTree.CPP v4 XML written for
// these tests (tests/testdata/bt/): the expected set, every element that
// cannot be imported listed with its line, malformed XML, a mapping file,
// and round trips that come back the same.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ctl/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ctl/run_utilityctl.h"
#include "tests/testing/temp_dir.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::ctl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDir[] = "tests/testdata/bt/";

using test_util::Ctl;
using test_util::Result;

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The YAML without its comment lines (the header names files and lines).
std::string Body(const std::string& yaml) {
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(yaml, '\n')) {
    if (!absl::StartsWith(l, "#")) lines.emplace_back(l);
  }
  return absl::StrJoin(lines, "\n");
}

// A path for `name` in this process's scratch directory, which goes away
// with whatever a test left in it when the process exits.
std::string Temp(const std::string& name) {
  static const ::utilityd::testing::TempDir scratch("bt_import_test");
  return (scratch.path() / name).string();
}

TEST(ImportBt, WritesTheExpectedSetThatServesTheTree) {
  const Result r = Ctl({"import-bt", std::string(kDir) + "guard.xml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, Read(std::string(kDir) + "guard.expected.yaml"));
  // The mapping, with the XML's lines, and what was left out.
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("line 9: IsEnemyVisible -> holds when factor "
                              "IsEnemyVisible >= 0.5"),
                    HasSubstr("line 16: ScriptCondition -> holds when health "
                              "< 30"),
                    HasSubstr("line 32: WeaponReady -> holds when factor "
                              "weapon_ready >= 0.5"),
                    HasSubstr("line 19: FleeTo port target=\"{home}\""),
                    HasSubstr("{failure_if: \"potions <= 0\", action: "
                              "DrinkPotion}")));
  // It loads, and ticks as the XML reads: enemy seen, sword ready -> the
  // Attack subtree's Strike; health low -> FleeTo.
  auto set = loader::LoadSetText(r.out, "guard.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  const engine::CompiledBehaviourSet& c = (*set)->compiled;
  ASSERT_NE(c.tree(), nullptr);
  auto tick = [&](std::vector<std::pair<std::string, float>> values) {
    std::vector<float> f(c.factor_count(), 0.0f);
    for (const auto& [name, v] : values) f[c.FindFactor(name)] = v;
    engine::AgentInput agent{.factors = f};
    engine::TreeTick t;
    EXPECT_TRUE(
        engine::TickTree(c, agent, {}, engine::ExplainLevel::kNone, &t).ok());
    std::vector<std::string> run;
    for (const engine::TreeLeaf& l : t.run) {
      run.push_back(c.actions()[l.action].name);
    }
    return absl::StrJoin(run, " ");
  };
  EXPECT_EQ(tick({{"IsEnemyVisible", 1},
                  {"sword_ready", 1},
                  {"health", 80},
                  {"enemy_health", 0}}),
            "Strike");
  // (The parallel needs one success: the inverted `enemy_health <= 0`
  // succeeds at once, halting Strike; the sequence goes on to Taunt.)
  EXPECT_EQ(tick({{"IsEnemyVisible", 1},
                  {"sword_ready", 1},
                  {"health", 80},
                  {"enemy_health", 5}}),
            "Taunt");
  EXPECT_EQ(tick({{"IsEnemyVisible", 0}, {"health", 20}}), "FleeTo");
  EXPECT_EQ(tick({{"health", 80}, {"stamina", 12}, {"waypoint", 1}}), "WalkTo");
  EXPECT_EQ(tick({{"health", 80}, {"stamina", 5}}), "Rest");
}

TEST(ImportBt, ListsEveryElementItCannotImportWithItsLine) {
  const Result r = Ctl({"import-bt", std::string(kDir) + "unsupported.xml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(
      r.err,
      AllOf(HasSubstr("unsupported.xml:7: SetBlackboard value=\"hello\": a "
                      "tree's variables hold numbers and booleans, not "
                      "strings"),
            HasSubstr("unsupported.xml:8: code=\"msg := 'hi'\" at 1:8: "
                      "strings are not supported"),
            HasSubstr("unsupported.xml:12: _skipIf=\"tired <\" at 1:8: "
                      "expected a value"),
            HasSubstr("unsupported.xml:13: code=\"a .. b\" at 1:3: '..' "
                      "joins strings"),
            HasSubstr("unsupported.xml:14: <SmartSelector> is a custom node "
                      "with children"),
            HasSubstr("unsupported.xml:17: Repeat for ever (-1)"),
            HasSubstr("8 element(s) cannot be imported; nothing written")));
  // Inside refused elements: their children are read all the same, and an
  // unknown subtree is named at its own line.
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("unsupported.xml:15: code=\"x = = 1\" at 1:5: "
                              "expected a value, got '='"),
                    HasSubstr("unsupported.xml:18: <SubTree ID=\"Nowhere\">: "
                              "no <BehaviorTree> has that ID (Busy)")));
}

// BT.CPP's <include path="...">: the included files' trees join the main
// file's (relative to the including file, nested, each read once), their
// notes name their own file, and a file that includes itself, a ROS
// package and a missing file are listed as what cannot be imported.
TEST(ImportBt, IncludedFilesJoinTheTreesWithTheirOwnLines) {
  const std::filesystem::path dir = Temp("include");
  std::filesystem::create_directories(dir / "lib");
  std::ofstream(dir / "main.xml")
      << R"(<root BTCPP_format="4" main_tree_to_execute="Main">
  <include path="lib/patrol.xml"/>
  <include path="lib/rest.xml"/>
  <BehaviorTree ID="Main">
    <Fallback>
      <SubTree ID="Patrol"/>
      <SubTree ID="Rest"/>
    </Fallback>
  </BehaviorTree>
</root>)";
  std::ofstream(dir / "lib" / "patrol.xml") << R"(<root BTCPP_format="4">
  <include path="rest.xml"/>
  <BehaviorTree ID="Patrol">
    <Sequence>
      <Sleep msec="0"/>
      <Walk/>
    </Sequence>
  </BehaviorTree>
</root>)";
  std::ofstream(dir / "lib" / "rest.xml") << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Rest">
    <Sit/>
  </BehaviorTree>
</root>)";
  const Result r = Ctl({"import-bt", (dir / "main.xml").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("- {subtree: {name: Patrol}}"),
                           HasSubstr("name: Patrol"), HasSubstr("name: Rest"),
                           HasSubstr((dir / "lib" / "patrol.xml").string() +
                                     ":5: Sleep of 0 ms -> always_success")));
  auto set = loader::LoadSetText(r.out, "main.yaml");
  ASSERT_TRUE(set.ok()) << set.status();

  // What cannot be followed is listed with the including file's line.
  std::ofstream(dir / "lib" / "rest.xml") << R"(<root BTCPP_format="4">
  <include path="../main.xml"/>
  <include ros_pkg="robots" path="trees/x.xml"/>
  <include path="missing.xml"/>
  <BehaviorTree ID="Rest">
    <Sit/>
  </BehaviorTree>
</root>)";
  const Result bad = Ctl({"import-bt", (dir / "main.xml").string()});
  EXPECT_EQ(bad.code, 1);
  const std::string rest = (dir / "lib" / "rest.xml").string();
  EXPECT_THAT(bad.err,
              AllOf(HasSubstr(rest + ":2: <include path=\"../main.xml\">: "
                                     "includes itself, through "),
                    HasSubstr(rest + ":3: <include ros_pkg>"),
                    HasSubstr(rest + ":4: <include path=\"missing.xml\">: ")));
  std::filesystem::remove_all(dir);
}

// Names BehaviorTree.CPP allows and utilityd's identifiers do not (spaces,
// dots, letters outside ASCII) are made identifiers with a note; a tree ID
// with a space or a period, which BT.CPP refuses too, is not imported.
TEST(ImportBt, NamesBecomeIdentifiersAndTreeIdsBtCppRefusesStayRefused) {
  const std::string xml = Temp("names.xml");
  std::ofstream(xml)
      << R"(<root BTCPP_format="4" main_tree_to_execute="Türöffner">
  <BehaviorTree ID="Türöffner">
    <Sequence name="my sequence.one">
      <AlwaysSuccess name="成功ノード"/>
      <SubTree ID="検査"/>
    </Sequence>
  </BehaviorTree>
  <BehaviorTree ID="検査">
    <AlwaysSuccess/>
  </BehaviorTree>
</root>)";
  const Result r = Ctl({"import-bt", xml});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(
      r.out,
      AllOf(HasSubstr("name: T_r_ffner"), HasSubstr("name: my_sequence_one"),
            HasSubstr("{name: n_, always_success: {}}"),
            HasSubstr("subtree: {name: n_}"),
            HasSubstr("line 2: tree ID \"Türöffner\" -> T_r_ffner"),
            HasSubstr("line 3: name \"my sequence.one\" -> "
                      "my_sequence_one")));
  auto set = loader::LoadSetText(r.out, "names.yaml");
  ASSERT_TRUE(set.ok()) << set.status();

  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Main Tree">
    <AlwaysSuccess/>
  </BehaviorTree>
</root>)";
  const Result bad = Ctl({"import-bt", xml});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr(":2: tree ID \"Main Tree\": spaces and "
                                 "periods are not allowed in tree IDs"));
}

// Literal subtree ports: a number, a boolean or an enum's name is what the
// subtree's scripts read for that port, use by use; a string is refused.
TEST(ImportBt, LiteralSubtreePortsAreWhatTheSubtreesScriptsRead) {
  const std::string xml = Temp("literal.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4" main_tree_to_execute="Main">
  <BehaviorTree ID="Main">
    <Sequence>
      <SubTree ID="Set" amount="42" sign="-1.5" on="true" colour="RED"/>
      <SubTree ID="Set" amount="{ammo}" sign="2" on="false" colour="GREEN"/>
    </Sequence>
  </BehaviorTree>
  <BehaviorTree ID="Set">
    <Sequence>
      <ScriptCondition code="amount > 3"/>
      <Script code="total := amount * sign; lit := on; hue := colour"/>
    </Sequence>
  </BehaviorTree>
</root>)";
  const std::string map = Temp("literal_map.yaml");
  std::ofstream(map) << "enums: {RED: 1, GREEN: 2}\n";
  const Result r = Ctl({"import-bt", xml, "--map", map});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("remap: {\"on\": \"true\", amount: \"42\", "
                              "colour: RED, sign: \"(-1.5)\"}"),
                    HasSubstr("line 4: amount=\"42\" -> the subtree's "
                              "scripts read amount as 42"),
                    HasSubstr("{name: ammo}")));
  auto set = loader::LoadSetText(r.out, "literal.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  const v1::TreeNode& tree = (*set)->definition.tree();
  ASSERT_EQ(tree.sequence().children_size(), 2);
  // Each use's expansion: the comparison over the port stays a script
  // condition (a condition reads a factor), reading the use's literal.
  const auto& first = tree.sequence().children(0).sequence();
  const auto& second = tree.sequence().children(1).sequence();
  ASSERT_EQ(first.children_size(), 2);
  ASSERT_EQ(second.children_size(), 2);
  EXPECT_EQ(first.children(0).script_condition(), "42 > 3");
  EXPECT_EQ(second.children(0).script_condition(), "ammo > 3");
  EXPECT_EQ(first.children(1).script(),
            "total := 42 * (-1.5); lit := true; hue := RED");
  EXPECT_EQ(second.children(1).script(),
            "total := ammo * 2; lit := false; hue := GREEN");
  // export-bt writes the literals back as BT.CPP does, factors as entries.
  const std::string yaml = Temp("literal.yaml");
  std::ofstream(yaml) << r.out;
  const Result x = Ctl({"export-bt", yaml});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_THAT(x.out,
              AllOf(HasSubstr("amount=\"42\""), HasSubstr("sign=\"-1.5\""),
                    HasSubstr("on=\"true\""), HasSubstr("colour=\"RED\""),
                    HasSubstr("amount=\"{ammo}\"")));

  std::ofstream(xml) << R"(<root BTCPP_format="4" main_tree_to_execute="Main">
  <BehaviorTree ID="Main">
    <SubTree ID="Set" amount="1;2;3"/>
  </BehaviorTree>
  <BehaviorTree ID="Set">
    <Script code="total := amount"/>
  </BehaviorTree>
</root>)";
  const Result bad = Ctl({"import-bt", xml});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr(":3: amount=\"1;2;3\": a literal port holds "
                                 "a number, true, false or an enum's name"));
}

// A tree of actions and controls, with BT.CPP's constant leaves and Sleep,
// imports as written (no factor to declare), serves and sleeps in game
// time; export writes the same built-ins back.
TEST(ImportBt, ATreeWithoutConditionsImportsWithConstantsAndSleep) {
  const std::string xml = Temp("plain.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Idle">
    <Sequence>
      <AlwaysSuccess/>
      <Sleep msec="500"/>
      <Fallback>
        <AlwaysFailure name="never"/>
        <Sleep msec="0"/>
      </Fallback>
      <Wander/>
    </Sequence>
  </BehaviorTree>
</root>)";
  const Result r = Ctl({"import-bt", xml});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("- {always_success: {}}"),
                           HasSubstr("- {sleep: {seconds: 0.5}}"),
                           HasSubstr("- {name: never, always_failure: {}}"),
                           HasSubstr("line 8: Sleep of 0 ms -> always_success"),
                           ::testing::Not(HasSubstr("factors:"))));
  auto set = loader::LoadSetText(r.out, "plain.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  const engine::CompiledBehaviourSet& c = (*set)->compiled;
  EXPECT_EQ(c.factor_count(), 0);
  std::string state;
  auto tick = [&](double time) {
    engine::TreeTick t;
    EXPECT_TRUE(engine::TickTree(c, engine::AgentInput{},
                                 {.game_time = time, .state = state},
                                 engine::ExplainLevel::kNone, &t)
                    .ok());
    state = t.state;
    std::string run = engine::NodeStatusName(t.status);
    for (const engine::TreeLeaf& l : t.run) {
      absl::StrAppend(&run, " ", c.actions()[l.action].name);
    }
    return run;
  };
  EXPECT_EQ(tick(0), "running");
  EXPECT_EQ(tick(0.4), "running");
  EXPECT_EQ(tick(0.5), "running Wander");
  const std::string yaml = Temp("plain.yaml");
  std::ofstream(yaml) << r.out;
  const Result x = Ctl({"export-bt", yaml});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_THAT(x.out, AllOf(HasSubstr("<AlwaysSuccess/>"),
                           HasSubstr("<Sleep msec=\"500\"/>"),
                           HasSubstr("<AlwaysFailure name=\"never\"/>")));
  for (const auto& f : {xml, yaml}) std::filesystem::remove(f);
}

// _skipIf and _while become skip_if and while; RunOnce without then_skip
// is BT.CPP's default, then_skip true; the set skips as the XML says and
// exports the same attributes back.
// Ticks an imported tree, every leaf it ran succeeding on the next tick;
// each tick reads "Leaf ... status" (the actions it ran, the root's status).
// Imports `args` (import-bt's arguments) and loads the YAML it prints into
// *yaml: the set, or the import's or the load's error.
absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> ImportAndLoad(
    const std::vector<std::string>& args, std::string* yaml) {
  std::vector<std::string> all = {"import-bt"};
  all.insert(all.end(), args.begin(), args.end());
  const Result r = Ctl(all);
  *yaml = r.out;
  if (r.code != 0) return absl::InvalidArgumentError(r.err);
  return loader::LoadSetText(r.out, "imported.yaml");
}

class SucceedingTicks {
 public:
  SucceedingTicks(const engine::CompiledBehaviourSet& c,
                  const std::vector<float>& factors)
      : c_(c), f_(factors) {}

  std::string operator()() {
    engine::TreeTick t;
    EXPECT_TRUE(engine::TickTree(c_, engine::AgentInput{.factors = f_},
                                 {.state = state_, .outcomes = outcomes_},
                                 engine::ExplainLevel::kNone, &t)
                    .ok());
    state_ = t.state;
    outcomes_.clear();
    std::string run;
    for (const engine::TreeLeaf& l : t.run) {
      absl::StrAppend(&run, c_.actions()[l.action].name, " ");
      outcomes_.push_back(
          {.leaf = l.node, .status = engine::NodeStatus::kSuccess});
    }
    return run + engine::NodeStatusName(t.status);
  }

 private:
  const engine::CompiledBehaviourSet& c_;
  const std::vector<float>& f_;
  std::string state_;
  std::vector<engine::LeafOutcome> outcomes_;
};

// A tree with scripts, SetBlackboard, script preconditions and
// postconditions imports as written: the names it assigns are its
// variables, the names it only reads its factors (enums from the mapping
// file), and it ticks as BT.CPP's would, the variables travelling in the
// state; export writes the scripts back.
TEST(ImportBt, ScriptsAndVariablesImportServeAndExport) {
  const std::string xml = Temp("scripts.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Guard">
    <Sequence>
      <SetBlackboard output_key="shots" value="0"/>
      <Script code="alarm := ammo &lt; LOW"/>
      <Reload _skipIf="!alarm" _onSuccess="shots := 0"/>
      <Fire _while="shots &lt; 2" _post="shots += 1"/>
      <ScriptCondition code="shots == 1 &amp;&amp; !alarm"/>
    </Sequence>
  </BehaviorTree>
</root>)";
  const std::string map = Temp("scripts-map.yaml");
  std::ofstream(map) << "enums: {LOW: 3}\nfactors: {ammo: {min: 0, max: 30}}\n";
  std::string yaml;
  auto set = ImportAndLoad({xml, "--map", map}, &yaml);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(yaml, AllOf(HasSubstr("script: \"shots := 0\""),
                          HasSubstr("script: \"alarm := ammo < LOW\""),
                          HasSubstr("skip_if: \"!alarm\""),
                          HasSubstr("on_success: \"shots := 0\""),
                          HasSubstr("post: \"shots += 1\""),
                          HasSubstr("script_condition: \"shots == 1 && "
                                    "!alarm\""),
                          HasSubstr("LOW: 3"), HasSubstr("name: ammo")));
  const engine::CompiledBehaviourSet& c = (*set)->compiled;
  EXPECT_THAT(c.tree()->variables, ::testing::ElementsAre("shots", "alarm"));
  EXPECT_EQ(c.factor_count(), 1u);  // ammo
  std::vector<float> f(c.factor_count(), 0.0f);
  f[c.FindFactor("ammo")] = 10;
  SucceedingTicks tick(c, f);
  // ammo 10 >= LOW: no alarm, Reload skipped; Fire runs while shots < 2,
  // its post counts the shot; then shots == 1 and no alarm: success.
  EXPECT_EQ(tick(), "Fire running");
  EXPECT_EQ(tick(), "success");
  f[c.FindFactor("ammo")] = 1;  // below LOW: Reload runs
  EXPECT_EQ(tick(), "Reload running");
  EXPECT_EQ(tick(), "Fire running");
  EXPECT_EQ(tick(), "failure");  // shots 1 but the alarm is up
  const std::string file = Temp("scripts.yaml");
  std::ofstream(file) << yaml;
  const Result x = Ctl({"export-bt", file});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_THAT(x.out,
              AllOf(HasSubstr("<Script code=\"alarm := ammo &lt; LOW\"/>"),
                    HasSubstr("_skipIf=\"!alarm\" _onSuccess=\"shots := 0\""),
                    HasSubstr("_while=\"shots &lt; 2\" _post=\"shots += 1\""),
                    HasSubstr("<ScriptCondition code=\"shots == 1 &amp;&amp; "
                              "!alarm\"/>")));
  for (const auto& path : {xml, map, file}) std::filesystem::remove(path);
}

TEST(ImportBt, SkipPreconditionsAndRunOnceSkip) {
  const std::string xml = Temp("skip.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Patrol">
    <Sequence>
      <RunOnce><Greet/></RunOnce>
      <Rest _skipIf="stamina >= 50"/>
      <Walk _while="stamina > 10"/>
    </Sequence>
  </BehaviorTree>
</root>)";
  std::string imported;
  auto set = ImportAndLoad({xml}, &imported);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(imported,
              AllOf(HasSubstr("run_once: {child: {action: Greet}, "
                              "then_skip: true}"),
                    HasSubstr("{skip_if: \"stamina >= 50\", action: Rest}"),
                    HasSubstr("{while: \"stamina > 10\", action: Walk}")));
  const engine::CompiledBehaviourSet& c = (*set)->compiled;
  std::vector<float> f(c.factor_count(), 0.0f);
  f[c.FindFactor("stamina")] = 80;
  SucceedingTicks tick(c, f);
  EXPECT_EQ(tick(), "Greet running");
  EXPECT_EQ(tick(), "Walk running");  // Rest skipped: stamina >= 50
  EXPECT_EQ(tick(), "success");
  EXPECT_EQ(tick(), "Walk running");  // RunOnce skipped from now on
  const std::string yaml = Temp("skip.yaml");
  std::ofstream(yaml) << imported;
  const Result x = Ctl({"export-bt", yaml});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_THAT(x.out, AllOf(HasSubstr("<RunOnce then_skip=\"true\">"),
                           HasSubstr("<Rest _skipIf=\"stamina &gt;= 50\"/>"),
                           HasSubstr("<Walk _while=\"stamina &gt; 10\"/>")));
  for (const auto& path : {xml, yaml}) std::filesystem::remove(path);
}

// <Precondition if="C" else="S"> is its child's own precondition !(C)
// answering S; like BT.CPP's, it is not checked again while the child runs.
TEST(ImportBt, PreconditionBecomesItsChildsPrecondition) {
  const std::string xml = Temp("precondition.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Guard">
    <Fallback>
      <Precondition if="alert > 0"><Chase/></Precondition>
      <Precondition if="stamina &lt; 20" else="SKIPPED">
        <Rest _skipIf="alert > 5"/>
      </Precondition>
      <Precondition if="stamina >= 20" else="SUCCESS"><Patrol/></Precondition>
    </Fallback>
  </BehaviorTree>
</root>)";
  std::string yaml;
  auto set = ImportAndLoad({xml}, &yaml);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(
      yaml,
      AllOf(HasSubstr("{failure_if: \"!(alert > 0)\", action: Chase}"),
            HasSubstr("{skip_if: \"!(stamina < 20) || (alert > 5)\", "
                      "action: Rest}"),
            HasSubstr("{success_if: \"!(stamina >= 20)\", action: Patrol}"),
            HasSubstr("line 4: <Precondition> as its child's _failureIf")));
  const engine::CompiledBehaviourSet& c = (*set)->compiled;
  std::vector<float> f(c.factor_count(), 0.0f);
  f[c.FindFactor("alert")] = 1;
  f[c.FindFactor("stamina")] = 50;
  SucceedingTicks tick(c, f);
  EXPECT_EQ(tick(), "Chase running");
  f[c.FindFactor("alert")] = 0;
  EXPECT_EQ(tick(), "success");         // Chase ran: not checked again
  EXPECT_EQ(tick(), "Patrol running");  // Chase fails, Rest skipped
  f[c.FindFactor("stamina")] = 10;
  EXPECT_EQ(tick(), "success");  // Patrol ran; succeeds
  EXPECT_EQ(tick(), "Rest running");
  EXPECT_EQ(tick(), "success");
  f[c.FindFactor("alert")] = 2;  // not > 5: Rest not skipped, Chase runs
  EXPECT_EQ(tick(), "Chase running");

  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="T">
    <Sequence>
      <Precondition if="a > 1" else="RUNNING"><Go/></Precondition>
      <Precondition if="a > 1" else="SUCCESS"><Go _failureIf="b > 1"/></Precondition>
      <Precondition if="a > 1" _skipIf="b > 2"><Go/></Precondition>
    </Sequence>
  </BehaviorTree>
</root>)";
  const Result bad = Ctl({"import-bt", xml});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(
      bad.err,
      AllOf(HasSubstr("precondition.xml:4: Precondition else=\"RUNNING\""),
            HasSubstr("precondition.xml:5: Precondition else=\"SUCCESS\" "
                      "over a child with _failureIf"),
            HasSubstr("precondition.xml:6: a <Precondition> with _skipIf of "
                      "its own")));
  std::filesystem::remove(xml);
}

// LoopInt, LoopDouble and LoopBool over a queue in the XML become a loop
// whose variable the tree's scripts read; export writes a LoopDouble back.
// A queue on the blackboard, or of strings, is refused with why.
TEST(ImportBt, LoopsOverQueuesWrittenInTheTree) {
  const std::string xml = Temp("loops.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Volley">
    <Sequence>
      <LoopInt queue="1;2;3" value="{shot}">
        <Fire _skipIf="shot == 2"/>
      </LoopInt>
      <LoopBool queue="true; false" value="{flag}" if_empty="FAILURE">
        <AlwaysSuccess/>
      </LoopBool>
      <LoopDouble queue="" if_empty="SKIPPED"><Fire/></LoopDouble>
    </Sequence>
  </BehaviorTree>
</root>)";
  std::string yaml;
  auto set = ImportAndLoad({xml}, &yaml);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(yaml, AllOf(HasSubstr("child: {skip_if: \"shot == 2\", action: "
                                    "Fire}\n          values: [1, 2, 3]\n"
                                    "          variable: shot\n"),
                          HasSubstr("values: [1, 0]\n          variable: "
                                    "flag\n          if_empty: failure\n"),
                          HasSubstr("{loop: {child: {action: Fire}, "
                                    "if_empty: skipped}}")));
  const engine::CompiledBehaviourSet& c = (*set)->compiled;
  EXPECT_THAT(c.tree()->variables, ::testing::ElementsAre("shot", "flag"));
  EXPECT_EQ(c.factor_count(), 0u);  // shot is the loop's, not the game's
  const std::vector<float> none;
  SucceedingTicks tick(c, none);
  EXPECT_EQ(tick(), "Fire running");  // 1
  EXPECT_EQ(tick(), "running");       // Fire succeeded
  EXPECT_EQ(tick(), "running");       // 2: skipped
  EXPECT_EQ(tick(), "Fire running");  // 3
  EXPECT_EQ(tick(), "running");
  EXPECT_EQ(tick(), "running");  // none left: the LoopBool starts, true
  EXPECT_EQ(tick(), "running");  // false
  EXPECT_EQ(tick(), "failure");  // none left: if_empty
  const std::string file = Temp("loops.yaml");
  std::ofstream(file) << yaml;
  const Result x = Ctl({"export-bt", file});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_THAT(x.out,
              AllOf(HasSubstr("<LoopDouble queue=\"1;2;3\" value=\"{shot}\">"),
                    HasSubstr("<LoopDouble queue=\"1;0\" value=\"{flag}\" "
                              "if_empty=\"FAILURE\">"),
                    HasSubstr("<LoopDouble queue=\"\" if_empty=\"SKIPPED\">")));

  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="T">
    <Sequence>
      <LoopInt queue="{targets}" value="{t}"><Fire/></LoopInt>
      <LoopInt queue="1;two" value="{t}"><Fire/></LoopInt>
      <LoopString queue="a;b" value="{t}"><Fire/></LoopString>
      <LoopDouble queue="1" if_empty="RUNNING"><Fire/></LoopDouble>
    </Sequence>
  </BehaviorTree>
</root>)";
  const Result bad = Ctl({"import-bt", xml});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err,
              AllOf(HasSubstr("loops.xml:4: <LoopInt queue=\"{targets}\">: a "
                              "queue on the blackboard"),
                    HasSubstr("loops.xml:5: LoopInt queue=\"1;two\": \"two\" "
                              "is not an integer"),
                    HasSubstr("loops.xml:6: <LoopString>: its values are "
                              "strings"),
                    HasSubstr("loops.xml:7: LoopDouble if_empty=\"RUNNING\"")));
  for (const auto& path : {xml, file}) std::filesystem::remove(path);
}

// What the XML allows but the set's validation refuses is placed at the
// element it came from: BT.CPP's own invalid trees name their lines.
TEST(ImportBt, ValidationProblemsNameTheirElementsLine) {
  const std::string xml = Temp("invalid.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4" main_tree_to_execute="Main">
  <BehaviorTree ID="Main">
    <Sequence>
      <Rest/>
      <IfThenElse>
        <IsTired/>
      </IfThenElse>
    </Sequence>
  </BehaviorTree>
  <TreeNodesModel><Condition ID="IsTired"/></TreeNodesModel>
</root>)";
  Result r = Ctl({"import-bt", xml});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("invalid.xml:5: tree.sequence.children[1]."
                              "if_then_else.children: needs 2 or 3 children"),
                    HasSubstr("the imported set does not validate")));
  std::ofstream(xml) << R"(<root BTCPP_format="4" main_tree_to_execute="Main">
  <BehaviorTree ID="Main">
    <Sequence><Rest/><SubTree ID="Loop"/></Sequence>
  </BehaviorTree>
  <BehaviorTree ID="Loop">
    <Fallback>
      <Rest/>
      <SubTree ID="Loop"/>
    </Fallback>
  </BehaviorTree>
</root>)";
  r = Ctl({"import-bt", xml});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("invalid.xml:8: subtrees[0].tree.fallback."
                               "children[1].subtree.name: subtree \"Loop\" "
                               "uses itself"));
  std::filesystem::remove(xml);
}

// Files given beside the first have their trees registered with its, as
// BT.CPP's factory registers several: a subtree defined in another file.
TEST(ImportBt, FilesGivenBesideRegisterTheirTrees) {
  const std::string main = Temp("beside-main.xml");
  const std::string rest = Temp("beside-rest.xml");
  const std::string bad = Temp("beside-bad.xml");
  std::ofstream(main) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Main">
    <Sequence><SubTree ID="Rest"/><Wander/></Sequence>
  </BehaviorTree>
</root>)";
  std::ofstream(rest) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="Rest"><Sleep msec="500"/></BehaviorTree>
</root>)";
  Result r = Ctl({"import-bt", main});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("<SubTree ID=\"Rest\">: no <BehaviorTree> "
                               "has that ID (Main)"));
  std::string yaml;
  auto set = ImportAndLoad({main, rest}, &yaml);
  ASSERT_TRUE(set.ok()) << set.status();
  // Main is the tree no other uses; Rest its subtree.
  EXPECT_THAT(yaml, AllOf(HasSubstr("name: Main\n"),
                          HasSubstr("{name: Rest, tree: {sleep: {seconds: "
                                    "0.5}}}")));
  std::ofstream(bad) << "<root><BehaviorTree ID=\"X\">\n<Wander>\n</root>";
  r = Ctl({"import-bt", main, rest, bad, Temp("beside-missing.xml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("beside-bad.xml:2: not well-formed XML"),
                           HasSubstr("beside-missing.xml cannot be read")));
  for (const auto& path : {main, rest, bad}) std::filesystem::remove(path);
}

TEST(ImportBt, MalformedXmlIsAnErrorWithItsLine) {
  const Result r = Ctl({"import-bt", std::string(kDir) + "malformed.xml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("malformed.xml:5: not well-formed XML"));
  EXPECT_THAT(r.err, HasSubstr("MISMATCHED_ELEMENT"));
}

TEST(ImportBt, TheMainTreeIsChosenOrNamed) {
  const std::string xml = Temp("two.xml");
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="A"><Wander/></BehaviorTree>
  <BehaviorTree ID="B"><Sequence><IsTired/><SubTree ID="A"/><Rest/></Sequence></BehaviorTree>
  <TreeNodesModel><Condition ID="IsTired"/></TreeNodesModel>
</root>)";
  // B uses A: B is the tree a set is made of.
  Result r = Ctl({"import-bt", xml});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("name: B"), HasSubstr("subtree: {name: A}"),
                    HasSubstr("  - {name: A, tree: {action: Wander}}")));
  EXPECT_THAT(r.out, HasSubstr("line 1: no main_tree_to_execute: the main "
                               "tree is B, the only one no other tree uses"));
  r = Ctl({"import-bt", xml, "--main", "A"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("name: A"));
  r = Ctl({"import-bt", xml, "--main", "B", "--set", "wanderer"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(
      r.out, AllOf(HasSubstr("name: wanderer"), HasSubstr("subtree: {name: A}"),
                   HasSubstr("  - {name: A, tree: {action: Wander}}")));
  r = Ctl({"import-bt", xml, "--main", "C"});
  EXPECT_THAT(r.err, HasSubstr("no tree \"C\" (A, B)"));
  // Two trees no other uses: which is meant is the user's to say.
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="A"><Wander/></BehaviorTree>
  <BehaviorTree ID="B"><SubTree ID="A"/></BehaviorTree>
  <BehaviorTree ID="C"><Rest/></BehaviorTree>
</root>)";
  r = Ctl({"import-bt", xml});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("two.xml:1: several trees and no "
                               "main_tree_to_execute: name one with --main "
                               "(used by no other tree: B, C)"));
  // Each another's subtree (a cycle, which the load refuses anyway).
  std::ofstream(xml) << R"(<root BTCPP_format="4">
  <BehaviorTree ID="A"><SubTree ID="B"/></BehaviorTree>
  <BehaviorTree ID="B"><SubTree ID="A"/></BehaviorTree>
</root>)";
  r = Ctl({"import-bt", xml});
  EXPECT_THAT(r.err, HasSubstr("name one with --main (each is another's "
                               "subtree: A, B)"));
  std::ofstream(xml)
      << R"(<root BTCPP_format="3"><BehaviorTree ID="A"><Wander/></BehaviorTree></root>)";
  r = Ctl({"import-bt", xml});
  EXPECT_THAT(r.err, HasSubstr("BTCPP_format=\"3\": only format 4 is read"));
  std::filesystem::remove(xml);
}

TEST(ImportBt, AMappingFileNamesFactorsComparisonsActionsAndRanges) {
  const Result r = Ctl({"import-bt", std::string(kDir) + "guard.xml", "--map",
                        std::string(kDir) + "guard_map.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(
      r.out,
      AllOf(HasSubstr("IsEnemyVisible -> holds when factor enemy_visible"),
            HasSubstr("line 32: WeaponReady -> holds when ammo > 0"),
            HasSubstr("DrinkPotion -> action drink"),
            HasSubstr("- {name: health, max: 100}"),
            HasSubstr("retry: {child: {failure_if: \"potions <= 0\", "
                      "action: drink}, attempts: 3}")));
  const std::string bad = Temp("bad_map.yaml");
  std::ofstream(bad) << "conditions: {}\nleaves: {}\n";
  const Result b =
      Ctl({"import-bt", std::string(kDir) + "guard.xml", "--map", bad});
  EXPECT_EQ(b.code, 1);
  EXPECT_THAT(b.err, HasSubstr("bad_map.yaml:2: unknown section \"leaves\""));
  std::filesystem::remove(bad);
}

// Import -> export -> import gives the same set, and the second export the
// same XML.
TEST(ImportBt, ImportExportImportIsStable) {
  const std::string y1 = Temp("y1.yaml"), x1 = Temp("x1.xml"),
                    y2 = Temp("y2.yaml");
  ASSERT_EQ(
      Ctl({"import-bt", std::string(kDir) + "guard.xml", "--out", y1}).code, 0);
  Result r = Ctl({"export-bt", y1, "--out", x1});
  ASSERT_EQ(r.code, 0) << r.err;
  r = Ctl({"import-bt", x1, "--out", y2});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Body(Read(y1)), Body(Read(y2)));
  r = Ctl({"export-bt", y2});
  EXPECT_EQ(r.out, Read(x1));
  for (const auto& f : {y1, x1, y2}) std::filesystem::remove(f);
}

// A set with utilityd's own nodes (utility with scored children, cooldown,
// a condition's curve) goes to Groot2 and back into itself unchanged.
TEST(ImportBt, ExportedTreesImportBackTheSame) {
  const std::string set = std::string(kDir) + "guard_utility.yaml";
  const Result x = Ctl({"export-bt", set});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_THAT(x.out, AllOf(HasSubstr("<Utility rescore=\"every_tick\" "
                                     "on_failure=\"next_best\">"),
                           HasSubstr("<UtilityChoice name=\"melee\" scoring="),
                           HasSubstr("<Cooldown seconds=\"30\">"),
                           HasSubstr("<FactorCondition name=\"hurt\" "
                                     "factor=\"{health}\" threshold=\"0.9\""),
                           HasSubstr("<SubTree ID=\"Attack\" "
                                     "weapon_ready=\"{sword_ready}\"/>"),
                           HasSubstr("<Control ID=\"Utility\">"),
                           HasSubstr("<DrinkPotion _failureIf=\"potions &lt;= "
                                     "0\"/>")));
  const std::string xml = Temp("u.xml");
  std::ofstream(xml) << x.out;
  const Result r = Ctl({"import-bt", xml, "--into", set});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Body(r.out), Body(Read(set)));
  std::filesystem::remove(xml);
}

TEST(ExportBt, ASetWithoutATreeIsAnError) {
  const Result r =
      Ctl({"export-bt", "examples/behaviour_sets/arena_mage.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("set \"arena_mage\" has no tree to export"));
}

}  // namespace
}  // namespace utilityd::ctl
