// Every tree node kind over several ticks: leaf outcomes in; leaves to run
// (started or continuing), halted leaves and the root's status out, with the
// state round-tripped through its bytes between ticks as the wire carries it.
#include "utilityd/engine/tree.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::engine {
namespace {

// Factors a, b, c (0..1) and actions x, y, z, w that always score 1 unless
// the test says otherwise; `tree` is the YAML of the tree.
std::string SetYaml(const std::string& tree, const std::string& extra = "") {
  return absl::StrCat(R"(
name: t
factors: [{name: a}, {name: b}, {name: c}]
target_factors: [{name: near}]
actions:
  - {name: x, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: y, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: z, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: w, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - name: hit
    per_target: true
    considerations: [{name: n, factor: near, per_target: true}]
  - {name: by_b, considerations: [{name: k, factor: b}]}
  - {name: by_c, considerations: [{name: k, factor: c}]}
)",
                      extra, "tree:\n", tree);
}

std::shared_ptr<const loader::LoadedSet> Load(const std::string& yaml) {
  auto set = loader::LoadSetText(yaml, "test.yaml");
  EXPECT_TRUE(set.ok()) << set.status();
  return set.ok() ? *set : nullptr;
}

// One tick's input and what it must produce. `run` lists leaves as
// "x+" (started now) or "x" (continuing); `halted` lists leaf names.
struct Step {
  std::string factors;   // "a=1 b=0"; changes from here on
  std::string outcomes;  // "x=success y=failure"
  std::string run;
  std::string halted;
  NodeStatus status;
  double time = 0;
  std::string targets = "";  // "0.2 0.9": `near` of each target
};

class Driver {
 public:
  explicit Driver(std::shared_ptr<const loader::LoadedSet> set)
      : set_(std::move(set)), factors_(set_->compiled.factor_count(), 0.0f) {}

  std::string Name(int node) const {
    const CompiledNode& n = set_->compiled.tree()->node(node);
    return n.name.empty() ? set_->compiled.actions()[n.action].name : n.name;
  }

  int Leaf(const std::string& name) const {
    const CompiledTree& tree = *set_->compiled.tree();
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      if (tree.nodes[i].kind == NodeKind::kAction &&
          Name(static_cast<int>(i)) == name) {
        return static_cast<int>(i);
      }
    }
    ADD_FAILURE() << "no leaf " << name;
    return -1;
  }

  TreeTick Tick(const Step& step) {
    for (absl::string_view kv :
         absl::StrSplit(step.factors, ' ', absl::SkipEmpty())) {
      std::vector<std::string> p = absl::StrSplit(kv, '=');
      factors_[set_->compiled.FindFactor(p[0])] = std::stof(p[1]);
    }
    std::vector<LeafOutcome> outcomes;
    for (absl::string_view kv :
         absl::StrSplit(step.outcomes, ' ', absl::SkipEmpty())) {
      std::vector<std::string> p = absl::StrSplit(kv, '=');
      outcomes.push_back({.leaf = Leaf(p[0]),
                          .status = p[1] == "success" ? NodeStatus::kSuccess
                                    : p[1] == "failure"
                                        ? NodeStatus::kFailure
                                        : NodeStatus::kRunning});
    }
    near_.clear();
    for (absl::string_view v :
         absl::StrSplit(step.targets, ' ', absl::SkipEmpty())) {
      near_.push_back(std::stof(std::string(v)));
    }
    targets_.clear();
    for (const float& v : near_)
      targets_.push_back({absl::MakeConstSpan(&v, 1)});
    AgentInput agent{.factors = factors_, .targets = targets_, .seed = 7};
    TreeInput in{.game_time = step.time, .state = state_, .outcomes = outcomes};
    TreeTick tick;
    EXPECT_TRUE(
        TickTree(set_->compiled, agent, in, ExplainLevel::kFull, &tick).ok());
    state_ = tick.state;
    return tick;
  }

  std::string Run(const TreeTick& t) const {
    std::vector<std::string> out;
    for (const TreeLeaf& l : t.run) {
      std::string s = Name(l.node);
      if (l.target >= 0) absl::StrAppend(&s, "@", l.target);
      out.push_back(s + (l.started ? "+" : ""));
    }
    return absl::StrJoin(out, " ");
  }

  std::string Halted(const TreeTick& t) const {
    std::vector<std::string> out;
    for (const TreeLeaf& l : t.halted) out.push_back(Name(l.node));
    return absl::StrJoin(out, " ");
  }

  const std::string& state() const { return state_; }

 private:
  std::shared_ptr<const loader::LoadedSet> set_;
  std::vector<float> factors_;
  std::vector<float> near_;
  std::vector<TargetInput> targets_;
  std::string state_;
};

struct Case {
  std::string name;
  std::string tree;
  std::vector<Step> steps;
  std::string extra = "";
};

using S = NodeStatus;

class TreeNodeTest : public testing::TestWithParam<Case> {};

TEST_P(TreeNodeTest, TicksAsSpecified) {
  const Case& c = GetParam();
  auto set = Load(SetYaml(c.tree, c.extra));
  ASSERT_NE(set, nullptr);
  Driver d(set);
  for (size_t i = 0; i < c.steps.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("tick ", i));
    const TreeTick t = d.Tick(c.steps[i]);
    EXPECT_EQ(d.Run(t), c.steps[i].run);
    EXPECT_EQ(d.Halted(t), c.steps[i].halted);
    EXPECT_EQ(NodeStatusName(t.status), NodeStatusName(c.steps[i].status));
    EXPECT_EQ(t.reset, TreeReset::kNone);
  }
}

const char kSeq[] = R"(
  sequence: {children: [{action: x}, {action: y}]}
)";

INSTANTIATE_TEST_SUITE_P(
    Nodes, TreeNodeTest,
    testing::Values(
        // Seed 001's first pitfall: a running leaf resumes, never restarts.
        Case{"sequence_resumes_running_child",
             kSeq,
             {{"", "", "x+", "", S::kRunning},
              {"", "", "x", "", S::kRunning},
              {"", "x=running", "x", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess},
              {"", "", "x+", "", S::kRunning}}},
        Case{"sequence_fails_with_child",
             kSeq,
             {{"", "", "x+", "", S::kRunning},
              {"", "x=failure", "", "", S::kFailure},
              {"", "", "x+", "", S::kRunning}}},
        // A plain sequence does not re-check an earlier condition.
        Case{"sequence_does_not_recheck",
             R"(
  sequence: {children: [{condition: {factor: a}}, {action: x}]}
)",
             {{"a=1", "", "x+", "", S::kRunning},
              {"a=0", "", "x", "", S::kRunning}}},
        Case{"fallback_tries_next_after_failure",
             R"(
  fallback: {children: [{action: x}, {action: y}]}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=failure", "y+", "", S::kRunning},
              {"", "y=failure", "", "", S::kFailure},
              {"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // Seed 001's conditional abort: the earlier condition, re-checked
        // every tick, halts the running leaf.
        Case{"reactive_sequence_aborts",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: a}
      - sequence: {children: [{action: x}, {action: y}]}
)",
             {{"a=1", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "", "y", "", S::kRunning},
              {"a=0", "", "", "y", S::kFailure},
              {"a=1", "", "x+", "", S::kRunning}}},
        Case{"reactive_fallback_higher_priority_takes_over",
             R"(
  reactive_fallback:
    children:
      - sequence: {children: [{condition: {factor: a}}, {action: x}]}
      - action: y
)",
             {{"a=0", "", "y+", "", S::kRunning},
              {"", "", "y", "", S::kRunning},
              {"a=1", "", "x+", "y", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        Case{"reactive_fallback_condition_success_halts",
             R"(
  reactive_fallback: {children: [{condition: {factor: a}}, {action: y}]}
)",
             {{"a=0", "", "y+", "", S::kRunning},
              {"a=1", "", "", "y", S::kSuccess}}},
        // The game reported the leaf finished: it is not halted again.
        Case{"finished_leaf_is_not_halted",
             R"(
  reactive_sequence: {children: [{condition: {factor: a}}, {action: x}]}
)",
             {{"a=1", "", "x+", "", S::kRunning},
              {"a=0", "x=success", "", "", S::kFailure}}},
        Case{"parallel_all_must_succeed",
             R"(
  parallel: {children: [{action: x}, {action: y}]}
)",
             {{"", "", "x+ y+", "", S::kRunning},
              {"", "x=success", "y", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        Case{"parallel_failure_halts_the_rest",
             R"(
  parallel: {children: [{action: x}, {action: y}, {action: z}]}
)",
             {{"", "", "x+ y+ z+", "", S::kRunning},
              {"", "y=failure", "", "x z", S::kFailure}}},
        // An abort in the middle of a tick: x was going to continue and is
        // halted instead; never in both lists.
        Case{"parallel_thresholds",
             R"(
  parallel:
    success_threshold: 1
    failure_threshold: 2
    children: [{action: x}, {action: y}, {action: z}]
)",
             {{"", "", "x+ y+ z+", "", S::kRunning},
              {"", "x=failure", "y z", "", S::kRunning},
              {"", "z=success", "", "y", S::kSuccess}}},
        Case{"parallel_success_out_of_reach",
             R"(
  parallel:
    success_threshold: 2
    failure_threshold: -1
    children: [{action: x}, {action: y}]
)",
             {{"", "", "x+ y+", "", S::kRunning},
              {"", "x=failure", "", "y", S::kFailure}}},
        Case{"inverter",
             R"(
  inverter: {child: {action: x}}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kFailure},
              {"", "", "x+", "", S::kRunning},
              {"", "x=failure", "", "", S::kSuccess}}},
        Case{"force_success_and_failure",
             R"(
  sequence:
    children:
      - force_success: {child: {action: x}}
      - force_failure: {child: {action: y}}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=failure", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kFailure}}},
        // repeat restarts the child in the same tick.
        Case{"repeat_counts_successes",
             R"(
  repeat: {times: 3, child: {action: x}}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "x+", "", S::kRunning},
              {"", "x=success", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        Case{"repeat_stops_on_failure",
             R"(
  repeat: {times: 3, child: {action: x}}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "x+", "", S::kRunning},
              {"", "x=failure", "", "", S::kFailure},
              {"", "", "x+", "", S::kRunning}}},
        Case{"retry_counts_attempts",
             R"(
  retry: {attempts: 2, child: {action: x}}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=failure", "x+", "", S::kRunning},
              {"", "x=failure", "", "", S::kFailure},
              {"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // BehaviorTree.CPP's 0: the child is never ticked.
        Case{"repeat_zero_succeeds_without_ticking",
             R"(
  sequence: {children: [{repeat: {times: 0, child: {action: x}}}, {action: y}]}
)",
             {{"", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        Case{"retry_zero_fails_without_ticking",
             R"(
  fallback: {children: [{retry: {attempts: 0, child: {action: x}}}, {action: y}]}
)",
             {{"", "", "y+", "", S::kRunning},
              {"", "y=failure", "", "", S::kFailure}}},
        // Negative thresholds count back from all the children
        // (children + value + 1): -2 of three is two.
        Case{"parallel_negative_thresholds",
             R"(
  parallel:
    success_threshold: -2
    failure_threshold: -2
    children: [{action: x}, {action: y}, {action: z}]
)",
             {{"", "", "x+ y+ z+", "", S::kRunning},
              {"", "x=success", "y z", "", S::kRunning},
              {"", "y=failure", "z", "", S::kRunning},
              {"", "z=success", "", "", S::kSuccess},
              {"", "", "x+ y+ z+", "", S::kRunning},
              {"", "x=failure y=failure", "", "z", S::kFailure}}},
        // Durations are game time from the request.
        Case{"cooldown_on_game_time",
             R"(
  fallback:
    children:
      - cooldown: {seconds: 5, child: {action: x}}
      - action: y
)",
             {{"", "", "x+", "", S::kRunning, 0},
              {"", "x=success", "", "", S::kSuccess, 1},
              {"", "", "y+", "", S::kRunning, 3},
              {"", "y=success", "", "", S::kSuccess, 5.9},
              {"", "", "x+", "", S::kRunning, 6.0}}},
        Case{"timeout_halts_on_game_time",
             R"(
  timeout: {seconds: 2, child: {action: x}}
)",
             {{"", "", "x+", "", S::kRunning, 10},
              {"", "", "x", "", S::kRunning, 11.5},
              {"", "", "", "x", S::kFailure, 12},
              {"", "", "x+", "", S::kRunning, 13}}},
        Case{"timeout_lets_a_finished_child_through",
             R"(
  timeout: {seconds: 2, child: {action: x}}
)",
             {{"", "", "x+", "", S::kRunning, 0},
              {"", "x=success", "", "", S::kSuccess, 1.9}}},
        Case{"condition_threshold",
             R"(
  sequence:
    children:
      - condition: {factor: a, range: {min: 0, max: 10}, threshold: 0.3}
      - action: x
)",
             {{"a=2.9", "", "", "", S::kFailure},
              {"a=3", "", "x+", "", S::kRunning}}},
        // The utility node runs the best child; with every_tick a better
        // child aborts the running one.
        Case{"utility_on_enter_keeps_its_choice",
             R"(
  utility: {children: [{action: by_b}, {action: by_c}]}
)",
             {{"b=0.8 c=0.2", "", "by_b+", "", S::kRunning},
              {"b=0.1 c=0.9", "", "by_b", "", S::kRunning},
              {"", "by_b=success", "", "", S::kSuccess},
              {"", "", "by_c+", "", S::kRunning}}},
        Case{"utility_every_tick_switches",
             R"(
  utility: {rescore: every_tick, children: [{action: by_b}, {action: by_c}]}
)",
             {{"b=0.8 c=0.2", "", "by_b+", "", S::kRunning},
              {"b=0.5 c=0.55", "", "by_b", "", S::kRunning},  // commitment
              {"b=0.1 c=0.9", "", "by_c+", "by_b", S::kRunning}},
             "selection: {commitment_bonus: 0.2}\n"},
        Case{"utility_every_tick_nothing_eligible_halts_and_fails",
             R"(
  utility: {rescore: every_tick, children: [{action: by_b}, {action: by_c}]}
)",
             {{"b=0.8 c=0.2", "", "by_b+", "", S::kRunning},
              {"b=0 c=0", "", "", "by_b", S::kFailure}}},
        Case{"utility_next_best_after_failure",
             R"(
  utility: {on_failure: next_best, children: [{action: by_b}, {action: by_c}]}
)",
             {{"b=0.8 c=0.2", "", "by_b+", "", S::kRunning},
              {"", "by_b=failure", "by_c+", "", S::kRunning},
              {"", "by_c=failure", "", "", S::kFailure}}},
        Case{"utility_fail_means_fail",
             R"(
  utility: {children: [{action: by_b}, {action: by_c}]}
)",
             {{"b=0.8 c=0.2", "", "by_b+", "", S::kRunning},
              {"", "by_b=failure", "", "", S::kFailure}}},
        Case{"utility_nothing_eligible_fails",
             R"(
  fallback:
    children:
      - utility: {children: [{action: by_b}, {action: by_c}]}
      - action: x
)",
             {{"b=0 c=0", "", "x+", "", S::kRunning}}},
        Case{"utility_chooses_the_target",
             R"(
  utility: {children: [{action: hit}]}
)",
             {{"", "", "hit@1+", "", S::kRunning, 0, "0.2 0.9 0.5"},
              {"", "", "hit@1", "", S::kRunning, 0, "0.2 0.9 0.5"}}},
        // Targets are matched by position: one that is gone ends the
        // running leaf's target; every_tick then picks among those left.
        Case{"utility_target_gone",
             R"(
  utility: {rescore: every_tick, children: [{action: hit}]}
)",
             {{"", "", "hit@1+", "", S::kRunning, 0, "0.2 0.9"},
              {"", "", "hit@0+", "hit", S::kRunning, 0, "0.2"}}},
        Case{"utility_subtree_children",
             R"(
  utility:
    children:
      - name: left
        considerations: [{name: k, factor: b}]
        sequence: {children: [{action: x}, {action: y}]}
      - name: right
        considerations: [{name: k, factor: c}]
        action: z
)",
             {{"b=0.9 c=0.1", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess},
              {"b=0.1 c=0.9", "", "right+", "", S::kRunning}}}),
    [](const testing::TestParamInfo<Case>& param) { return param.param.name; });

// The nodes BehaviorTree.CPP 4 users reach for next. Where BT.CPP has a
// unit test for the node, its assertions are restated as a tick table,
// named after the test (BT.CPP's synchronous TestA/TestB are action leaves
// here: started on one tick, reported done on the next; AlwaysSuccess and
// AlwaysFailure are conditions on factor a or b).
const char kIfThenElse[] = R"(
  if_then_else: {children: [{condition: {factor: a}}, {action: x}, {action: y}]}
)";
const char kWhileDoElse[] = R"(
  while_do_else: {children: [{condition: {factor: a}}, {action: x}, {action: y}]}
)";
const char kSwitch[] = R"(
  switch:
    factor: c
    cases: [1, 42]
    children: [{action: x}, {action: y}, {action: w}]
)";
INSTANTIATE_TEST_SUITE_P(
    BehaviorTreeCppNodes, TreeNodeTest,
    testing::Values(
        // gtest_if_then_else.cpp, ConditionTrue_ThenBranch
        Case{"if_then_else_condition_true_then_branch",
             kIfThenElse,
             {{"a=1", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // ConditionFalse_ElseBranch
        Case{"if_then_else_condition_false_else_branch",
             kIfThenElse,
             {{"a=0", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // ConditionFalse_TwoChildren_ReturnsFailure
        Case{"if_then_else_two_children_condition_false_fails",
             R"(
  if_then_else: {children: [{condition: {factor: a}}, {action: x}]}
)",
             {{"a=0", "", "", "", S::kFailure}}},
        // ThenBranchFails (the then branch an AlwaysFailure: b is 0)
        Case{"if_then_else_then_branch_fails",
             R"(
  if_then_else:
    children: [{condition: {factor: a}}, {condition: {factor: b}}, {action: x}]
)",
             {{"a=1 b=0", "", "", "", S::kFailure}}},
        // ElseBranchFails
        Case{"if_then_else_else_branch_fails",
             R"(
  if_then_else:
    children: [{condition: {factor: a}}, {action: x}, {condition: {factor: b}}]
)",
             {{"a=0 b=0", "", "", "", S::kFailure}}},
        // ConditionRunning: the condition runs, then succeeds; the then
        // branch starts in the tick it decides.
        Case{"if_then_else_condition_running",
             R"(
  if_then_else: {children: [{action: z}, {action: x}, {action: y}]}
)",
             {{"", "", "z+", "", S::kRunning},
              {"", "z=running", "z", "", S::kRunning},
              {"", "z=success", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // HaltBehavior: halted (here by a reactive parent's condition) and
        // ticked again, it starts from its condition.
        Case{"if_then_else_halted_starts_over",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: c}
      - if_then_else: {children: [{condition: {factor: a}}, {action: x}, {action: y}]}
)",
             {{"a=1 c=1", "", "x+", "", S::kRunning},
              {"c=0", "", "", "x", S::kFailure},
              {"a=0 c=1", "", "y+", "", S::kRunning}}},
        // The branch runs to its end: the condition is not ticked again.
        Case{"if_then_else_does_not_recheck_while_a_branch_runs",
             kIfThenElse,
             {{"a=1", "", "x+", "", S::kRunning},
              {"a=0", "", "x", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess},
              {"", "", "y+", "", S::kRunning}}},
        // gtest_while_do_else.cpp, ConditionTrue_DoBranch
        Case{"while_do_else_condition_true_do_branch",
             kWhileDoElse,
             {{"a=1", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // ConditionFalse_ElseBranch
        Case{"while_do_else_condition_false_else_branch",
             kWhileDoElse,
             {{"a=0", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // ConditionFalse_TwoChildren_ReturnsFailure
        Case{"while_do_else_two_children_condition_false_fails",
             R"(
  while_do_else: {children: [{condition: {factor: a}}, {action: x}]}
)",
             {{"a=0", "", "", "", S::kFailure}}},
        // DoBranchFails
        Case{"while_do_else_do_branch_fails",
             R"(
  while_do_else:
    children: [{condition: {factor: a}}, {condition: {factor: b}}, {action: x}]
)",
             {{"a=1 b=0", "", "", "", S::kFailure}}},
        // ElseBranchFails
        Case{"while_do_else_else_branch_fails",
             R"(
  while_do_else:
    children: [{condition: {factor: a}}, {action: x}, {condition: {factor: b}}]
)",
             {{"a=0 b=0", "", "", "", S::kFailure}}},
        // ConditionChanges_HaltsElse: the condition turns true while the
        // else branch runs; it is halted and do starts in the same tick.
        Case{"while_do_else_condition_change_halts_else",
             kWhileDoElse,
             {{"a=0", "", "y+", "", S::kRunning},
              {"a=1", "", "x+", "y", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // ConditionChanges_HaltsDo
        Case{"while_do_else_condition_change_halts_do",
             kWhileDoElse,
             {{"a=1", "", "x+", "", S::kRunning},
              {"", "", "x", "", S::kRunning},
              {"a=0", "", "y+", "x", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // Without an else, a condition turning false halts do and fails
        // (BT.CPP resets its children).
        Case{"while_do_else_two_children_condition_false_halts_do",
             R"(
  while_do_else: {children: [{condition: {factor: a}}, {action: x}]}
)",
             {{"a=1", "", "x+", "", S::kRunning},
              {"a=0", "", "", "x", S::kFailure}}},
        // HaltBehavior
        Case{"while_do_else_halted_starts_over",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: c}
      - while_do_else: {children: [{condition: {factor: a}}, {action: x}, {action: y}]}
)",
             {{"a=1 c=1", "", "x+", "", S::kRunning},
              {"c=0", "", "", "x", S::kFailure},
              {"c=1", "", "x+", "", S::kRunning}}},
        // keep_running_until_failure: a success is running (the child
        // starts over next tick), a failure ends it.
        Case{"keep_running_until_failure",
             R"(
  keep_running_until_failure: {child: {action: x}}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"", "", "x+", "", S::kRunning},
              {"", "x=failure", "", "", S::kFailure},
              {"", "", "x+", "", S::kRunning}}},
        Case{"keep_running_until_failure_of_a_condition",
             R"(
  keep_running_until_failure: {child: {condition: {factor: a}}}
)",
             {{"a=1", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"a=0", "", "", "", S::kFailure}}},
        // delay: running for its seconds of game time, then the child.
        Case{"delay_then_the_child",
             R"(
  delay: {seconds: 2, child: {action: x}}
)",
             {{"", "", "", "", S::kRunning, 10},
              {"", "", "", "", S::kRunning, 11.9},
              {"", "", "x+", "", S::kRunning, 12},
              {"", "", "x", "", S::kRunning, 13},
              {"", "x=success", "", "", S::kSuccess, 14},
              {"", "", "", "", S::kRunning, 15},
              {"", "", "x+", "", S::kRunning, 17}}},
        // always_success, always_failure: the status, nothing run.
        Case{"constant_leaves",
             R"(
  sequence:
    children:
      - fallback: {children: [{always_failure: {}}, {always_success: {}}]}
      - inverter: {child: {always_failure: {}}}
      - action: x
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // gtest_reactive.cpp, Reactive TestLogging (TestA, a synchronous
        // action there, is a condition here): every tick ticks the
        // condition and AlwaysSuccess again while Sleep runs; the sequence
        // succeeds when it wakes.
        Case{"reactive_test_logging",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: a}
      - always_success: {}
      - sleep: {seconds: 0.1}
)",
             {{"a=1", "", "", "", S::kRunning, 0},
              {"", "", "", "", S::kRunning, 0.05},
              {"", "", "", "", S::kSuccess, 0.1}}},
        // sleep: running for its seconds of game time, then success; the
        // next tick sleeps again.
        Case{"sleep_then_success",
             R"(
  sequence: {children: [{sleep: {seconds: 2}}, {action: x}]}
)",
             {{"", "", "", "", S::kRunning, 10},
              {"", "", "", "", S::kRunning, 11.9},
              {"", "", "x+", "", S::kRunning, 12},
              {"", "x=success", "", "", S::kSuccess, 13},
              {"", "", "", "", S::kRunning, 14},
              {"", "", "x+", "", S::kRunning, 16}}},
        // Halted while it sleeps, it sleeps its whole time again.
        Case{"sleep_halted_starts_over",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: c}
      - sleep: {seconds: 2}
)",
             {{"c=1", "", "", "", S::kRunning, 0},
              {"c=0", "", "", "", S::kFailure, 1},
              {"c=1", "", "", "", S::kRunning, 1.5},
              {"", "", "", "", S::kRunning, 3.4},
              {"", "", "", "", S::kSuccess, 3.5}}},
        // A child that decides at once answers in the tick the delay ends.
        Case{"delay_of_a_condition",
             R"(
  delay: {seconds: 1, child: {condition: {factor: a}}}
)",
             {{"a=0", "", "", "", S::kRunning, 0},
              {"", "", "", "", S::kFailure, 1}}},
        // gtest_switch.cpp (Switch2 on my_var, cases 1 and 42; here the
        // factor c): DefaultCase
        Case{"switch_default_case",
             kSwitch,
             {{"c=0", "", "w+", "", S::kRunning},
              {"", "w=success", "", "", S::kSuccess}}},
        // Case1
        Case{"switch_case_1",
             kSwitch,
             {{"c=1", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // Case2
        Case{"switch_case_2",
             kSwitch,
             {{"c=42", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // CaseNone (a value no case has; and NaN)
        Case{"switch_case_none",
             kSwitch,
             {{"c=7", "", "w+", "", S::kRunning},
              {"", "w=success", "", "", S::kSuccess},
              {"c=nan", "", "w+", "", S::kRunning}}},
        // CaseSwitchToDefault: the running case is halted when the value
        // changes (read when ticked).
        Case{"switch_case_switch_to_default",
             kSwitch,
             {{"c=1", "", "x+", "", S::kRunning},
              {"", "", "x", "", S::kRunning},
              {"c=0", "", "w+", "x", S::kRunning},
              {"", "w=success", "", "", S::kSuccess}}},
        // CaseSwitchToAction2
        Case{"switch_case_switch_to_action_2",
             kSwitch,
             {{"c=1", "", "x+", "", S::kRunning},
              {"c=42", "", "y+", "x", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // ActionFailure
        Case{"switch_action_failure",
             kSwitch,
             {{"c=1", "", "x+", "", S::kRunning},
              {"", "x=failure", "", "", S::kFailure}}},
        // Halted while it waits, it waits its whole time again.
        Case{"delay_halted_starts_over",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: c}
      - delay: {seconds: 2, child: {action: x}}
)",
             {{"c=1", "", "", "", S::kRunning, 0},
              {"c=0", "", "", "", S::kFailure, 1},
              {"c=1", "", "", "", S::kRunning, 1.5},
              {"", "", "", "", S::kRunning, 3.4},
              {"", "", "x+", "", S::kRunning, 3.5}}},
        // gtest_sequence.cpp, SimpleSequenceWithMemoryTest ConditionTrue and
        // ConditionTurnToFalse: the condition is not ticked again while the
        // action runs.
        Case{"sequence_with_memory_condition_turn_to_false",
             R"(
  sequence_with_memory: {children: [{condition: {factor: a}}, {action: x}]}
)",
             {{"a=1", "", "x+", "", S::kRunning},
              {"a=0", "", "x", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // ComplexSequenceWithMemoryTest ConditionsTrue and
        // Conditions1ToFalse: the nested conditions, done, are not ticked
        // again while the action sequence runs.
        Case{"sequence_with_memory_complex_conditions_1_to_false",
             R"(
  sequence_with_memory:
    children:
      - sequence_with_memory:
          children: [{condition: {factor: a}}, {condition: {factor: b}}]
      - sequence_with_memory: {children: [{action: x}, {action: y}]}
)",
             {{"a=1 b=1", "", "x+", "", S::kRunning},
              {"a=0", "", "x", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // SequenceWithMemoryTest Issue_636: a failing child is ticked again
        // next tick, the children before it are not; the leaves each run
        // once (BT.CPP's counters 1, 1, 1). Once done, it starts over.
        Case{"sequence_with_memory_issue_636",
             R"(
  sequence_with_memory:
    children: [{action: x}, {condition: {factor: a}}, {action: y}, {action: z}]
)",
             {{"a=0", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kFailure},
              {"", "", "", "", S::kFailure},
              {"a=1", "", "y+", "", S::kRunning},
              {"", "y=success", "z+", "", S::kRunning},
              {"", "z=success", "", "", S::kSuccess},
              {"", "", "x+", "", S::kRunning}}},
        // Halted (SequenceWithMemory::halt keeps current_child_idx_), it
        // resumes at the child it was on; a plain sequence starts over.
        Case{"sequence_with_memory_halted_keeps_its_place",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: c}
      - sequence_with_memory: {children: [{action: x}, {action: y}]}
)",
             {{"c=1", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"c=0", "", "", "y", S::kFailure},
              {"c=1", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess},
              {"", "", "x+", "", S::kRunning}}},
        // RunOnce (then_skip false): the child runs until it finishes once;
        // then its outcome, the child never ticked again.
        Case{"run_once_keeps_its_first_outcome",
             R"(
  sequence:
    children:
      - run_once: {child: {action: x}}
      - action: y
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess},
              {"", "", "y+", "", S::kRunning},
              {"", "y=failure", "", "", S::kFailure},
              {"", "", "y+", "", S::kRunning}}},
        Case{"run_once_keeps_a_failure",
             R"(
  fallback:
    children:
      - run_once: {child: {condition: {factor: a}}}
      - action: y
)",
             {{"a=0", "", "y+", "", S::kRunning},
              {"a=1", "y=success", "", "", S::kSuccess},
              {"", "", "y+", "", S::kRunning}}},
        // Halted while its child runs, it has not finished once: it runs
        // the child again.
        Case{"run_once_halted_runs_again",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: c}
      - run_once: {child: {action: x}}
)",
             {{"c=1", "", "x+", "", S::kRunning},
              {"c=0", "", "", "x", S::kFailure},
              {"c=1", "", "x+", "", S::kRunning},
              {"", "x=failure", "", "", S::kFailure},
              {"", "", "", "", S::kFailure}}},
        // gtest_preconditions.cpp, Preconditions Basic (A is 1; its `A==1`
        // is `a >= 1` here, `A==2` is `a >= 2`, `A!=1` is `a < 1`): TestA
        // and TestC are not ticked, TestB and TestD once each.
        Case{"preconditions_basic",
             R"(
  sequence:
    children:
      - {success_if: "a >= 1", action: x}
      - {success_if: "a >= 2", action: y}
      - fallback:
          children:
            - {failure_if: "a >= 1", action: z}
            - {failure_if: "a < 1", action: w}
)",
             {{"a=1", "", "y+", "", S::kRunning},
              {"", "y=success", "w+", "", S::kRunning},
              {"", "w=success", "", "", S::kSuccess}}},
        // Issue615_NoSkipWhenRunning (with _failureIf): a running node's
        // precondition is not checked; once it is idle again, it is.
        Case{"preconditions_not_checked_while_running",
             R"(
  keep_running_until_failure:
    child: {failure_if: "c >= 1", action: x}
)",
             {{"c=0", "", "x+", "", S::kRunning},
              {"c=1", "", "x", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"", "", "", "", S::kFailure}}},
        // failure_if is checked before success_if; a NaN factor passes no
        // comparison.
        Case{"preconditions_failure_first_nan_passes_none",
             R"(
  fallback:
    children:
      - {failure_if: "b > 0.5", success_if: "b > 0.2", action: x}
      - action: y
)",
             {{"b=0.9", "", "y+", "", S::kRunning},
              {"b=0.3", "y=success", "", "", S::kSuccess},
              {"b=nan", "", "x+", "", S::kRunning}}}),
    [](const testing::TestParamInfo<Case>& param) { return param.param.name; });

// gtest_try_catch.cpp's cases (TestA, TestB, TestC are actions x, y, z)
// and ParallelAll's rule.
INSTANTIATE_TEST_SUITE_P(
    BehaviorTreeCppTryCatchAndParallelAll, TreeNodeTest,
    testing::Values(
        // AllTryChildrenSucceed: the catch never runs.
        Case{"try_catch_all_try_children_succeed",
             R"(
  try_catch: {children: [{action: x}, {action: y}, {action: z}]}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // FirstChildFails_CatchExecuted: TestA not run, the catch is.
        Case{"try_catch_first_child_fails_catch_executed",
             R"(
  try_catch: {children: [{always_failure: {}}, {action: x}, {action: y}]}
)",
             {{"", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kFailure}}},
        // SecondChildFails_CatchExecuted, and CatchChildRunning: the node
        // runs while its catch does, then fails.
        Case{"try_catch_second_child_fails_catch_running",
             R"(
  try_catch: {children: [{action: x}, {always_failure: {}}, {action: y}]}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "", "y", "", S::kRunning},
              {"", "y=success", "", "", S::kFailure}}},
        // CatchReturnsSuccess_NodeStillReturnsFAILURE (and Failure).
        Case{"try_catch_catch_answer_does_not_matter",
             R"(
  sequence:
    children:
      - force_success: {child: {try_catch: {children: [{always_failure: {}}, {always_success: {}}]}}}
      - try_catch: {children: [{always_failure: {}}, {always_failure: {}}]}
)",
             {{"", "", "", "", S::kFailure}}},
        // ReExecuteAfterSuccess: the try block runs again from its start.
        Case{"try_catch_re_execute_after_success",
             R"(
  try_catch: {children: [{action: x}, {action: y}]}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess},
              {"", "", "x+", "", S::kRunning}}},
        // A skipped try child is passed over; all skipped, so is the node.
        Case{"try_catch_skipped",
             R"(
  try_catch: {children: [{skip_if: "a >= 1", action: x}, {action: y}]}
)",
             {{"a=1", "", "", "", S::kSkipped},
              {"a=0", "", "x+", "", S::kRunning}}},
        // ParallelAll: every child runs to its end; then the failures
        // decide (max_failures 1, the default).
        Case{"parallel_all_waits_for_every_child",
             R"(
  parallel_all: {children: [{action: x}, {action: y}]}
)",
             {{"", "", "x+ y+", "", S::kRunning},
              {"", "x=failure", "y", "", S::kRunning},
              {"", "y=success", "", "", S::kFailure},
              {"", "", "x+ y+", "", S::kRunning},
              {"", "x=success y=success", "", "", S::kSuccess}}},
        Case{"parallel_all_max_failures",
             R"(
  parallel_all: {max_failures: 2, children: [{action: x}, {always_failure: {}}]}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}}));

// SKIPPED (BT.CPP 4): a node passed over by skip_if or while, or a
// run_once that skips. gtest_skipping.cpp's cases, its scripted values
// given as factors (A is a, `A==1` is `a >= 1` where a is 1).
INSTANTIATE_TEST_SUITE_P(
    BehaviorTreeCppSkipping, TreeNodeTest,
    testing::Values(
        // SkippingLogic Sequence: TestA is skipped (its failure and success
        // conditions checked first), TestB runs; the sequence succeeds.
        Case{"skipping_logic_sequence",
             R"(
  sequence:
    children:
      - {success_if: "a >= 2", failure_if: "a < 1", skip_if: "a >= 1", action: x}
      - action: y
)",
             {{"a=1", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // SkipAll: every child skipped, so is the sequence, and the root.
        Case{"skipping_logic_skip_all",
             R"(
  sequence:
    children:
      - {skip_if: "a >= 1", action: x}
      - {skip_if: "a < 2", action: y}
      - {skip_if: "a > 0", action: z}
)",
             {{"a=1", "", "", "", S::kSkipped}}},
        // SkipSubtree: the subtree use's skip_if stays on the node that
        // takes its place; TestA runs, TestB (in the subtree) never.
        Case{"skipping_logic_skip_subtree",
             R"(
  sequence:
    children:
      - action: x
      - {skip_if: "b >= 1", subtree: {name: sub}}
)",
             {{"b=1", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}},
             "subtrees:\n  - {name: sub, tree: {action: y}}\n"},
        // ReactiveSingleChild: the only child skipped, the node skipped.
        Case{"skipping_logic_reactive_single_child",
             R"(
  reactive_sequence:
    children: [{skip_if: "b >= 1", always_success: {}}]
)",
             {{"b=1", "", "", "", S::kSkipped},
              {"b=0", "", "", "", S::kSuccess}}},
        // SkippingReactiveSequence: with value 10 (c), TestB is skipped on
        // every tick and never ticked; the action after it runs.
        Case{"skipping_logic_skipping_reactive_sequence",
             R"(
  reactive_sequence:
    children:
      - {skip_if: "c < 25", condition: {factor: b}}
      - action: x
)",
             {{"b=0 c=10", "", "x+", "", S::kRunning},
              {"", "", "x", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // WhileSkip: `while` false when idle skips TestB; the sequence
        // holding it is skipped, the outer one succeeds.
        Case{"skipping_logic_while_skip",
             R"(
  sequence:
    children:
      - always_success: {}
      - sequence: {children: [{while: "b >= 1", action: x}]}
)",
             {{"b=0", "", "", "", S::kSuccess},
              {"b=1", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}},
        // `while` is the one precondition checked while the node runs:
        // when it stops holding, the running leaf is halted and skipped.
        Case{"while_halts_a_running_node",
             R"(
  sequence:
    children:
      - {while: "b >= 1", action: x}
      - action: y
)",
             {{"b=1", "", "x+", "", S::kRunning},
              {"", "", "x", "", S::kRunning},
              {"b=0", "", "y+", "x", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // Decorator RunOnce (then_skip, BT.CPP's default): the child's
        // first outcome, then skipped for ever.
        Case{"run_once_then_skip",
             R"(
  sequence:
    children:
      - run_once: {then_skip: true, child: {action: x}}
      - action: y
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess},
              {"", "", "y+", "", S::kRunning}}},
        // Parallel: a threshold counted from all the children counts a
        // skipped child as done; all skipped, the node is skipped.
        Case{"parallel_counts_skipped_children_towards_all",
             R"(
  parallel:
    success_threshold: -1
    children:
      - {skip_if: "b >= 1", action: x}
      - action: y
)",
             {{"b=1", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // With a threshold of 1 every child skipped skips the node (with
        // -1 they would all count as done: success, as in BT.CPP).
        Case{"parallel_all_skipped",
             R"(
  parallel:
    success_threshold: 1
    children:
      - {skip_if: "b >= 1", action: x}
      - {skip_if: "b >= 1", action: y}
)",
             {{"b=1", "", "", "", S::kSkipped}}},
        // A fallback passes a skipped child over too; an inverter passes
        // skipped through; an if_then_else whose condition is skipped is
        // skipped.
        Case{"fallback_inverter_and_if_then_else_pass_skipped",
             R"(
  fallback:
    children:
      - inverter: {child: {skip_if: "b >= 1", always_failure: {}}}
      - if_then_else:
          children: [{skip_if: "b >= 1", condition: {factor: a}}, {action: x}]
      - action: y
)",
             {{"b=1", "", "y+", "", S::kRunning},
              {"", "y=failure", "", "", S::kFailure},
              {"b=0", "", "", "", S::kSuccess}}}));

// BehaviorTree.CPP's own precondition and postcondition tests
// (gtest_preconditions.cpp, gtest_postconditions.cpp) with scripts over
// tree-local variables, which travel in the tree state from tick to tick.
// Their TestA.. nodes are actions here, which run until the game reports.
INSTANTIATE_TEST_SUITE_P(
    BehaviorTreeCppScripts, TreeNodeTest,
    testing::Values(
        // Preconditions.Basic: A := 1; TestA answered by success_if, TestB
        // runs, TestC failed by failure_if, TestD runs.
        Case{"preconditions_basic",
             R"(
  sequence:
    children:
      - script: "A := 1"
      - {success_if: "A == 1", action: w}
      - {success_if: "A == 2", action: x}
      - fallback:
          children:
            - {failure_if: "A == 1", action: w}
            - {failure_if: "A != 1", action: y}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess}}},
        // Preconditions.Issue533: each node's on_success makes the one
        // before it the next to run (A starts at 0 here, at 3 there).
        Case{"preconditions_issue533",
             R"(
  sequence:
    children:
      - {skip_if: "A != 1", action: x}
      - {skip_if: "A != 2", on_success: "A = 1", action: y}
      - {skip_if: "A != 0", on_success: "A = 2", action: z}
)",
             {{"", "", "z+", "", S::kRunning},
              {"", "z=success", "", "", S::kSuccess},
              {"", "", "y+", "", S::kRunning},
              {"", "y=success", "", "", S::kSuccess},
              {"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess},
              {"", "", "x+", "", S::kRunning}}},
        // Preconditions.Issue585: a node skipped by a variable the script
        // before it set is never ticked.
        Case{"preconditions_issue585",
             R"(
  sequence:
    children:
      - script: "A := 1"
      - {skip_if: "A == 1", action: x}
)",
             {{"", "", "", "", S::kSuccess}}},
        // Preconditions.Issue615_NoSkipWhenRunning_B: skip_if is not
        // checked while the node runs.
        Case{"preconditions_issue615_no_skip_when_running",
             R"(
  sequence:
    children:
      - {skip_if: "a == 0", action: x}
)",
             {{"a=0", "", "", "", S::kSkipped},
              {"a=1", "", "x+", "", S::kRunning},
              {"a=0", "", "x", "", S::kRunning}}},
        // Preconditions.WhileCallsOnHalt: `while` stops holding, the
        // running node is halted and its on_halted runs (B = 69), which
        // the next tick's condition sees.
        Case{"preconditions_while_calls_on_halt",
             R"(
  fallback:
    children:
      - {while: "a == 1", on_halted: "B = 69", action: x}
      - script_condition: "B == 69"
)",
             {{"a=1", "", "x+", "", S::kRunning},
              {"a=0", "", "", "x", S::kSuccess}}},
        // PostConditions.BasicTest: on_success after success, on_failure
        // after a failure_if answered, and after a failure.
        Case{"postconditions_basic",
             R"(
  sequence:
    children:
      - script: "A := 1; B := 1; C := 1; D := 1"
      - {on_success: "B = 42", always_success: {}}
      - force_success:
          child: {failure_if: "A != 0", on_failure: "C = 42", always_success: {}}
      - force_success: {child: {on_failure: "D = 42", always_failure: {}}}
      - script_condition: "B == 42 && C == 42 && D == 42"
)",
             {{"", "", "", "", S::kSuccess}}},
        // PostConditions.Issue539: on_failure and post after each of five
        // failed attempts.
        Case{"postconditions_issue539",
             R"(
  fallback:
    children:
      - sequence:
          children:
            - script: "X := 0; Y := 0"
            - retry:
                attempts: 5
                child: {on_failure: "X += 1", post: "Y += 1", always_failure: {}}
      - script_condition: "X == 5 && Y == 5"
)",
             {{"", "", "", "", S::kSuccess}}},
        // A running leaf's outcome reported a tick later: its on_success
        // runs then, and the count outlives the tree's restarts.
        Case{"post_runs_when_the_game_reports",
             R"(
  sequence:
    children:
      - {on_success: "n += 1", action: x}
      - script_condition: "n >= 2"
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kFailure},
              {"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kSuccess}}}));

// The script language: precedence, chained comparisons, the ternary,
// enums and factors, as BT.CPP's script_parser_test.cpp has them.
TEST(Scripts, EvaluateAsBehaviorTreeCppDoes) {
  auto set = Load(SetYaml(R"(
  script: "v1 := 1 + 2 * 3; v2 := (1 + 2) * 3; v3 := 1 < 2 < 3; v4 := 3 > 2 > 1; v5 := a > 0 ? 10 : -10; v6 := RED + BLUE; v7 := 7 / 2; v8 := !(1 == 2) && true || false; v9 := 5 & 3 | 8; v10 := -a * 2; v11 := 0x1F; v12 := 2; v12 *= 4; v12 -= 1"
)",
                          "enums: {RED: 1, BLUE: 4}\n"));
  ASSERT_NE(set, nullptr);
  const CompiledTree& tree = *set->compiled.tree();
  ASSERT_EQ(tree.variables.size(), 12u);
  std::vector<float> factors = {0.5f, 0, 0};
  std::vector<double> vars(tree.variables.size(), 0.0);
  RunScript(tree.scripts[tree.node(0).code], factors.data(), vars.data());
  EXPECT_THAT(vars,
              testing::ElementsAre(7, 9, 1, 1, 10, 5, 3.5, 1, 9, -1, 31, 7));
}

// Variables travel in the state: they survive ticks, encode compactly
// (whole numbers as varints, others as doubles) and a state from a tree
// with other variables is refused.
TEST(Scripts, VariablesTravelInTheState) {
  auto set = Load(SetYaml(R"(
  sequence:
    children:
      - script: "n += 1; half := n / 2; flag := n > 1"
      - action: x
)"));
  ASSERT_NE(set, nullptr);
  Driver d(set);
  d.Tick({"", "", "x+", "", S::kRunning});
  std::vector<NodeState> states;
  std::vector<double> vars;
  ASSERT_EQ(DecodeTreeState(set->compiled, d.state(), &states, &vars),
            TreeReset::kNone);
  EXPECT_THAT(vars, testing::ElementsAre(1, 0.5, 0));
  d.Tick({"", "x=success", "", "", S::kSuccess});
  // Nothing runs, but the variables are kept: the state is not empty.
  ASSERT_FALSE(d.state().empty());
  d.Tick({"", "", "x+", "", S::kRunning});
  ASSERT_EQ(DecodeTreeState(set->compiled, d.state(), &states, &vars),
            TreeReset::kNone);
  EXPECT_THAT(vars, testing::ElementsAre(2, 1, 1));
  // Encoded again from what was decoded: the same bytes.
  EXPECT_EQ(EncodeTreeState(set->compiled, states, vars), d.state());
  // All variables 0 and nothing running: empty.
  EXPECT_EQ(
      EncodeTreeState(set->compiled, std::vector<NodeState>(states.size()),
                      std::vector<double>(3, 0.0)),
      "");
  // The same tree assigning another variable has another shape.
  auto other = Load(SetYaml(R"(
  sequence:
    children:
      - script: "n += 1; half := n / 2; flag := n > 1; more := 1"
      - action: x
)"));
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(DecodeTreeState(other->compiled, d.state(), &states, &vars),
            TreeReset::kOtherShape);
}

// BehaviorTree.CPP's own loop tests (gtest_loop.cpp) over queues written in
// the tree. Their Record*Value actions, which succeed at once, are
// always_success leaves here whose on_success folds the value into a
// variable the last condition checks; each value takes a tick, as BT.CPP's
// loop answers RUNNING after each.
INSTANTIATE_TEST_SUITE_P(
    BehaviorTreeCppLoops, TreeNodeTest,
    testing::Values(
        // StaticIntQueue: 1..5 in order.
        Case{"loop_static_int_queue",
             R"(
  sequence:
    children:
      - loop:
          values: [1, 2, 3, 4, 5]
          variable: val
          child: {on_success: "sum = sum * 10 + val", always_success: {}}
      - script_condition: "sum == 12345"
)",
             {{"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kSuccess}}},
        // StaticDoubleQueue.
        Case{"loop_static_double_queue",
             R"(
  sequence:
    children:
      - loop:
          values: [1.5, 2.5, 3.5]
          variable: val
          child: {on_success: "sum = sum + val", always_success: {}}
      - script_condition: "sum == 7.5"
)",
             {{"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kSuccess}}},
        // BoolQueue: true;false;true, read as 1, 0, 1.
        Case{"loop_bool_queue",
             R"(
  sequence:
    children:
      - loop:
          values: [1, 0, 1]
          variable: val
          child: {on_success: "bits = bits * 2 + val", always_success: {}}
      - script_condition: "bits == 5"
)",
             {{"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kSuccess}}},
        // EmptyQueue_ReturnsSuccess, _ReturnsFailure, _ReturnsSkipped: the
        // child is never ticked.
        Case{"loop_empty_queue_returns_success",
             R"(
  loop: {values: [], child: {action: x}}
)",
             {{"", "", "", "", S::kSuccess}}},
        Case{"loop_empty_queue_returns_failure",
             R"(
  loop: {values: [], if_empty: failure, child: {action: x}}
)",
             {{"", "", "", "", S::kFailure}}},
        Case{"loop_empty_queue_returns_skipped",
             R"(
  loop: {values: [], if_empty: skipped, child: {action: x}}
)",
             {{"", "", "", "", S::kSkipped}}},
        // ChildFailure_StopsLoop: the third value's run fails; so does the
        // loop, at once.
        Case{"loop_child_failure_stops_loop",
             R"(
  loop:
    values: [1, 2, 3, 4, 5]
    variable: val
    child: {failure_if: "val == 3", always_success: {}}
)",
             {{"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kFailure}}},
        // RestartAfterCompletion: finished, it takes its values afresh.
        Case{"loop_restart_after_completion",
             R"(
  loop: {values: [1, 2], child: {always_success: {}}}
)",
             {{"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kSuccess},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},
              {"", "", "", "", S::kSuccess}}},
        // A child running across ticks keeps its value: the next is taken
        // once it has finished. The skip shows which value is current.
        Case{"loop_child_runs_across_ticks",
             R"(
  loop:
    values: [1, 2, 3]
    variable: val
    child: {skip_if: "val == 2", action: x}
)",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"", "", "", "", S::kRunning},  // 2: skipped, passed over
              {"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"", "", "", "", S::kSuccess}}},
        // Halted mid-way, it starts from its first value again.
        Case{"loop_halted_starts_over",
             R"(
  reactive_sequence:
    children:
      - condition: {factor: c}
      - loop: {values: [1, 2], child: {action: x}}
)",
             {{"c=1", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"c=0", "", "", "", S::kFailure},
              {"c=1", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"", "", "x+", "", S::kRunning},
              {"", "x=success", "", "", S::kRunning},
              {"", "", "", "", S::kSuccess}}}),
    [](const testing::TestParamInfo<Case>& param) { return param.param.name; });

// BehaviorTree.CPP's own tests of its Precondition decorator
// (gtest_preconditions.cpp, PreconditionsDecorator), in the form import-bt
// writes it: the child's own precondition !(if), answering `else`. Their
// blackboard entries set from C++ are factors here.
INSTANTIATE_TEST_SUITE_P(
    BehaviorTreeCppPreconditionDecorator, TreeNodeTest,
    testing::Values(
        // Integers: A == B ticks TestA; A == C does not hold, so TestB is
        // answered SUCCESS unticked; A != C ticks TestC.
        Case{"precondition_decorator_integers",
             R"yaml(
  sequence:
    children:
      - script: "A := 1; B := 1; C := 3"
      - {failure_if: "!(A == B)", action: x}
      - {success_if: "!(A == C)", action: y}
      - {failure_if: "!(A != C)", action: z}
)yaml",
             {{"", "", "x+", "", S::kRunning},
              {"", "x=success", "z+", "", S::kRunning},
              {"", "z=success", "", "", S::kSuccess}}},
        // ChecksConditionOnce: once the child runs, the precondition is
        // not checked again (a turns 1); the child's own `while` ends it
        // (b turns 1), skipped, and the sequence succeeds.
        Case{"precondition_decorator_checks_condition_once",
             R"yaml(
  sequence:
    children:
      - script: "n := 1"
      - {failure_if: "!(a == 0)", while: "b == 0", action: x}
)yaml",
             {{"a=0 b=0", "", "x+", "", S::kRunning},
              {"a=1", "", "x", "", S::kRunning},
              {"b=1", "", "", "x", S::kSuccess}}}),
    [](const testing::TestParamInfo<Case>& param) { return param.param.name; });

// A subtree use's preconditions join its root's, checked first as
// BehaviorTree.CPP checks a SubTree node's before its root's: neither is
// lost. (Each holding in turn: the use's a, then the root's b.)
INSTANTIATE_TEST_SUITE_P(
    SubtreeUses, TreeNodeTest,
    testing::Values(Case{"subtree_use_preconditions_join_the_roots",
                         R"yaml(
  fallback:
    children:
      - {failure_if: "a > 0.5", on_success: "n += 1", subtree: {name: guarded}}
      - {script_condition: "n == 1"}
      - action: y
)yaml",
                         {{"a=1 b=0", "", "y+", "", S::kRunning},
                          {"", "y=success", "", "", S::kSuccess},
                          {"a=0 b=1", "", "y+", "", S::kRunning},
                          {"", "y=success", "", "", S::kSuccess},
                          {"b=0", "", "x+", "", S::kRunning},
                          // the root's on_success, then the use's
                          {"", "x=success", "", "", S::kSuccess},
                          {"a=1", "", "", "", S::kSuccess}},
                         R"yaml(subtrees:
  - name: guarded
    tree: {failure_if: "b > 0.5", on_success: "n = n * 10", action: x}
)yaml"}),
    [](const testing::TestParamInfo<Case>& param) { return param.param.name; });

TEST(Loop, ErrorsNameTheField) {
  auto set = loader::LoadSetText(SetYaml(R"(
  sequence:
    children:
      - loop: {values: [1], variable: a, child: {action: x}}
      - loop: {values: [1], variable: RED, child: {action: x}}
      - loop: {values: [1], if_empty: running, child: {action: x}}
      - loop: {values: [1], variable: "9lives", child: {action: x}}
      - loop: {values: [1]}
)",
                                         "enums: {RED: 1}\n"),
                                 "l.yaml");
  ASSERT_FALSE(set.ok());
  const std::string m(set.status().message());
  EXPECT_THAT(m, testing::HasSubstr("children[0].loop.variable: \"a\" is a "
                                    "factor, which the game writes"));
  EXPECT_THAT(m, testing::HasSubstr("children[1].loop.variable: \"RED\" is "
                                    "an enum's name"));
  EXPECT_THAT(m, testing::HasSubstr("children[2].loop.if_empty: must be "
                                    "success, failure or skipped"));
  EXPECT_THAT(m, testing::HasSubstr("children[3].loop.variable: \"9lives\" "
                                    "is not a valid name"));
  EXPECT_THAT(m, testing::HasSubstr("children[4].loop.child: is required"));
  std::string many = "[0";
  for (int i = 1; i <= kMaxRepeat; ++i) absl::StrAppend(&many, ", ", i);
  auto big =
      loader::LoadSetText(SetYaml(absl::StrCat("  loop: {values: ", many,
                                               "], child: {action: x}}\n")),
                          "b.yaml");
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(),
              testing::HasSubstr("tree.loop.values: holds 1001 values; at "
                                 "most 1000"));
}

TEST(Scripts, ErrorsNameTheFieldLineAndColumn) {
  auto set = loader::LoadSetText(SetYaml(R"(
  sequence:
    children:
      - script: "A := 'text'"
      - script: "a := 1"
      - script: "A := 1;\n B := C + 1"
      - script_condition: "A := 2"
      - script: "RED := 2"
      - {on_success: "A + ", action: x}
      - script: ""
)",
                                         "enums: {RED: 1}\n"),
                                 "s.yaml");
  ASSERT_FALSE(set.ok());
  const std::string m(set.status().message());
  EXPECT_THAT(m, testing::HasSubstr("children[0].script: \"A := 'text'\" at "
                                    "1:6: strings are not supported"));
  EXPECT_THAT(m, testing::HasSubstr("children[1].script: \"a := 1\" at 1:1: "
                                    "cannot assign \"a\": it is a factor"));
  EXPECT_THAT(m, testing::HasSubstr("at 2:7: unknown name \"C\""));
  EXPECT_THAT(m, testing::HasSubstr("children[3].script_condition: \"A := 2\""
                                    " at 1:3: a condition cannot assign"));
  EXPECT_THAT(m, testing::HasSubstr("cannot assign \"RED\": it is an enum"));
  EXPECT_THAT(m, testing::HasSubstr("children[5].on_success: \"A + \" at "
                                    "1:5: expected a value"));
  EXPECT_THAT(m, testing::HasSubstr("children[6].script: is required"));
  // The limits.
  auto long_script =
      loader::LoadSetText(SetYaml(absl::StrCat("  script: \"A := 1",
                                               std::string(1100, ' '), "\"\n")),
                          "l.yaml");
  ASSERT_FALSE(long_script.ok());
  EXPECT_THAT(std::string(long_script.status().message()),
              testing::HasSubstr("a script may have at most 1024"));
  std::string many = "  script: \"";
  for (int i = 0; i <= kMaxTreeVariables; ++i) {
    absl::StrAppend(&many, "v", i, " := 1; ");
  }
  auto too_many = loader::LoadSetText(SetYaml(many + "\"\n"), "m.yaml");
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(std::string(too_many.status().message()),
              testing::HasSubstr("a tree may have at most 64"));
}

// A tree of constants and sleeps runs no action and reads no factor: its
// set declares neither, and it ticks (a flat set needs both; the engine's
// compiled_set_test).
TEST(TreeValidation, ATreeNeedsNoFactorAndNoAction) {
  auto set = loader::LoadSetText(R"(
name: wait
tree:
  sequence:
    children:
      - always_success: {}
      - sleep: {seconds: 1}
      - inverter: {child: {always_failure: {}}}
)",
                                 "wait.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  const CompiledBehaviourSet& c = (*set)->compiled;
  EXPECT_EQ(c.factor_count(), 0);
  EXPECT_TRUE(c.actions().empty());
  std::string state;
  std::vector<NodeStatus> seen;
  for (const double t : {0.0, 0.5, 1.0, 1.5}) {
    TreeTick tick;
    ASSERT_TRUE(TickTree(c, AgentInput{}, {.game_time = t, .state = state},
                         ExplainLevel::kFull, &tick)
                    .ok());
    EXPECT_TRUE(tick.run.empty());
    state = tick.state;
    seen.push_back(tick.status);
  }
  EXPECT_THAT(seen,
              testing::ElementsAre(NodeStatus::kRunning, NodeStatus::kRunning,
                                   NodeStatus::kSuccess, NodeStatus::kRunning));
}

// Preconditions are script conditions: any expression over the set's
// factors, enums and the tree's variables; the errors give the script's
// line and column.
TEST(TreeValidation, PreconditionsAreScriptConditionsOverKnownNames) {
  auto set = loader::LoadSetText(SetYaml(R"y(
  sequence:
    children:
      - {failure_if: "a == 1 || (b > 0.5 && !(a < b))", action: x}
      - {success_if: "hp < 30", action: y}
      - {failure_if: "a < high", action: z}
      - {skip_if: "a := 1", action: x}
      - {while: "a <", action: x}
)y"),
                                 "p.yaml");
  ASSERT_FALSE(set.ok());
  const std::string m(set.status().message());
  EXPECT_THAT(m, testing::Not(testing::HasSubstr("children[0]")));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[1].success_if: "
                                    "\"hp < 30\" at 1:1: unknown name "
                                    "\"hp\""));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[2].failure_if: "
                                    "\"a < high\" at 1:5: unknown name"));
  EXPECT_THAT(m, testing::HasSubstr("children[3].skip_if: \"a := 1\" at "
                                    "1:3: a condition cannot assign"));
  EXPECT_THAT(m, testing::HasSubstr("children[4].while: \"a <\" at 1:4: "
                                    "expected a value, got the end"));
}

// BT.CPP's InvalidChildCount_One and InvalidChildCount_Four (both nodes),
// refused when the set loads; and while_do_else's condition must decide in
// one tick (BT.CPP's WhileDoElse ConditionRunning is not restated: a
// running condition would leave a branch running unticked, which one
// running child per node cannot hold; docs/TREES.md).
TEST(TreeValidation, BranchingNodesTakeTwoOrThreeChildren) {
  auto set = loader::LoadSetText(SetYaml(R"(
  sequence:
    children:
      - if_then_else: {children: [{condition: {factor: a}}]}
      - while_do_else: {children: [{condition: {factor: a}}, {action: x}, {action: y}, {action: z}]}
      - while_do_else: {children: [{sequence: {children: [{condition: {factor: a}}, {action: x}]}}, {action: y}]}
      - delay: {seconds: 0, child: {action: x}}
      - if_then_else: {children: [{action: z}, {action: x}, {action: y}]}
      - sleep: {seconds: 0}
      - while_do_else: {children: [{sleep: {seconds: 1}}, {action: y}]}
      - try_catch: {children: [{action: x}]}
      - parallel_all: {max_failures: 3, children: [{action: x}, {action: y}]}
)"),
                                 "bad.yaml");
  ASSERT_FALSE(set.ok());
  const std::string m(set.status().message());
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[0].if_then_else."
                                    "children: needs 2 or 3 children"));
  EXPECT_THAT(m, testing::HasSubstr("got 1"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[1].while_do_else."
                                    "children: needs 2 or 3 children"));
  EXPECT_THAT(m, testing::HasSubstr("got 4"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[2].while_do_else."
                                    "children[0]: the condition must decide "
                                    "in one tick"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[3].delay.seconds"));
  // if_then_else's condition may run.
  EXPECT_THAT(m, testing::Not(testing::HasSubstr("children[4]")));
  // A sleep of no time is refused (BT.CPP's 0 ms is always_success), and a
  // sleep runs, so it cannot be a while_do_else's condition.
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[5].sleep.seconds: "
                                    "must be a number of seconds above 0"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[6].while_do_else."
                                    "children[0]: the condition must decide"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[7].try_catch."
                                    "children: needs at least 2 children"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[8].parallel_all."
                                    "max_failures: must come to 1..2"));
}

TEST(TreeValidation, SwitchNeedsItsFactorCasesAndOneChildMore) {
  auto set = loader::LoadSetText(SetYaml(R"(
  sequence:
    children:
      - switch: {factor: zz, cases: [1], children: [{action: x}, {action: y}]}
      - switch: {factor: a, cases: [1, 2], children: [{action: x}, {action: y}]}
      - switch: {factor: a, cases: [1, 1], children: [{action: x}, {action: y}, {action: z}]}
      - switch: {factor: a, children: [{action: x}]}
)"),
                                 "bad.yaml");
  ASSERT_FALSE(set.ok());
  const std::string m(set.status().message());
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[0].switch.factor: "
                                    "unknown factor \"zz\""));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[1].switch."
                                    "children: needs one child per case and "
                                    "one for none of them: 3, got 2"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[2].switch."
                                    "cases[1]: repeats an earlier case: 1"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[3].switch.cases: "
                                    "needs 1..16 values, got 0"));
}

TEST(TreeState, ExampleStateStaysSmall) {
  auto set = loader::LoadSetFile("examples/behaviour_sets/guard_tree.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  // In combat, attacking: the deepest running path of the example.
  const std::vector<float> factors = {1, 8, 90, 80};
  const std::vector<float> player = {8, 100};
  const std::vector<TargetInput> targets = {{player}};
  AgentInput agent{.factors = factors, .targets = targets, .seed = 1};
  TreeTick tick;
  ASSERT_TRUE(TickTree((*set)->compiled, agent, {.game_time = 1},
                       ExplainLevel::kNone, &tick)
                  .ok());
  ASSERT_EQ(tick.run.size(), 1u);
  EXPECT_FALSE(tick.state.empty());
  EXPECT_LE(tick.state.size(), 32u);
}

// A continuing tick that changes nothing hands back the state it was given
// (not re-encoded), whether that state is a copy or the previous answer's
// own buffer fed straight back; the state still decodes as the encoder
// would write it.
TEST(TreeState, ContinuingTickHandsBackTheSameState) {
  auto set = loader::LoadSetFile("examples/behaviour_sets/guard_tree.yaml");
  ASSERT_TRUE(set.ok()) << set.status();
  const CompiledBehaviourSet& compiled = (*set)->compiled;
  const std::vector<float> factors = {1, 8, 90, 80};
  const std::vector<float> player = {8, 100};
  const std::vector<TargetInput> targets = {{player}};
  AgentInput agent{.factors = factors, .targets = targets, .seed = 1};
  TreeTick first;
  ASSERT_TRUE(
      TickTree(compiled, agent, {.game_time = 1}, ExplainLevel::kNone, &first)
          .ok());
  const std::string attacking = first.state;
  ASSERT_FALSE(attacking.empty());

  TreeTick copy;
  ASSERT_TRUE(TickTree(compiled, agent, {.game_time = 2, .state = attacking},
                       ExplainLevel::kNone, &copy)
                  .ok());
  ASSERT_EQ(copy.run.size(), 1u);
  EXPECT_FALSE(copy.run[0].started);
  EXPECT_EQ(copy.state, attacking);

  // Fed back from the same TreeTick, three times.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(TickTree(compiled, agent,
                         {.game_time = 3.0 + i, .state = first.state},
                         ExplainLevel::kNone, &first)
                    .ok());
    EXPECT_EQ(first.state, attacking);
  }
  std::vector<NodeState> states;
  ASSERT_EQ(DecodeTreeState(compiled, attacking, &states), TreeReset::kNone);
  EXPECT_EQ(EncodeTreeState(compiled, states), attacking);

  // The player out of sight: the attack is halted, the state changes.
  const std::vector<float> unseen = {0, 8, 90, 80};
  AgentInput lost{.factors = unseen, .targets = targets, .seed = 1};
  ASSERT_TRUE(TickTree(compiled, lost, {.game_time = 9, .state = first.state},
                       ExplainLevel::kNone, &first)
                  .ok());
  EXPECT_EQ(first.halted.size(), 1u);
  EXPECT_NE(first.state, attacking);
}

class StateReset : public testing::Test {
 protected:
  void SetUp() override {
    set_ = Load(SetYaml(kSeq));
    ASSERT_NE(set_, nullptr);
    Driver d(set_);
    d.Tick({"", "", "x+", "", S::kRunning});
    good_ = d.state();
  }

  TreeTick TickWith(std::string state) {
    std::vector<float> f(3, 0.0f);
    AgentInput agent{.factors = f};
    TreeInput in{.state = state};
    TreeTick t;
    EXPECT_TRUE(
        TickTree(set_->compiled, agent, in, ExplainLevel::kNone, &t).ok());
    return t;
  }

  std::shared_ptr<const loader::LoadedSet> set_;
  std::string good_;
};

TEST_F(StateReset, GoodStateResumes) {
  const TreeTick t = TickWith(good_);
  EXPECT_EQ(t.reset, TreeReset::kNone);
  ASSERT_EQ(t.run.size(), 1u);
  EXPECT_FALSE(t.run[0].started);
}

TEST_F(StateReset, EachBadStateRestartsWithItsReason) {
  std::string truncated = good_.substr(0, good_.size() - 1);
  std::string version = good_;
  version[0] = 9;
  std::string corrupt = good_;
  corrupt.back() ^= 0x01;
  const struct {
    std::string bytes;
    TreeReset reason;
  } cases[] = {
      {good_.substr(0, 3), TreeReset::kMalformed},
      {truncated, TreeReset::kCorrupt},
      {version, TreeReset::kVersion},
      {corrupt, TreeReset::kCorrupt},
  };
  for (const auto& c : cases) {
    const TreeTick t = TickWith(c.bytes);
    EXPECT_EQ(TreeResetName(t.reset), std::string(TreeResetName(c.reason)));
    ASSERT_EQ(t.run.size(), 1u);
    EXPECT_TRUE(t.run[0].started) << "restarted from the root";
  }
}

TEST_F(StateReset, AnotherSetOrAnotherShapeRestartsOtherEditsResume) {
  // States made by sets other than set_ (sequence of x, y), x running.
  auto state_of = [](const std::string& yaml) {
    auto set = Load(yaml);
    EXPECT_NE(set, nullptr);
    if (set == nullptr) return std::string();
    Driver d(set);
    d.Tick({"", "", "x+", "", S::kRunning});
    return d.state();
  };
  EXPECT_EQ(TickWith(state_of(absl::StrReplaceAll(
                         SetYaml(kSeq), {{"name: t\n", "name: u\n"}})))
                .reset,
            TreeReset::kOtherSet);
  // Another revision of the same shape: a description, a consideration's
  // output range and a label changed. The running leaf continues.
  const std::string edited = absl::StrReplaceAll(
      SetYaml(R"(
  name: renamed
  sequence: {children: [{action: x}, {action: y}]}
)",
              "description: changed\n"),
      {{"{name: x, considerations: [{name: k, factor: a, output: {min: 1}}]}",
        "{name: x, considerations: [{name: k, factor: a, output: {min: "
        "0.5}}]}"}});
  const TreeTick resumed = TickWith(state_of(edited));
  EXPECT_EQ(resumed.reset, TreeReset::kNone);
  ASSERT_EQ(resumed.run.size(), 1u);
  EXPECT_FALSE(resumed.run[0].started);
  // Another shape: a child more, another kind, another action.
  for (const char* tree :
       {"\n  sequence: {children: [{action: x}, {action: y}, {action: z}]}\n",
        "\n  fallback: {children: [{action: x}, {action: y}]}\n",
        "\n  sequence: {children: [{action: x}, {action: z}]}\n"}) {
    SCOPED_TRACE(tree);
    EXPECT_EQ(TickWith(state_of(SetYaml(tree))).reset, TreeReset::kOtherShape);
  }
}

TEST(TreeStateReload, ACurveTweakKeepsARunningTreeAShapeChangeResetsIt) {
  // A guard-like tree: a condition on `a`, then x. Reloaded with another
  // threshold and curve, the running x continues; with a node more, the
  // tree restarts and says why.
  const auto tree = [](const std::string& condition, const std::string& more) {
    return SetYaml(absl::StrCat(
        "\n  reactive_sequence: {children: [{condition: ", condition,
        "}, {action: x}", more, "]}\n"));
  };
  auto before = Load(tree("{factor: a, threshold: 0.5}", ""));
  auto tweaked = Load(tree(
      "{factor: a, threshold: 0.3, curve: {polynomial: {exponent: 2}}}", ""));
  auto reshaped = Load(tree("{factor: a, threshold: 0.5}", ", {action: y}"));
  ASSERT_NE(before, nullptr);
  ASSERT_NE(tweaked, nullptr);
  ASSERT_NE(reshaped, nullptr);
  EXPECT_NE(before->revision(), tweaked->revision());
  std::vector<float> f = {0.9f, 0.0f, 0.0f};
  AgentInput agent{.factors = f};
  TreeTick first, again;
  ASSERT_TRUE(TickTree(before->compiled, agent, {.game_time = 1},
                       ExplainLevel::kNone, &first)
                  .ok());
  ASSERT_EQ(first.run.size(), 1u);
  ASSERT_TRUE(first.run[0].started);
  ASSERT_TRUE(TickTree(tweaked->compiled, agent,
                       {.game_time = 2, .state = first.state},
                       ExplainLevel::kNone, &again)
                  .ok());
  EXPECT_EQ(again.reset, TreeReset::kNone);
  ASSERT_EQ(again.run.size(), 1u);
  EXPECT_FALSE(again.run[0].started) << "x continues";
  EXPECT_TRUE(again.halted.empty());
  ASSERT_TRUE(TickTree(reshaped->compiled, agent,
                       {.game_time = 2, .state = first.state},
                       ExplainLevel::kNone, &again)
                  .ok());
  EXPECT_EQ(again.reset, TreeReset::kOtherShape);
  EXPECT_STREQ(TreeResetName(again.reset), "other_shape");
  ASSERT_EQ(again.run.size(), 1u);
  EXPECT_TRUE(again.run[0].started) << "restarted from the root";
}

TEST_F(StateReset, IndicesOutOfRangeRestart) {
  // A node id past the tree, with a valid header and checksum.
  std::vector<NodeState> states(set_->compiled.tree()->nodes.size());
  states[0].running = true;
  states[0].index = 1;  // sequence on its second child (y)...
  // ...but y (node 2) is not running and x (node 1) is: inconsistent.
  states[1].running = true;
  const std::string bytes = EncodeTreeState(set_->compiled, states);
  EXPECT_EQ(TickWith(bytes).reset, TreeReset::kOutOfRange);
  states[0].index = 7;  // no such child
  states[1].running = false;
  EXPECT_EQ(TickWith(EncodeTreeState(set_->compiled, states)).reset,
            TreeReset::kOutOfRange);
}

TEST(TreeValidation, ParallelThresholdsMustComeToOneToTheChildren) {
  auto set = loader::LoadSetText(SetYaml(R"(
  sequence:
    children:
      - parallel: {success_threshold: -3, children: [{action: x}, {action: y}]}
      - parallel: {failure_threshold: 3, children: [{action: x}, {action: y}]}
      - parallel: {success_threshold: 0, children: [{action: x}, {action: y}]}
      - parallel: {success_threshold: -2, failure_threshold: -1, children: [{action: x}, {action: y}]}
)"),
                                 "bad.yaml");
  ASSERT_FALSE(set.ok());
  const std::string m(set.status().message());
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[0].parallel."
                                    "success_threshold: must come to 1..2"));
  EXPECT_THAT(m, testing::HasSubstr("got -3 (0)"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[1].parallel."
                                    "failure_threshold: must come to 1..2"));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[2].parallel."
                                    "success_threshold"));
  // -2 of two is one, -1 all: accepted.
  EXPECT_THAT(m, testing::Not(testing::HasSubstr("children[3]")));
}

TEST(TreeValidation, ReportsEveryProblemWithItsPath) {
  auto set = loader::LoadSetText(SetYaml(R"(
  sequence:
    children:
      - action: nope
      - fallback: {children: []}
      - repeat: {times: -1, child: {action: x}}
      - timeout: {seconds: 0, child: {action: x}}
      - action: hit
      - utility: {children: [{sequence: {children: [{action: x}]}}]}
      - condition: {factor: zz, threshold: 2}
)"),
                                 "bad.yaml");
  ASSERT_FALSE(set.ok());
  const std::string m(set.status().message());
  EXPECT_THAT(m,
              testing::HasSubstr(
                  "tree.sequence.children[0].action: unknown action \"nope\""));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[1].fallback."
                                    "children: needs at least one child"));
  EXPECT_THAT(
      m, testing::HasSubstr(
             "tree.sequence.children[2].repeat.times: must be within 0..1000"));
  EXPECT_THAT(m,
              testing::HasSubstr("tree.sequence.children[3].timeout.seconds"));
  EXPECT_THAT(m,
              testing::HasSubstr(
                  "tree.sequence.children[4].action: \"hit\" is per_target"));
  EXPECT_THAT(
      m,
      testing::HasSubstr(
          "tree.sequence.children[5].utility.children[0].name: is required"));
  EXPECT_THAT(
      m, testing::HasSubstr(
             "tree.sequence.children[5].utility.children[0].considerations"));
  EXPECT_THAT(
      m,
      testing::HasSubstr(
          "tree.sequence.children[6].condition.factor: unknown factor \"zz\""));
  EXPECT_THAT(m, testing::HasSubstr("tree.sequence.children[6].condition."
                                    "threshold: must be within 0..1"));
}

// Subtrees (docs/TREES.md, "Subtrees"): each use is expanded in its place,
// its factors read through its remap; node ids are the expanded tree's
// pre-order, and the set is the same set as the tree written out.
const char kSubtrees[] = R"(
subtrees:
  - name: guarded
    tree:
      sequence:
        children:
          - condition: {factor: ready}
          - subtree: {name: leaf}
  - name: leaf
    tree: {action: x}
)";
const char kUses[] = R"(
  fallback:
    children:
      - subtree: {name: guarded, remap: {ready: a}}
      - subtree: {name: guarded, remap: {ready: b}}
      - action: y
)";

TEST(Subtrees, ExpandInPlaceWithTheirRemap) {
  auto set = Load(SetYaml(kUses, kSubtrees));
  ASSERT_NE(set, nullptr);
  const CompiledTree& tree = *set->compiled.tree();
  std::vector<std::string> kinds;
  for (const CompiledNode& n : tree.nodes) {
    kinds.push_back(n.kind == NodeKind::kCondition
                        ? absl::StrCat("condition(", n.condition.name, ")")
                        : NodeKindName(n.kind));
  }
  EXPECT_EQ(absl::StrJoin(kinds, " "),
            "fallback sequence condition(a) action sequence condition(b) "
            "action action");
  Driver d(set);
  EXPECT_EQ(d.Run(d.Tick({"a=0 b=1", "", "", "", S::kRunning})), "x+");
  EXPECT_EQ(d.Leaf("y"), 7);
  // Written out, the same set: same revision, same shape.
  auto inline_set = Load(SetYaml(R"(
  fallback:
    children:
      - sequence: {children: [{condition: {factor: a}}, {action: x}]}
      - sequence: {children: [{condition: {factor: b}}, {action: x}]}
      - action: y
)"));
  ASSERT_NE(inline_set, nullptr);
  EXPECT_EQ(set->revision(), inline_set->revision());
  EXPECT_EQ(set->definition.subtrees_size(), 0);
  EXPECT_EQ(tree.shape_tag, inline_set->compiled.tree()->shape_tag);
}

// A precondition inside a subtree reads its factor through the remap; one
// on the use stays on the expanded root, in the outer names.
TEST(Subtrees, PreconditionsAreRemappedToo) {
  auto set = Load(SetYaml(R"(
  sequence:
    children:
      - {subtree: {name: s, remap: {p: b}}, success_if: "a > 0.5"}
)",
                          R"(
subtrees:
  - name: s
    tree: {failure_if: "p >= 0.5", action: x}
)"));
  ASSERT_NE(set, nullptr);
  const CompiledTree& tree = *set->compiled.tree();
  const CompiledNode& leaf = tree.node(1);
  // Each condition's first step reads the factor the remap names.
  EXPECT_EQ(tree.scripts[leaf.failure_if].ops[0].index,
            set->compiled.FindFactor("b"));
  EXPECT_EQ(tree.scripts[leaf.success_if].ops[0].index,
            set->compiled.FindFactor("a"));
  Driver d(set);
  EXPECT_EQ(d.Tick({"a=0 b=0.7", "", "", "", S::kFailure}).status, S::kFailure);
  EXPECT_EQ(d.Tick({"a=0.9 b=0", "", "", "", S::kSuccess}).status, S::kSuccess);
}

TEST(Subtrees, ProblemsNameTheSubtreeAndTheUse) {
  auto load = [](const std::string& subtrees, const std::string& tree) {
    auto set = loader::LoadSetText(SetYaml(tree, subtrees), "s.yaml");
    EXPECT_FALSE(set.ok());
    return std::string(set.status().message());
  };
  // Unknown, with a hint and the line of the use.
  EXPECT_THAT(load(kSubtrees, "  subtree: {name: gaurded}\n"),
              testing::HasSubstr("s.yaml:26:13: tree.subtree.name: unknown "
                                 "subtree \"gaurded\" (did you mean "
                                 "\"guarded\"?)"));
  // A loop.
  EXPECT_THAT(load(R"(
subtrees:
  - {name: a, tree: {inverter: {child: {subtree: {name: b}}}}}
  - {name: b, tree: {subtree: {name: a}}}
)",
                   "  subtree: {name: a}\n"),
              testing::HasSubstr("subtree \"a\" uses itself (a -> b -> a)"));
  // A problem inside a subtree: its path there, and where it was used.
  EXPECT_THAT(
      load(kSubtrees, "  subtree: {name: guarded, remap: {ready: nope}}\n"),
      testing::HasSubstr("s.yaml:21:25: "
                         "subtrees[0].tree.sequence.children[0].condition."
                         "factor: unknown factor \"nope\""));
  EXPECT_THAT(
      load(kSubtrees, "  subtree: {name: guarded, remap: {ready: nope}}\n"),
      testing::HasSubstr("(in subtree \"guarded\" used at tree)"));
}

TEST(TreeInputCheck, GameTimeMustBeFiniteAndNotNegative) {
  auto set = Load(SetYaml(kSeq));
  std::vector<float> f(3, 0.0f);
  AgentInput agent{.factors = f};
  TreeTick t;
  for (double bad : {-1.0, std::nan(""), double{INFINITY}}) {
    TreeInput in{.game_time = bad};
    const absl::Status s =
        TickTree(set->compiled, agent, in, ExplainLevel::kNone, &t);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), testing::HasSubstr("game_time"));
  }
}

}  // namespace
}  // namespace utilityd::engine
