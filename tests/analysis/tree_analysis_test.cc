// utilityctl analyse on behaviour trees: trees built with known answers
// (a condition no value passes, one every value passes, contradicting
// conditions in one tick, the same conditions a tick apart, a utility
// node's child that wins only off its path), and random trees ticked by the
// engine over thousands of random ticks, where no node called never entered
// is ever ticked and no condition called never (always) holding passes
// (fails).
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/engine/scoring_rules.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::analysis {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

using testing::Analysed;
using testing::Kinds;
using testing::Load;

const v1::TreeNodeReach& Node(const v1::SetAnalysis& a,
                              const std::string& label) {
  return testing::Named(a.tree(), label,
                        [](const v1::TreeNodeReach& x) { return x.label(); });
}

// Two factors and four flat actions; `tree` is the YAML under `tree:`.
std::string TreeSet(const std::string& tree) {
  return absl::StrCat(R"(
name: tree_case
factors:
  - {name: health, min: 0, max: 100}
  - {name: danger, min: 0, max: 10}
actions:
  - name: fight
    considerations: [{name: c, factor: danger, output: {min: 0.5, max: 0.5}}]
  - name: flee
    considerations: [{name: c, factor: danger}]
  - name: heal
    considerations: [{name: c, factor: health, range: {min: 60, max: 0}, output: {min: 0.2}}]
  - name: idle
    considerations: [{name: c, factor: health, output: {min: 0.1, max: 0.1}}]
tree:
)",
                      tree);
}

TEST(TreeAnalysisTest, AConditionNoValuePassesBlocksWhatFollowsIt) {
  // health / 200 never reaches 0.8 on 0..100.
  auto set = Load(TreeSet(R"(
  sequence:
    children:
      - {name: unreachable_test, condition: {factor: health, range: {min: 0, max: 200}, threshold: 0.8}}
      - action: fight
)"));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_THAT(Kinds(a, "unreachable_test"), Contains("never_holds"));
  const v1::TreeNodeReach& test = Node(a, "unreachable_test");
  EXPECT_FLOAT_EQ(test.max_output(), 0.5f);
  const v1::TreeNodeReach& fight = Node(a, "fight");
  EXPECT_EQ(fight.reach(), v1::REACH_DEAD);
  EXPECT_THAT(fight.reason(), HasSubstr("unreachable_test never succeeds"));
  EXPECT_THAT(Kinds(a, "fight"), Contains("never_entered"));
}

TEST(TreeAnalysisTest, AConditionEveryValuePassesBlocksTheFallbackAfterIt) {
  auto set = Load(TreeSet(R"(
  fallback:
    children:
      - {name: always_true, condition: {factor: danger, range: {min: -10, max: 0}}}
      - action: flee
)"));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_THAT(Kinds(a, "always_true"), Contains("always_holds"));
  EXPECT_EQ(Node(a, "flee").reach(), v1::REACH_DEAD);
  EXPECT_THAT(Node(a, "flee").reason(), HasSubstr("always_true never fails"));
}

// health >= 50 and health <= 30: never both in one tick.
constexpr char kHigh[] =
    "{name: healthy, condition: {factor: health, range: {min: 0, max: 100}, "
    "threshold: 0.5}}";
constexpr char kLow[] =
    "{name: wounded, condition: {factor: health, range: {min: 100, max: 0}, "
    "threshold: 0.7}}";

TEST(TreeAnalysisTest, ContradictingConditionsInOneTickNeverEnter) {
  auto set = Load(TreeSet(absl::StrFormat(R"(
  sequence:
    children:
      - %s
      - %s
      - action: flee
)",
                                          kHigh, kLow)));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  const v1::TreeNodeReach& flee = Node(a, "flee");
  EXPECT_EQ(flee.reach(), v1::REACH_DEAD);
  EXPECT_THAT(flee.reason(), HasSubstr("healthy holds"));
  EXPECT_THAT(flee.reason(), HasSubstr("wounded holds"));
  // Each condition alone can pass: neither is a finding of its own.
  EXPECT_THAT(Kinds(a, "healthy"), IsEmpty());
  EXPECT_THAT(Kinds(a, "wounded"), IsEmpty());
  // The second condition is ticked only where the first held: it can
  // never pass there, so flee is blocked by it.
  EXPECT_THAT(Kinds(a, "flee"), Contains("never_entered"));
}

TEST(TreeAnalysisTest, TheSameConditionsATickApartCanBothHold) {
  // A plain sequence resumes at the running action: wounded is ticked a
  // tick (or many) after healthy held. A reactive one ticks healthy again
  // in the same tick as wounded: never both.
  const std::string children = absl::StrFormat(R"(
    children:
      - %s
      - action: fight
      - %s
      - action: flee
)",
                                               kHigh, kLow);
  auto plain = Load(TreeSet("  sequence:" + children));
  auto reactive = Load(TreeSet("  reactive_sequence:" + children));
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(reactive, nullptr);
  const v1::SetAnalysis p = Analysed(*plain);
  EXPECT_EQ(Node(p, "flee").reach(), v1::REACH_ALIVE);
  EXPECT_THAT(Node(p, "flee").path(), Contains("wounded holds"));
  EXPECT_THAT(Node(p, "flee").path(), Not(Contains("healthy holds")));
  const v1::SetAnalysis r = Analysed(*reactive);
  EXPECT_EQ(Node(r, "flee").reach(), v1::REACH_DEAD);
  EXPECT_THAT(Kinds(r, "flee"), Contains("never_entered"));
}

TEST(TreeAnalysisTest, AResumedSequenceDoesNotInheritItsEntryConditions) {
  // healthy held when the inner sequence was entered, not when it resumes
  // past fight to test wounded.
  auto set = Load(TreeSet(absl::StrFormat(R"(
  sequence:
    children:
      - %s
      - name: inner
        sequence:
          children:
            - action: fight
            - %s
            - action: flee
)",
                                          kHigh, kLow)));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_THAT(Node(a, "inner").path(), Contains("healthy holds"));
  EXPECT_THAT(Node(a, "fight").path(), Contains("healthy holds"));
  EXPECT_EQ(Node(a, "flee").reach(), v1::REACH_ALIVE);
  EXPECT_THAT(Node(a, "flee").path(), Not(Contains("healthy holds")));
}

TEST(TreeAnalysisTest, AFallbackResumesPastConditionsBeforeARunningChild) {
  // keep_running_until_failure runs across ticks (it answers running while
  // its child succeeds): the fallback resumes at it, so when it fails and
  // flee is entered, "healthy fails" may be stale.
  auto set = Load(TreeSet(absl::StrFormat(R"(
  fallback:
    children:
      - %s
      - keep_running_until_failure:
          child: %s
      - action: flee
)",
                                          kHigh, kLow)));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_EQ(Node(a, "flee").reach(), v1::REACH_ALIVE);
  EXPECT_THAT(Node(a, "flee").path(), Not(Contains("healthy fails")));
}

TEST(TreeAnalysisTest, AUtilityChildThatWinsOnlyOffItsPathIsNeverChosen) {
  // heal beats fight's 0.5 only below 37.5 health; the path demands 50 or
  // more. Trying the next best after a failure, heal is still eligible
  // there (0.2 and up).
  for (const char* on_failure : {"fail", "next_best"}) {
    SCOPED_TRACE(on_failure);
    auto set = Load(TreeSet(absl::StrFormat(R"(
  reactive_sequence:
    children:
      - %s
      - name: choose
        utility:
          on_failure: %s
          children:
            - action: fight
            - action: heal
)",
                                            kHigh, on_failure)));
    ASSERT_NE(set, nullptr);
    const v1::SetAnalysis a = Analysed(*set);
    const v1::TreeNodeReach& heal = Node(a, "heal");
    EXPECT_EQ(heal.utility(), Node(a, "choose").node());
    EXPECT_THAT(heal.path(), Contains("healthy holds"));
    if (std::string(on_failure) == "fail") {
      EXPECT_EQ(heal.reach(), v1::REACH_DEAD);
      EXPECT_THAT(heal.reason(), HasSubstr("outscored by fight"));
      EXPECT_THAT(Kinds(a, "choose.heal"), Contains("never_chosen"));
    } else {
      EXPECT_EQ(heal.reach(), v1::REACH_ALIVE);
      EXPECT_THAT(Kinds(a, "choose.heal"), IsEmpty());
    }
    const v1::TreeNodeReach& fight = Node(a, "fight");
    ASSERT_EQ(fight.reach(), v1::REACH_ALIVE);
    EXPECT_GE(fight.witness().factors().at("health"), 50);
  }
  // Off the path heal wins where health is low: alive, with that witness.
  auto free = Load(TreeSet(R"(
  utility:
    children:
      - action: fight
      - action: heal
)"));
  ASSERT_NE(free, nullptr);
  const v1::SetAnalysis a = Analysed(*free);
  const v1::TreeNodeReach& heal = Node(a, "heal");
  EXPECT_EQ(heal.reach(), v1::REACH_ALIVE);
  EXPECT_LT(heal.witness().factors().at("health"), 37.5);
}

TEST(TreeAnalysisTest, ARepeatOfZeroTimesNeverEntersItsChild) {
  auto set = Load(TreeSet(R"(
  fallback:
    children:
      - {name: never, repeat: {times: 0, child: {action: fight}}}
      - action: idle
)"));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_EQ(Node(a, "fight").reach(), v1::REACH_DEAD);
  EXPECT_THAT(Kinds(a, "fight"), Contains("never_entered"));
  // repeat 0 succeeds: the fallback never gets to idle.
  EXPECT_EQ(Node(a, "idle").reach(), v1::REACH_DEAD);
  EXPECT_THAT(Node(a, "idle").reason(), HasSubstr("never fails"));
}

// Found from outside: a precondition answers SUCCESS without ticking a
// condition no value passes, so the sequence goes on to its action.
// A constant leaf answers one status: what an always_success shuts out of
// a fallback, or an always_failure out of a sequence, is never entered; a
// sleep never fails.
TEST(TreeAnalysisTest, ConstantLeavesAndSleepShutOutWhatTheyNeverAnswer) {
  auto set = Load(TreeSet(R"(
  sequence:
    children:
      - fallback: {children: [{name: yes, always_success: {}}, {action: fight}]}
      - fallback: {children: [{sleep: {seconds: 1}}, {action: flee}]}
      - sequence: {children: [{name: no, always_failure: {}}, {action: heal}]}
      - action: idle
)"));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_EQ(Node(a, "fight").reach(), v1::REACH_DEAD);
  EXPECT_THAT(Node(a, "fight").reason(),
              HasSubstr("yes never fails (always_success)"));
  EXPECT_EQ(Node(a, "flee").reach(), v1::REACH_DEAD);
  EXPECT_THAT(Node(a, "flee").reason(), HasSubstr("never fails (sleep)"));
  EXPECT_EQ(Node(a, "heal").reach(), v1::REACH_DEAD);
  EXPECT_THAT(Node(a, "heal").reason(),
              HasSubstr("no never succeeds (always_failure)"));
}

TEST(TreeAnalysisTest, APreconditionCanPassAConditionNoValuePasses) {
  auto set = Load(TreeSet(R"(
  sequence:
    children:
      - name: impossible
        success_if: "health >= 0"
        condition: {factor: danger, range: {min: 0, max: 25}, threshold: 0.5}
      - action: fight
)"));
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_EQ(Node(a, "fight").reach(), v1::REACH_ALIVE)
      << Node(a, "fight").reason();
  EXPECT_THAT(Kinds(a, "fight"), Not(Contains("never_entered")));
  // The curve itself still never passes.
  EXPECT_THAT(Kinds(a, "impossible"), Contains("never_holds"));
  // And failure_if can make an always-passing condition fail.
  set = Load(TreeSet(R"(
  fallback:
    children:
      - name: always
        failure_if: "danger > 5"
        condition: {factor: danger, range: {min: -10, max: 0}}
      - action: flee
)"));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(Node(Analysed(*set), "flee").reach(), v1::REACH_ALIVE);
}

// A random tree over health and danger: composites, decorators,
// conditions, action leaves and utility nodes, at most `depth` deep.
std::string RandomNode(std::mt19937_64& rng, int depth, int* names) {
  auto pick = [&](int n) {
    return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng));
  };
  auto real = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  static const char* kActions[] = {"fight", "flee", "heal", "idle"};
  const int kind = depth <= 0 ? 6 + pick(2) : pick(24);
  // A quarter of the nodes get a precondition, which answers for the node
  // without ticking it; some always hold (health >= 0), some never.
  std::string name = absl::StrCat("n", (*names)++);
  if (pick(4) == 0) {
    static const char* kGuards[] = {
        "success_if: \"health >= 0\"", "failure_if: \"health >= 0\"",
        "success_if: \"health < 40\"", "failure_if: \"danger > 5\"",
        "success_if: \"danger < 2\"",  "failure_if: \"health < -1\"",
        "skip_if: \"health < 40\"",    "while: \"danger < 8\"",
        "skip_if: \"alert\"",          "failure_if: \"count > 2\"",
        "on_success: \"count += 1\"",  "post: \"alert := !alert\""};
    absl::StrAppend(&name, ", ", kGuards[pick(12)]);
  }
  auto children = [&](int n) {
    std::vector<std::string> c;
    for (int i = 0; i < n; ++i) c.push_back(RandomNode(rng, depth - 1, names));
    return absl::StrCat("[", absl::StrJoin(c, ", "), "]");
  };
  switch (kind) {
    case 0:
    case 1:
    case 2:
    case 3: {
      static const char* kOrdered[] = {
          "sequence", "fallback", "reactive_sequence", "reactive_fallback"};
      return absl::StrFormat("{name: %s, %s: {children: %s}}", name,
                             kOrdered[kind], children(2 + pick(3)));
    }
    case 4: {
      static const char* kDecorators[] = {"inverter", "force_success",
                                          "force_failure"};
      return absl::StrFormat("{name: %s, %s: {child: %s}}", name,
                             kDecorators[pick(3)],
                             RandomNode(rng, depth - 1, names));
    }
    case 5: {
      const bool repeat = pick(2);
      return absl::StrFormat("{name: %s, %s: {%s: %d, child: %s}}", name,
                             repeat ? "repeat" : "retry",
                             repeat ? "times" : "attempts", pick(3),
                             RandomNode(rng, depth - 1, names));
    }
    case 6: {
      // Half of them from a few that contradict each other (health 50 and
      // up, 30 and down; danger 3 and down, 6 and up), so that paths with
      // conditions that cannot hold together are common.
      static const char* kCanned[] = {
          "{factor: health, range: {min: 0, max: 100}, threshold: 0.5}",
          "{factor: health, range: {min: 100, max: 0}, threshold: 0.7}",
          "{factor: danger, range: {min: 10, max: 0}, threshold: 0.7}",
          "{factor: danger, range: {min: 0, max: 10}, threshold: 0.6}"};
      if (pick(2)) {
        return absl::StrFormat("{name: %s, condition: %s}", name,
                               kCanned[pick(4)]);
      }
      const bool health = pick(2);
      const double span = health ? 100 : 10;
      const double lo = real(-0.3, 1.3) * span;
      double hi = real(-0.3, 1.3) * span;
      if (std::abs(hi - lo) < 0.01) hi = lo + 0.1 * span;  // never empty
      return absl::StrFormat(
          "{name: %s, condition: {factor: %s, range: {min: %.3f, max: %.3f}, "
          "threshold: %.3f}}",
          name, health ? "health" : "danger", lo, hi, real(0, 1));
    }
    case 7:
      return absl::StrFormat("{name: %s, action: %s}", name, kActions[pick(4)]);
    case 11:
      return absl::StrFormat("{name: %s, sequence_with_memory: {children: %s}}",
                             name, children(2 + pick(2)));
    case 12:
      return absl::StrFormat("{name: %s, if_then_else: {children: %s}}", name,
                             children(2 + pick(2)));
    case 13: {
      // The condition must decide in one tick: a condition leaf.
      std::string first = RandomNode(rng, 0, names);
      while (first.find("condition") == std::string::npos) {
        first = RandomNode(rng, 0, names);
      }
      std::vector<std::string> rest = {first};
      for (int i = 0; i < 1 + pick(2); ++i)
        rest.push_back(RandomNode(rng, depth - 1, names));
      return absl::StrFormat("{name: %s, while_do_else: {children: [%s]}}",
                             name, absl::StrJoin(rest, ", "));
    }
    case 14:
      return absl::StrFormat(
          "{name: %s, %s: {child: %s}}", name,
          pick(2) ? "run_once" : "keep_running_until_failure",
          RandomNode(rng, depth - 1, names));
    case 15:
      return absl::StrFormat("{name: %s, delay: {seconds: %.1f, child: %s}}",
                             name, 0.5 * (1 + pick(3)),
                             RandomNode(rng, depth - 1, names));
    case 16:
      return absl::StrFormat(
          "{name: %s, switch: {factor: danger, cases: [2, 5], children: %s}}",
          name, children(3));
    case 18:
      return absl::StrFormat("{name: %s, %s: {}}", name,
                             pick(2) ? "always_success" : "always_failure");
    case 19:
      return absl::StrFormat("{name: %s, sleep: {seconds: %.1f}}", name,
                             0.5 * (1 + pick(3)));
    case 20:
      return absl::StrFormat("{name: %s, %s: {children: %s}}", name,
                             pick(2) ? "try_catch" : "parallel_all",
                             children(2 + pick(2)));
    case 21: {
      // Scripts over two variables the guards above read too.
      static const char* kScripts[] = {"alert := danger > 5",
                                       "count := count + 1; alert := false",
                                       "count := health < 30 ? 0 : count"};
      return absl::StrFormat("{name: %s, script: \"%s\"}", name,
                             kScripts[pick(3)]);
    }
    case 22: {
      static const char* kConditions[] = {"alert && health < 60", "count > 1",
                                          "danger * 10 >= health"};
      return absl::StrFormat("{name: %s, script_condition: \"%s\"}", name,
                             kConditions[pick(3)]);
    }
    case 23: {
      // A loop over the values the scripts' `count` compares with, into
      // that variable, or over none.
      static const char* kValues[] = {"[]", "[0, 2]", "[1, 2, 3]"};
      static const char* kIfEmpty[] = {"success", "failure", "skipped"};
      return absl::StrFormat(
          "{name: %s, loop: {values: %s, variable: count, if_empty: %s, "
          "child: %s}}",
          name, kValues[pick(3)], kIfEmpty[pick(3)],
          RandomNode(rng, depth - 1, names));
    }
    case 9:
      return absl::StrFormat("{name: %s, %s: {seconds: %.1f, child: %s}}", name,
                             pick(2) ? "cooldown" : "timeout",
                             0.5 * (1 + pick(4)),
                             RandomNode(rng, depth - 1, names));
    case 10:
      return absl::StrFormat(
          "{name: %s, parallel: {success_threshold: 1, children: %s}}", name,
          children(2 + pick(2)));
    default: {
      std::vector<std::string> c;
      std::set<int> used;
      for (int i = 0; i < 2 + pick(2); ++i) {
        const int a = pick(4);
        if (used.insert(a).second) {
          c.push_back(absl::StrFormat("{action: %s}", kActions[a]));
        }
      }
      return absl::StrFormat(
          "{name: %s, utility: {rescore: %s, on_failure: %s, children: [%s]}}",
          name, pick(2) ? "on_enter" : "every_tick",
          pick(2) ? "fail" : "next_best", absl::StrJoin(c, ", "));
    }
  }
}

// Whether a precondition may answer for node `n` (its curve then unread).
bool Guarded(const engine::CompiledNode& n) { return n.Guarded(); }

TEST(TreeAnalysisTest, RandomTreesNeverTickWhatTheAnalysisRulesOut) {
  std::mt19937_64 rng(2026);
  int checked_dead = 0, checked_never = 0, checked_chosen = 0, trees = 0,
      guarded_ticks = 0, checked_ranges = 0, checked_paths = 0;
  std::set<std::string> kinds;
  for (int t = 0; t < 2000; ++t) {
    int names = 0;
    std::string node = RandomNode(rng, 3, &names);
    // The variables the scripts read are assigned somewhere (the root's
    // on_halted), as every name a tree's scripts read must be.
    node.insert(
        node.find(',') == std::string::npos ? node.size() - 1 : node.find(','),
        ", on_halted: \"count := 0; alert := false\"");
    auto set = Load(TreeSet("  " + node + "\n"));
    if (set == nullptr) continue;
    ++trees;
    const v1::SetAnalysis a = Analysed(*set);
    std::set<int> dead, never_holds, always_holds;
    std::map<std::string, int> ids;
    std::map<int, std::pair<float, float>> outputs;  // condition: its range
    // Per node, the conditions the analysis says hold whenever it is
    // entered: (condition node label, holds).
    std::map<int, std::vector<std::pair<std::string, bool>>> paths;
    for (const v1::TreeNodeReach& x : a.tree()) {
      kinds.insert(x.kind());
      for (const std::string& p : x.path()) {
        const size_t space = p.rfind(' ');
        paths[x.node()].push_back(
            {p.substr(0, space), p.substr(space + 1) == "holds"});
      }
      if (x.kind() == "condition") {
        outputs[x.node()] = {x.min_output(), x.max_output()};
      }
      ids[x.label()] = x.node();
      if (x.reach() == v1::REACH_DEAD) dead.insert(x.node());
    }
    for (const v1::Finding& f : a.findings()) {
      if (f.kind() == "never_holds") never_holds.insert(ids[f.subject()]);
      if (f.kind() == "always_holds") always_holds.insert(ids[f.subject()]);
      // A utility node's child never chosen is DEAD in the tree's reach:
      // checked with the others below, as never ticked.
      if (f.kind() == "never_chosen") ++checked_chosen;
    }
    checked_dead += static_cast<int>(dead.size());
    checked_never += static_cast<int>(never_holds.size());
    // Episodes of ticks at random points, the running leaves' outcomes at
    // random, every node ticked recorded.
    const engine::CompiledBehaviourSet& c = set->compiled;
    const engine::CompiledTree& tree = *c.tree();
    engine::TreeTick tick;
    std::vector<engine::NodeState> before;
    // Whether the condition node labelled `label` holds at `factors`.
    auto holds = [&](const std::string& label, const float* factors) {
      const engine::CompiledNode& cn = tree.node(ids.at(label));
      const engine::CompiledConsideration& k = cn.condition;
      return engine::EvaluateCurve(
                 k.curve,
                 engine::Normalise(factors[k.factor], k.range_lo, k.range_span),
                 tree.curve_points) >= cn.threshold;
    };
    for (int episode = 0; episode < 40; ++episode) {
      std::string state;
      std::vector<engine::LeafOutcome> outcomes;
      for (int step = 0; step < 12; ++step) {
        const float factors[2] = {
            static_cast<float>(std::uniform_real_distribution<>(0, 100)(rng)),
            static_cast<float>(std::uniform_real_distribution<>(0, 10)(rng))};
        engine::AgentInput agent{.factors = factors};
        engine::TreeInput in{
            .game_time = step * 0.5, .state = state, .outcomes = outcomes};
        ASSERT_EQ(engine::DecodeTreeState(c, state, &before),
                  engine::TreeReset::kNone);
        ASSERT_TRUE(
            engine::TickTree(c, agent, in, engine::ExplainLevel::kTop, &tick)
                .ok());
        for (const engine::TreeNodeTrace& n : tick.path) {
          // Entered (ticked while not running): its path's conditions hold.
          if (!before[n.node].running) {
            for (const auto& [label, must_hold] : paths[n.node]) {
              ++checked_paths;
              ASSERT_EQ(holds(label, factors), must_hold)
                  << "node " << n.node << " entered where " << label
                  << (must_hold ? " fails" : " holds") << "\n"
                  << node;
            }
          }
          ASSERT_FALSE(dead.contains(n.node))
              << "node " << n.node << " was ticked\n"
              << node;
          // A condition's curve output lies in the range analysed for it.
          if (auto r = outputs.find(n.node);
              r != outputs.end() &&
              c.tree()->node(n.node).kind == engine::NodeKind::kCondition) {
            const engine::CompiledNode& cn = c.tree()->node(n.node);
            if (!Guarded(cn)) {
              ++checked_ranges;
              ASSERT_GE(n.value, r->second.first) << node;
              ASSERT_LE(n.value, r->second.second) << node;
            }
          }
          // A precondition answers for its node: never_holds and
          // always_holds speak of the curve.
          const engine::CompiledNode& cn = c.tree()->node(n.node);
          if (Guarded(cn)) {
            ++guarded_ticks;
            continue;
          }
          if (n.status == engine::NodeStatus::kSuccess) {
            ASSERT_FALSE(never_holds.contains(n.node)) << node;
          }
          if (n.status == engine::NodeStatus::kFailure) {
            ASSERT_FALSE(always_holds.contains(n.node)) << node;
          }
        }
        state = tick.state;
        outcomes.clear();
        for (const engine::TreeLeaf& leaf : tick.run) {
          static const engine::NodeStatus kEnd[] = {
              engine::NodeStatus::kRunning, engine::NodeStatus::kSuccess,
              engine::NodeStatus::kFailure};
          outcomes.push_back(
              {.leaf = leaf.node,
               .status = kEnd[std::uniform_int_distribution<>(0, 2)(rng)]});
        }
      }
    }
  }
  EXPECT_GE(trees, 1400);
  // The sample ruled something out, or the test proves nothing.
  EXPECT_GT(checked_dead, 10);
  EXPECT_GT(checked_never, 3);
  EXPECT_GT(guarded_ticks, 100);
  EXPECT_GT(checked_chosen, 0);
  EXPECT_GT(checked_ranges, 1000);
  EXPECT_GT(checked_paths, 1000);
  // Every node kind the engine knows was in the sample.
  for (const engine::NodeKind kind : engine::AllNodeKinds()) {
    EXPECT_TRUE(kinds.contains(engine::NodeKindName(kind)))
        << engine::NodeKindName(kind) << " never generated";
  }
}

}  // namespace
}  // namespace utilityd::analysis
