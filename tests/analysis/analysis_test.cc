// utilityctl analyse's findings on sets built to have known answers, and on
// random sets checked against the engine: every witness is selected when
// decided, no action called dead wins at any of thousands of sampled
// points, and coverage agrees with an independent sample.
#include "utilityd/analysis/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analysis_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/engine/decide.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::analysis {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::Analysed;
using testing::Kinds;
using testing::Load;

const v1::ActionReach& ActionOf(const v1::SetAnalysis& a,
                                const std::string& name) {
  return testing::Named(a.actions(), name,
                        [](const v1::ActionReach& x) { return x.action(); });
}

// The engine's winner for a witness scenario (fresh state).
std::string Decided(const loader::LoadedSet& set, const v1::Scenario& s) {
  const engine::CompiledBehaviourSet& c = set.compiled;
  std::vector<float> factors(c.factor_count());
  for (const auto& [name, value] : s.factors()) {
    factors[c.FindFactor(name)] = static_cast<float>(value);
  }
  std::vector<float> target(c.target_factor_count());
  std::vector<engine::TargetInput> targets;
  for (const v1::ScenarioTarget& t : s.targets()) {
    for (const auto& [name, value] : t.factors()) {
      target[c.FindTargetFactor(name)] = static_cast<float>(value);
    }
    targets.push_back({target});
  }
  engine::AgentInput in{.factors = factors, .targets = targets};
  in.current_action =
      s.current_action().empty() ? -1 : c.FindAction(s.current_action());
  engine::Decision d;
  EXPECT_TRUE(engine::Decide(c, in, engine::ExplainLevel::kNone, &d).ok());
  return d.action < 0 ? "" : c.actions()[d.action].name;
}

TEST(AnalysisTest, OutscoredEverywhereIsDeadWithACertificate) {
  auto set = loader::LoadSetFile("tests/testdata/analysis/weak.yaml");
  ASSERT_TRUE(set.ok()) << set.status().message();
  const v1::SetAnalysis a = Analysed(**set);
  const v1::ActionReach& weak = ActionOf(a, "weak");
  EXPECT_EQ(weak.reach(), v1::REACH_DEAD);
  ASSERT_GT(weak.certificate_size(), 0);
  for (const v1::CertificatePart& p : weak.certificate()) {
    EXPECT_EQ(p.reason(), "outscored");
  }
  EXPECT_THAT(weak.dominated_by(), Contains("strong"));
  EXPECT_THAT(Kinds(a, "weak"), Contains("dead"));
  EXPECT_THAT(Kinds(a, "weak"), Contains("dominated"));
  // The others are alive, each with a situation where the engine picks it.
  for (const char* name : {"strong", "other"}) {
    const v1::ActionReach& x = ActionOf(a, name);
    ASSERT_EQ(x.reach(), v1::REACH_ALIVE) << name;
    EXPECT_EQ(Decided(**set, x.witness()), name);
  }
}

// Found from outside: an action scoring 0 everywhere listed every rival in
// dominated_by, while the findings named only those of its rank or above.
// The list, the findings and the table's note now name the same rivals.
TEST(AnalysisTest, DominatedByNamesExactlyTheDominatedFindings) {
  auto set = Load(R"(
name: zero
factors: [{name: x}]
actions:
  - name: never
    rank: 1
    considerations: [{name: x, factor: x, output: {min: 0, max: 0}}]
  - name: low_a
    considerations: [{name: x, factor: x, output: {min: 0.2}}]
  - name: low_b
    considerations: [{name: x, factor: x, output: {min: 0.3}}]
  - name: same_rank
    rank: 1
    considerations: [{name: x, factor: x, output: {min: 0.1}}]
  - name: higher
    rank: 2
    considerations: [{name: x, factor: x, output: {min: 0.1, max: 0.2}}]
)");
  ASSERT_NE(set, nullptr);
  const v1::SetAnalysis a = Analysed(*set);
  const v1::ActionReach& never = ActionOf(a, "never");
  std::vector<std::string> findings;
  for (const v1::Finding& f : a.findings()) {
    if (f.kind() == "dominated" && f.subject() == "never") {
      findings.push_back(f.message().substr(
          f.message().find("above ") + 6,
          f.message().find(" anywhere") - f.message().find("above ") - 6));
    }
  }
  EXPECT_THAT(never.dominated_by(),
              ::testing::UnorderedElementsAre("same_rank", "higher"));
  EXPECT_THAT(findings,
              ::testing::UnorderedElementsAreArray(never.dominated_by().begin(),
                                                   never.dominated_by().end()));
  const std::string table = FormatAnalysis(a);
  EXPECT_THAT(table, HasSubstr("never above same_rank, higher"));
  EXPECT_EQ(never.reach(), v1::REACH_DEAD);
  EXPECT_THAT(Kinds(a, "never"), Contains("dead"));
}

TEST(AnalysisTest, DeadOnlyThroughARank) {
  auto set = Load(R"(
name: ranked
factors: [{name: x}]
actions:
  - name: best_score
    considerations: [{name: x, factor: x, output: {min: 0.9}}]
  - name: outranks
    rank: 1
    considerations: [{name: x, factor: x, output: {min: 0.1, max: 0.3}}]
)");
  const v1::SetAnalysis a = Analysed(*set);
  const v1::ActionReach& x = ActionOf(a, "best_score");
  EXPECT_EQ(x.reach(), v1::REACH_DEAD);
  ASSERT_GT(x.certificate_size(), 0);
  EXPECT_EQ(x.certificate(0).reason(), "outranked");
  EXPECT_EQ(x.certificate(0).by(), "outranks");
  // It scores above its rival everywhere: not dominated, only outranked.
  EXPECT_TRUE(x.dominated_by().empty());
  // Without the rank it would be alive.
  auto flat = Load(R"(
name: unranked
factors: [{name: x}]
actions:
  - name: best_score
    considerations: [{name: x, factor: x, output: {min: 0.9}}]
  - name: outranks
    considerations: [{name: x, factor: x, output: {min: 0.1, max: 0.3}}]
)");
  EXPECT_EQ(ActionOf(Analysed(*flat), "best_score").reach(), v1::REACH_ALIVE);
}

TEST(AnalysisTest, NeverTakesOverFromARivalWithACommitmentBonus) {
  // Fresh, eager wins above x = 0.706; but steady running scores
  // 0.6 x 1.5 = 0.9, above eager's best (0.85).
  auto set = Load(R"(
name: committed
factors: [{name: x}]
actions:
  - name: eager
    weight: 0.85
    considerations: [{name: x, factor: x}]
  - name: steady
    considerations: [{name: flat, factor: x, output: {min: 0.6, max: 0.6}}]
selection: {highest: {}, commitment_bonus: 0.5}
)");
  const v1::SetAnalysis a = Analysed(*set);
  const v1::ActionReach& eager = ActionOf(a, "eager");
  ASSERT_EQ(eager.reach(), v1::REACH_ALIVE);
  EXPECT_EQ(Decided(*set, eager.witness()), "eager");
  EXPECT_THAT(eager.never_interrupts(), Contains("steady"));
  EXPECT_THAT(Kinds(a, "eager"), Contains("never_interrupts"));
  // steady can take over from eager (eager's bonus is not enough).
  EXPECT_TRUE(ActionOf(a, "steady").never_interrupts().empty());
}

TEST(AnalysisTest, FindsAnActionAliveInASliverOfTheBox) {
  // narrow beats 0.9 only where its bell is above 0.9: |x - 0.5| < 0.00046,
  // under 0.1% of x's range.
  auto set = Load(R"(
name: sliver
factors: [{name: x}, {name: y}]
actions:
  - name: narrow
    considerations: [{name: bell, factor: x, curve: {normal: {mean: 0.5, stddev: 0.001}}}]
  - name: usual
    considerations: [{name: y, factor: y, output: {min: 0.9, max: 0.9}}]
)");
  const v1::SetAnalysis a = Analysed(*set);
  const v1::ActionReach& narrow = ActionOf(a, "narrow");
  ASSERT_EQ(narrow.reach(), v1::REACH_ALIVE);
  EXPECT_EQ(Decided(*set, narrow.witness()), "narrow");
  EXPECT_NEAR(narrow.witness().factors().at("x"), 0.5, 0.0005);
  EXPECT_LT(narrow.coverage_high(), 0.01);
}

TEST(AnalysisTest, ABookendPastTheFactorsRangeVetoesEverywhere) {
  auto set = Load(R"(
name: bookend
factors: [{name: x, min: 0, max: 10}]
actions:
  - name: never
    considerations: [{name: far, factor: x, range: {min: 20, max: 30}}]
  - name: always
    considerations: [{name: x, factor: x, output: {min: 0.5}}]
)");
  const v1::SetAnalysis a = Analysed(*set);
  EXPECT_THAT(Kinds(a, "never.far"), Contains("always_veto"));
  const v1::ActionReach& never = ActionOf(a, "never");
  EXPECT_EQ(never.reach(), v1::REACH_DEAD);
  EXPECT_EQ(never.certificate(0).reason(), "vetoed");
  for (const v1::ConsiderationRange& c : a.considerations()) {
    if (c.consideration() == "far") {
      EXPECT_EQ(c.max_contribution(), 0);
      EXPECT_EQ(c.plateau_share(), 1);
    }
  }
}

TEST(AnalysisTest, DominanceUnderEachAggregationAndCompensation) {
  for (const char* scoring :
       {"{aggregation: product, compensation: none}",
        "{aggregation: product, compensation: per_consideration}",
        "{aggregation: product, compensation: geometric_mean}",
        "{aggregation: weighted_sum}"}) {
    SCOPED_TRACE(scoring);
    // lesser is leader with a lower weight on a factor both read, and
    // crossing trades places with leader along x.
    auto set = Load(absl::StrCat(R"(
name: dominance
factors: [{name: x}, {name: y}]
scoring: )",
                                 scoring, R"(
actions:
  - name: leader
    considerations:
      - {name: x, factor: x, output: {min: 0.3}}
      - {name: y, factor: y, curve: {logistic: {steepness: 8}}, output: {min: 0.2}}
  - name: lesser
    weight: 0.7
    considerations:
      - {name: x, factor: x, output: {min: 0.3}}
      - {name: y, factor: y, curve: {logistic: {steepness: 8}}, output: {min: 0.2}}
  - name: crossing
    considerations:
      - {name: x, factor: x, range: {min: 1, max: 0}, output: {min: 0.3}}
      - {name: y, factor: y, output: {min: 0.5, max: 0.5}}
)"));
    const v1::SetAnalysis a = Analysed(*set);
    EXPECT_THAT(ActionOf(a, "lesser").dominated_by(), Contains("leader"));
    EXPECT_TRUE(ActionOf(a, "leader").dominated_by().empty());
    EXPECT_TRUE(ActionOf(a, "crossing").dominated_by().empty());
    EXPECT_EQ(ActionOf(a, "lesser").reach(), v1::REACH_DEAD);
  }
  // The minimum does not separate: said, not guessed.
  auto min = Load(R"(
name: minimum
factors: [{name: x}]
scoring: {aggregation: min}
actions:
  - name: a
    considerations: [{name: x, factor: x}]
  - name: b
    considerations: [{name: x, factor: x, output: {min: 0.5}}]
)");
  const v1::SetAnalysis a = Analysed(*min);
  ASSERT_FALSE(a.not_analysed().empty());
  EXPECT_THAT(a.not_analysed(0), HasSubstr("dominance"));
}

TEST(AnalysisTest, ScenarioMarginsAndAcceptedFindings) {
  auto set = Load(R"(
name: scenes
factors: [{name: x}]
actions:
  - name: up
    considerations: [{name: x, factor: x}]
  - name: down
    considerations: [{name: x, factor: x, range: {min: 1, max: 0}}]
scenarios:
  - {name: clear, factors: {x: 0.9}, expected_action: up}
  - {name: close call, factors: {x: 0.51}, expected_action: up}
  - {name: wrong, factors: {x: 0.2}, expected_action: up}
analysis:
  accept:
    - {kind: fragile_scenario, subject: close call, reason: on purpose}
    - {kind: plateau, subject: up.x, reason: nothing to accept}
)");
  const v1::SetAnalysis a = Analysed(*set);
  ASSERT_EQ(a.scenarios_size(), 3);
  EXPECT_FALSE(a.scenarios(0).fragile());
  EXPECT_NEAR(a.scenarios(0).margin(), 0.8, 1e-5);
  EXPECT_EQ(a.scenarios(0).nearest_factor(), "x");
  EXPECT_NEAR(a.scenarios(0).nearest_value(), 0.5, 1e-3);
  EXPECT_TRUE(a.scenarios(1).fragile());
  EXPECT_EQ(a.scenarios(2).winner(), "down");
  std::map<std::string, std::string> accepted;
  for (const v1::Finding& f : a.findings()) accepted[f.kind()] = f.accepted();
  EXPECT_EQ(accepted.at("fragile_scenario"), "on purpose");
  EXPECT_EQ(accepted.at("failing_scenario"), "");
  EXPECT_TRUE(accepted.contains("unused_accept"));
}

TEST(AnalysisTest, TheBudgetIsKeptAndUndecidedIsSaid) {
  // Whether `rare` ever wins needs a fine search of four dimensions; one
  // box is not enough to show either way.
  auto set = Load(R"(
name: budget
factors: [{name: a}, {name: b}, {name: c}, {name: d}]
actions:
  - name: rare
    considerations:
      - {name: a, factor: a, curve: {normal: {mean: 0.3, stddev: 0.05}}}
      - {name: b, factor: b, curve: {normal: {mean: 0.7, stddev: 0.05}}}
  - name: base
    considerations:
      - {name: c, factor: c, output: {min: 0.8, max: 0.8}}
)");
  AnalysisOptions tight;
  tight.max_boxes = 1;
  const v1::SetAnalysis cut = Analysed(*set, tight);
  const v1::ActionReach& rare = ActionOf(cut, "rare");
  EXPECT_EQ(rare.reach(), v1::REACH_UNDECIDED);
  EXPECT_LE(rare.boxes(), 1);
  EXPECT_EQ(ActionOf(Analysed(*set), "rare").reach(), v1::REACH_ALIVE);
}

// Random sets: three factors, four actions, curves of every kind, every
// aggregation and compensation, with or without a commitment bonus.
std::string RandomSet(std::mt19937* rng, int k) {
  auto u = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(*rng);
  };
  const char* curves[] = {"{linear: {}}",
                          "{polynomial: {exponent: 2}}",
                          "{logistic: {steepness: 12, midpoint: 0.4}}",
                          "{normal: {mean: 0.6, stddev: 0.1}}",
                          "{sine: {frequency: 1.5}}",
                          "{step: {threshold: 0.7}}",
                          "{piecewise_linear: {points: [{x: 0, y: 0.2}, {x: "
                          "0.5, y: 1}, {x: 1, y: 0}]}}",
                          "{exponential: {k: 3}}"};
  static const char* kScoring[] = {
      "{aggregation: product, compensation: per_consideration}",
      "{aggregation: product, compensation: none}",
      "{aggregation: product, compensation: on_product}",
      "{aggregation: product, compensation: geometric_mean}",
      "{aggregation: weighted_sum}",
      "{aggregation: min}"};
  std::string yaml =
      absl::StrCat("name: random", k,
                   "\nfactors: [{name: f0}, {name: f1, min: -5, max: 5}, "
                   "{name: f2, min: 0, max: 100}]\nscoring: ",
                   kScoring[k % 6], "\nselection: {commitment_bonus: ",
                   (k / 6) % 2 ? "0.3" : "0", "}\nactions:\n");
  const double ranges[3][2] = {{0, 1}, {-5, 5}, {0, 100}};
  for (int a = 0; a < 4; ++a) {
    absl::StrAppend(&yaml, "  - name: a", a,
                    "\n    weight: ", absl::StrFormat("%.2f", u(0.4, 1)),
                    "\n    rank: ", (*rng)() % 5 == 0 ? 1 : 0,
                    "\n    considerations:\n");
    const int n = 1 + (*rng)() % 3;
    for (int c = 0; c < n; ++c) {
      const int f = (*rng)() % 3;
      const double lo = ranges[f][0], hi = ranges[f][1];
      double b0 = u(lo - 0.2 * (hi - lo), hi), b1 = u(lo, hi + 0.2 * (hi - lo));
      if ((*rng)() % 2) std::swap(b0, b1);
      if (std::abs(b1 - b0) < 1e-3) b1 = b0 + 1;
      absl::StrAppend(
          &yaml, "      - {name: c", c, ", factor: f", f,
          absl::StrFormat(", range: {min: %.3f, max: %.3f}", b0, b1),
          ", curve: ", curves[(*rng)() % 8],
          absl::StrFormat(", output: {min: %.2f}, weight: %.2f",
                          (*rng)() % 2 ? u(0, 0.5) : 0,
                          (*rng)() % 3 ? 1.0 : u(0.2, 1)),
          "}\n");
    }
  }
  return yaml;
}

// Every claim of `analyse` on a flat set — dead and alive actions (with
// their witnesses), coverage, dominance and never_interrupts — against
// the engine's decisions on a dense independent sample, under every
// aggregation and compensation.
TEST(AnalysisTest, RandomSetsAgreeWithTheEngine) {
  std::mt19937 rng(27);
  int dead = 0, alive = 0, dominated = 0, never_interrupts = 0;
  for (int k = 0; k < 24; ++k) {
    const std::string yaml = RandomSet(&rng, k);
    SCOPED_TRACE(yaml);
    auto set = Load(yaml);
    ASSERT_NE(set, nullptr);
    AnalysisOptions options;
    options.coverage_samples = 8000;
    const v1::SetAnalysis a = Analysed(*set, options);
    // An independent dense sample, decided by the engine.
    const engine::CompiledBehaviourSet& c = set->compiled;
    std::vector<int64_t> wins(c.action_count(), 0);
    const int samples = 8000;
    std::mt19937 points(1000 + k);
    std::vector<float> f(3);
    const double ranges[3][2] = {{0, 1}, {-5, 5}, {0, 100}};
    // Who is claimed to score no higher than whom, and whom each action
    // never takes over from.
    std::vector<std::pair<int, int>> below;  // (a, b): a never above b
    std::vector<std::pair<int, int>> cannot_interrupt;  // (a, running)
    for (int i = 0; i < c.action_count(); ++i) {
      for (const std::string& b : a.actions(i).dominated_by()) {
        below.push_back({i, c.FindAction(b)});
      }
      for (const std::string& r : a.actions(i).never_interrupts()) {
        cannot_interrupt.push_back({i, c.FindAction(r)});
      }
    }
    dominated += static_cast<int>(below.size());
    never_interrupts += static_cast<int>(cannot_interrupt.size());
    engine::Decision d;
    for (int s = 0; s < samples; ++s) {
      for (int i = 0; i < 3; ++i) {
        f[i] = static_cast<float>(std::uniform_real_distribution<double>(
            ranges[i][0], ranges[i][1])(points));
      }
      engine::AgentInput in{.factors = f};
      ASSERT_TRUE(engine::Decide(c, in, engine::ExplainLevel::kFull, &d).ok());
      if (d.action >= 0) ++wins[d.action];
      for (const auto& [x, y] : below) {
        ASSERT_LE(d.candidates[x].score, d.candidates[y].score)
            << c.actions()[x].name << " is called dominated by "
            << c.actions()[y].name << " but scores above it";
      }
      for (const auto& [x, running] : cannot_interrupt) {
        engine::AgentInput committed{.factors = f, .current_action = running};
        engine::Decision r;
        ASSERT_TRUE(
            engine::Decide(c, committed, engine::ExplainLevel::kNone, &r).ok());
        ASSERT_NE(r.action, x)
            << c.actions()[x].name << " is said never to take over from "
            << c.actions()[running].name;
      }
    }
    for (int i = 0; i < c.action_count(); ++i) {
      const v1::ActionReach& x = a.actions(i);
      if (x.reach() == v1::REACH_ALIVE) {
        ++alive;
        EXPECT_EQ(Decided(*set, x.witness()), x.action());
      }
      if (x.reach() == v1::REACH_DEAD) {
        ++dead;
        EXPECT_EQ(wins[i], 0) << x.action() << " is called dead but wins";
      }
      // Coverage: the two samples agree within their noise.
      const double p = static_cast<double>(wins[i]) / samples;
      const double sd = std::sqrt(std::max(p * (1 - p), 1e-4) * 2.0 / samples);
      EXPECT_NEAR(x.coverage(), p, 4.5 * sd + 1e-3) << x.action();
    }
  }
  // The random sets made every kind of claim.
  EXPECT_GT(alive, 10);
  EXPECT_GT(dead, 0);
  EXPECT_GT(dominated, 0);
  EXPECT_GT(never_interrupts, 0);
  std::printf("%d alive, %d dead, %d dominated, %d never_interrupts\n", alive,
              dead, dominated, never_interrupts);
}

TEST(AnalysisTest, TheExampleSetsHaveNoFindingLeftUnexplained) {
  auto catalog = loader::LoadCatalog({"examples/behaviour_sets"});
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  for (const auto& [name, set] : catalog->sets()) {
    const v1::SetAnalysis a = Analysed(*set);
    for (const v1::Finding& f : a.findings()) {
      EXPECT_FALSE(f.accepted().empty()) << name << ": " << f.kind() << " "
                                         << f.subject() << ": " << f.message();
    }
    for (const v1::ActionReach& x : a.actions()) {
      EXPECT_EQ(x.reach(), v1::REACH_ALIVE) << name << " " << x.action();
    }
  }
}

namespace tuning {

// Three actions on two factors; two scenarios the current weights get
// wrong.
constexpr char kTrio[] = R"(
name: trio
factors: [{name: x}, {name: y}]
actions:
  - name: a
    considerations: [{name: x, factor: x, output: {min: 0.2}}]
  - name: b
    considerations: [{name: y, factor: y, output: {min: 0.2}}]
  - name: c
    considerations: [{name: xy, factor: x, range: {min: 1, max: 0}, output: {min: 0.3}}]
scenarios:
  - {name: b at high y, factors: {x: 0.7, y: 0.6}, expected_action: b}
  - {name: c at low x, factors: {x: 0.3, y: 0.5}, expected_action: c}
  - {name: a at high x, factors: {x: 0.95, y: 0.1}, expected_action: a}
)";

// Every scenario's winner through the engine, and its relative margin.
// A scenario decided by the engine with `set` (explain top: the runner-up).
engine::Decision DecideScenario(const loader::LoadedSet& set,
                                const v1::Scenario& s) {
  v1::AgentSnapshot snapshot = codec::ScenarioSnapshot(set.name(), s);
  codec::AgentScratch scratch;
  engine::AgentInput in;
  engine::Decision d;
  EXPECT_TRUE(codec::ResolveAgent(set, snapshot, &scratch, &in).ok());
  EXPECT_TRUE(
      engine::Decide(set.compiled, in, engine::ExplainLevel::kTop, &d).ok());
  return d;
}

void ExpectPass(const loader::LoadedSet& set, const v1::TuneReport& report,
                double margin) {
  v1::BehaviourSet def = set.definition;
  def.clear_revision();
  for (const v1::WeightChange& c : report.changes()) {
    for (auto& a : *def.mutable_actions()) {
      if (a.name() == c.action()) a.set_weight(c.to());
    }
  }
  // "action.consideration.weight", ".range.min|max", ".curve.KIND.FIELD".
  for (const v1::ParamChange& c : report.params()) {
    const std::vector<std::string> part = absl::StrSplit(c.path(), '.');
    ASSERT_GE(part.size(), 3u) << c.path();
    for (auto& a : *def.mutable_actions()) {
      for (auto& k : *a.mutable_considerations()) {
        if (a.name() != part[0] || k.name() != part[1]) continue;
        if (part[2] == "weight") k.set_weight(c.to());
        if (part[2] == "range" && part[3] == "min")
          k.mutable_range()->set_min(c.to());
        if (part[2] == "range" && part[3] == "max")
          k.mutable_range()->set_max(c.to());
        if (part[2] == "curve") {
          google::protobuf::Message* curve = k.mutable_curve();
          const auto* kind = curve->GetDescriptor()->FindFieldByName(part[3]);
          google::protobuf::Message* m =
              curve->GetReflection()->MutableMessage(curve, kind);
          m->GetReflection()->SetDouble(
              m, m->GetDescriptor()->FindFieldByName(part[4]), c.to());
        }
      }
    }
  }
  auto tuned = loader::LoadSetProto(def, "tuned");
  ASSERT_TRUE(tuned.ok()) << tuned.status().message();
  for (const v1::Scenario& s : def.scenarios()) {
    const engine::Decision d = DecideScenario(**tuned, s);
    ASSERT_GE(d.action, 0) << s.name();
    EXPECT_EQ((*tuned)->compiled.actions()[d.action].name, s.expected_action())
        << s.name();
    EXPECT_GE(d.score, (1 + margin) * d.runner_up_score * (1 - 1e-6))
        << s.name();
  }
}

TEST(TuneTest, FindsWeightsUnderWhichEveryScenarioPasses) {
  auto set = Load(kTrio);
  TuneOptions o;
  o.margin = 0.05;
  auto r = Tune(*set, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->feasible()) << r->conflicts(0);
  EXPECT_GT(r->changes_size(), 0);
  ExpectPass(*set, *r, 0.05);
  EXPECT_THAT(r->patch(), HasSubstr("weight:"));
}

TEST(TuneTest, TheChangeIsMinimalAgainstABruteForceSearch) {
  auto set = Load(kTrio);
  TuneOptions o;
  o.margin = 0.05;
  o.unlock = {"b", "c"};  // a keeps weight 1
  auto r = Tune(*set, o);
  ASSERT_TRUE(r.ok() && r->feasible());
  ExpectPass(*set, *r, 0.05);
  for (const v1::WeightChange& c : r->changes()) EXPECT_NE(c.action(), "a");
  // Every (log w_b, log w_c) on a grid: the smallest |.|+|.| that passes.
  double best = INFINITY;
  for (double yb = -2; yb <= 2; yb += 0.004) {
    for (double yc = -2; yc <= 2; yc += 0.004) {
      if (std::abs(yb) + std::abs(yc) >= best) continue;
      // Checked by the scoring rules directly: one consideration an action,
      // so the product is its output (docs/SCORING.md).
      auto score = [&](int a, double x, double y) {
        const double wa[3] = {1, std::exp(yb), std::exp(yc)};
        if (a == 0) return wa[0] * (0.2 + 0.8 * x);
        if (a == 1) return wa[1] * (0.2 + 0.8 * y);
        return wa[2] * (0.3 + 0.7 * (1 - x));
      };
      const double pts[3][3] = {{0.7, 0.6, 1}, {0.3, 0.5, 2}, {0.95, 0.1, 0}};
      bool ok = true;
      for (const auto& p : pts) {
        const int e = static_cast<int>(p[2]);
        for (int r2 = 0; r2 < 3 && ok; ++r2) {
          if (r2 != e)
            ok = score(e, p[0], p[1]) >= 1.05 * score(r2, p[0], p[1]);
        }
      }
      if (ok) best = std::abs(yb) + std::abs(yc);
    }
  }
  ASSERT_TRUE(std::isfinite(best));
  EXPECT_LE(r->total_change(), best + 0.01);
  EXPECT_GE(r->total_change(), best - 0.01);
}

TEST(TuneTest, ContradictingScenariosAreNamed) {
  auto set = Load(std::string(kTrio) + R"(
  - {name: b again at high y, factors: {x: 0.7, y: 0.6}, expected_action: a}
)");
  auto r = Tune(*set, {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->feasible());
  ASSERT_EQ(r->conflicts_size(), 1);
  EXPECT_THAT(r->conflicts(0), HasSubstr("b at high y"));
  EXPECT_THAT(r->conflicts(0), HasSubstr("b again at high y"));
  EXPECT_THAT(r->conflicts(0), Not(HasSubstr("c at low x")));
}

// Two scenarios with one situation and two expected actions: no change
// passes both. The local search says what is still locked, only when
// something is, and names no command-line flag (the inspector shows it too).
TEST(TuneTest, ALocalSearchThatFindsNothingSaysWhatIsStillLocked) {
  auto set = Load(std::string(kTrio) + R"(
  - {name: b again at high y, factors: {x: 0.7, y: 0.6}, expected_action: a}
)");
  ASSERT_NE(set, nullptr);
  TuneOptions all;
  all.consideration_weights = all.bookends = all.curves = true;
  auto r = Tune(*set, all);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->feasible());
  ASSERT_EQ(r->conflicts_size(), 1);
  EXPECT_THAT(r->conflicts(0), Not(HasSubstr("still locked")));
  EXPECT_THAT(r->conflicts(0), Not(HasSubstr("--")));
  EXPECT_THAT(r->conflicts(0), HasSubstr("action weights alone"));
  TuneOptions some;
  some.consideration_weights = true;
  some.unlock = {"a"};
  r = Tune(*set, some);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->feasible());
  ASSERT_EQ(r->conflicts_size(), 1);
  EXPECT_THAT(r->conflicts(0),
              HasSubstr("still locked: bookends, curves; the actions b, c"));
}

TEST(TuneTest, AVetoNoWeightCanLiftIsNamed) {
  auto set = Load(R"(
name: vetoed
factors: [{name: x}]
actions:
  - name: gated
    considerations: [{name: open, factor: x, curve: {step: {threshold: 0.5}}}]
  - name: other
    considerations: [{name: x, factor: x, output: {min: 0.1}}]
scenarios:
  - {name: closed gate, factors: {x: 0.2}, expected_action: gated}
)");
  auto r = Tune(*set, {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->feasible());
  ASSERT_EQ(r->conflicts_size(), 1);
  EXPECT_THAT(r->conflicts(0), HasSubstr("consideration open vetoes it"));
}

// E rises cheapest (one weight) to pass the scenario; the two rivals fall
// at twice the cost. The log's agent chose Q over E by a little: raising E
// alone would flip it.
constexpr char kKeep[] = R"(
name: keep
factors: [{name: x}, {name: y}]
actions:
  - name: e
    considerations: [{name: x, factor: x}]
  - name: r1
    considerations: [{name: c, factor: x, output: {min: 0.5, max: 0.5}}]
  - name: r2
    considerations: [{name: c, factor: x, output: {min: 0.49, max: 0.49}}]
  - name: q
    considerations: [{name: y, factor: y}]
scenarios:
  - {name: e at 0.45, factors: {x: 0.45, y: 0}, expected_action: e}
)";

v1::AgentSnapshot Logged(const loader::LoadedSet& set, const std::string& id,
                         double x, double y) {
  v1::Scenario s;
  (*s.mutable_factors())["x"] = x;
  (*s.mutable_factors())["y"] = y;
  v1::AgentSnapshot snapshot = codec::ScenarioSnapshot(set.name(), s);
  snapshot.set_agent_id(id);
  return snapshot;
}

TEST(TuneTest, KeptLogDecisionsHoldAndTheirCostIsPaid) {
  auto set = Load(kKeep);
  ASSERT_NE(set, nullptr);
  TuneOptions o;
  o.log = {Logged(*set, "orc-1", 0.9, 0.95), Logged(*set, "orc-2", 0.2, 0.1)};
  auto free = Tune(*set, o);
  ASSERT_TRUE(free.ok() && free->feasible());
  ExpectPass(*set, *free, 0.05);
  EXPECT_EQ(free->log_decisions(), 2);
  EXPECT_EQ(free->log_flipped(), 1);  // orc-1 now takes e
  o.keep_log = true;
  auto kept = Tune(*set, o);
  ASSERT_TRUE(kept.ok() && kept->feasible());
  ExpectPass(*set, *kept, 0.05);
  EXPECT_EQ(kept->log_decisions(), 2);
  EXPECT_EQ(kept->log_flipped(), 0);
  EXPECT_GT(kept->total_change(), free->total_change() + 0.05);
}

TEST(TuneTest, ALoggedDecisionThatContradictsAScenarioIsNamed) {
  auto set = Load(kKeep);
  ASSERT_NE(set, nullptr);
  TuneOptions o;
  // r1 won at x = 0.44; e must win at 0.45 by 5%: no ratio does both.
  o.log = {Logged(*set, "orc-1", 0.2, 0.1), Logged(*set, "orc-2", 0.44, 0)};
  o.keep_log = true;
  auto r = Tune(*set, o);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->feasible());
  ASSERT_EQ(r->conflicts_size(), 1);
  EXPECT_THAT(r->conflicts(0), HasSubstr("log entry 2 (agent orc-2: r1)"));
  EXPECT_THAT(r->conflicts(0), HasSubstr("e at 0.45"));
  EXPECT_THAT(r->conflicts(0), Not(HasSubstr("orc-1")));
}

// a's second consideration sinks it where y is low; a weight of it below 1
// lets a win at (0.9, 0.3) and still lose at (0.3, 0.9). No action weights
// do both (the ratio a : b must be above 1.94 and below 1.76).
constexpr char kSoften[] = R"(
name: soften
factors: [{name: x}, {name: y}]
actions:
  - name: a
    considerations:
      - {name: x, factor: x}
      - {name: y, factor: y}
  - name: b
    considerations: [{name: c, factor: x, output: {min: 0.5, max: 0.5}}]
scenarios:
  - {name: a at low y, factors: {x: 0.9, y: 0.3}, expected_action: a}
  - {name: b at low x, factors: {x: 0.3, y: 0.9}, expected_action: b}
)";

TEST(TuneTest, ConsiderationWeightsDoWhatActionWeightsCannot) {
  auto set = Load(kSoften);
  ASSERT_NE(set, nullptr);
  auto exact = Tune(*set, {});
  ASSERT_TRUE(exact.ok());
  EXPECT_FALSE(exact->feasible());
  EXPECT_EQ(exact->method(), "exact");
  TuneOptions o;
  o.consideration_weights = true;
  auto r = Tune(*set, o);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->feasible()) << r->conflicts(0);
  EXPECT_EQ(r->method(), "local");
  ASSERT_GT(r->params_size(), 0);
  ExpectPass(*set, *r, 0.05);
  EXPECT_THAT(r->patch(), HasSubstr("considerations:"));
}

TEST(TuneTest, TheConsiderationWeightChangeIsMinimalAgainstABruteForceGrid) {
  auto set = Load(kSoften);
  ASSERT_NE(set, nullptr);
  TuneOptions o;
  o.action_weights = false;
  o.consideration_weights = true;
  auto r = Tune(*set, o);
  ASSERT_TRUE(r.ok() && r->feasible());
  ExpectPass(*set, *r, 0.05);
  // Every (weight of a.x, weight of a.y) on a grid, decided by the engine.
  double best = INFINITY;
  for (int ix = 0; ix <= 100; ++ix) {
    for (int iy = 0; iy <= 100; ++iy) {
      const double wx = ix / 100.0, wy = iy / 100.0;
      const double change = (1 - wx) + (1 - wy);
      if (change >= best) continue;
      v1::BehaviourSet def = set->definition;
      def.clear_revision();
      def.mutable_actions(0)->mutable_considerations(0)->set_weight(wx);
      def.mutable_actions(0)->mutable_considerations(1)->set_weight(wy);
      auto s = loader::LoadSetProto(def, "grid");
      ASSERT_TRUE(s.ok());
      bool pass = true;
      for (const v1::Scenario& sc : def.scenarios()) {
        const engine::Decision d = DecideScenario(**s, sc);
        ASSERT_GE(d.action, 0) << sc.name();
        pass &=
            (*s)->compiled.actions()[d.action].name == sc.expected_action() &&
            d.score >= 1.05 * d.runner_up_score;
      }
      if (pass) best = change;
    }
  }
  ASSERT_TRUE(std::isfinite(best));
  EXPECT_LE(r->total_change(), best + 0.01);
  EXPECT_GE(r->total_change(), best - 0.02);  // the grid's spacing
}

TEST(TuneTest, ABookendMovesWhereAWeightWouldCostMore) {
  // At x = 0.55 gated gives 0.145 and other 0.595: gated's weight would
  // have to grow 4.3 times (|log| 1.46); its upper bookend comes down from
  // 1 to about 0.58 (0.42 of the range).
  auto set = Load(R"(
name: bookend
factors: [{name: x}]
actions:
  - name: gated
    considerations: [{name: open, factor: x, range: {min: 0.5, max: 1}, output: {min: 0.05}}]
  - name: other
    considerations: [{name: x, factor: x, output: {min: 0.1}}]
scenarios:
  - {name: open early, factors: {x: 0.55}, expected_action: gated}
)");
  ASSERT_NE(set, nullptr);
  TuneOptions o;
  o.bookends = true;
  auto r = Tune(*set, o);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->feasible()) << r->conflicts(0);
  ExpectPass(*set, *r, 0.05);
  bool moved = false;
  for (const v1::ParamChange& c : r->params()) {
    moved |= c.path() == "gated.open.range.max" && c.to() < 1;
  }
  EXPECT_TRUE(moved) << r->DebugString();
  // The smallest: the upper bookend alone, to 0.5826 (moving the lower
  // one down costs more than it saves).
  EXPECT_NEAR(r->total_change(), 0.4174, 0.005) << r->DebugString();
  EXPECT_THAT(r->patch(), HasSubstr("range: {"));
}

}  // namespace tuning

}  // namespace
}  // namespace utilityd::analysis
