// Packages and archetypes: composition order, overrides, gates, provenance,
// revisions that follow the content, and the load errors naming both files.
#include "utilityd/loader/packages.h"

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/engine/decide.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::loader {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using ::utilityd::testing::IsOk;
using ::utilityd::testing::StatusIs;
using ::utilityd::testing::TempDir;

// Fleeing and resting: what every creature of the game does when hurt.
constexpr char kSurvival[] = R"(package: survival
description: Flee when badly hurt; rest when safe.
factors:
  - {name: health, min: 0, max: 100, unit: hp}
  - {name: threat, min: 0, max: 1}
actions:
  - name: flee
    considerations:
      - name: hurt
        factor: health
        range: {min: 100, max: 0}
        curve: {polynomial: {exponent: 2}}
      - {name: danger, factor: threat}
  - name: rest
    weight: 0.3
    considerations:
      - {name: safe, factor: threat, range: {min: 1, max: 0}}
)";

// Archery, which builds on survival (an archer flees too).
constexpr char kArchery[] = R"(package: archery
factors:
  - {name: has_bow, kind: flag}
  - {name: threat, min: 0, max: 1}
uses:
  - package: survival
actions:
  - name: shoot
    considerations:
      - {name: danger, factor: threat}
)";

constexpr char kGoblin[] = R"(name: goblin
factors:
  - {name: health, min: 0, max: 30, unit: hp}
  - {name: rage}
uses:
  - package: archery
    when: has_bow
    actions:
      shoot: {weight: 0.9}
  - package: survival
    when: has_bow
    actions:
      flee:
        rank: 1
        considerations:
          hurt: {range: {min: 20}}
          danger: {weight: 0.5}
actions:
  - name: smash
    considerations:
      - {name: angry, factor: rage}
scenarios:
  - name: Armed and threatened, it shoots
    factors: {health: 30, rage: 0.2, has_bow: 1, threat: 0.9}
    expected_action: shoot
  - name: Without a bow only the smash is left
    factors: {health: 30, rage: 0.2, has_bow: 0, threat: 0.9}
    expected_action: smash
)";

constexpr char kVillager[] = R"(name: villager
factors:
  - {name: hunger}
actions:
  - name: eat
    considerations:
      - {name: hungry, factor: hunger}
)";

// A directory of package and set files, loaded as a catalog.
class PackagesTest : public ::testing::Test {
 protected:
  PackagesTest() : dir_("utilityd_packages") {}

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Path(const std::string& name) const {
    return (dir_.path() / name).string();
  }
  void WriteAll() {
    Write("survival.yaml", kSurvival);
    Write("archery.yaml", kArchery);
    Write("goblin.yaml", kGoblin);
    Write("villager.yaml", kVillager);
  }
  absl::StatusOr<Catalog> Load(const Catalog* previous = nullptr) {
    return LoadCatalog({dir_.path().string()}, previous);
  }

  TempDir dir_;
};

std::vector<std::string> Names(const auto& items) {
  std::vector<std::string> names;
  for (const auto& i : items) names.push_back(i.name());
  return names;
}

std::string Errors(const absl::StatusOr<Catalog>& c) {
  return c.ok() ? "" : std::string(c.status().message());
}

TEST_F(PackagesTest, ComposesThePackagesAfterTheSetsOwnPieces) {
  WriteAll();
  absl::StatusOr<Catalog> c = Load();
  ASSERT_THAT(c, IsOk());
  const auto goblin = c->Find("goblin");
  ASSERT_NE(goblin, nullptr);
  const v1::BehaviourSet& d = goblin->definition;
  // The set's own first (its health, 0..30, wins over survival's 0..100),
  // then archery's, then survival's, which archery reached first.
  EXPECT_THAT(Names(d.factors()),
              ElementsAre("health", "rage", "has_bow", "threat"));
  EXPECT_EQ(d.factors(0).max(), 30);
  EXPECT_THAT(Names(d.actions()),
              ElementsAre("smash", "shoot", "flee", "rest"));
  EXPECT_THAT(goblin->packages, ElementsAre("archery", "survival"));
  EXPECT_TRUE(d.uses().empty());
  EXPECT_THAT(c->packages().at("survival").used_by, ElementsAre("goblin"));
  EXPECT_THAT(c->packages().at("archery").used_by, ElementsAre("goblin"));
  EXPECT_EQ(c->sets().size(), 2u);
  // The packages' pieces read as the format's defaults would have them:
  // the hurt bookends default to the set's health range.
  const v1::Consideration& safe = d.actions(3).considerations(0);
  EXPECT_EQ(safe.range().min(), 1);
}

TEST_F(PackagesTest, OriginsNameThePackageFileAndLineOfEachPiece) {
  WriteAll();
  absl::StatusOr<Catalog> c = Load();
  ASSERT_THAT(c, IsOk());
  const v1::BehaviourSet& d = c->Find("goblin")->definition;
  std::map<std::string, const v1::Origin*> by_piece;
  for (const v1::Origin& o : d.origins()) by_piece[o.piece()] = &o;
  ASSERT_TRUE(by_piece.contains("actions.flee"));
  const v1::Origin& flee = *by_piece["actions.flee"];
  EXPECT_EQ(flee.package(), "survival");
  EXPECT_EQ(flee.file(), Path("survival.yaml"));
  EXPECT_EQ(flee.line(), 7);
  EXPECT_THAT(flee.overridden(),
              ElementsAre("rank", "considerations.danger.weight",
                          "considerations.hurt.range", "gate has_bow"));
  const v1::Origin& smash = *by_piece["actions.smash"];
  EXPECT_EQ(smash.package(), "");
  EXPECT_EQ(smash.file(), Path("goblin.yaml"));
  EXPECT_EQ(smash.line(), 19);
  EXPECT_EQ(by_piece["factors.has_bow"]->package(), "archery");
  EXPECT_EQ(by_piece["factors.health"]->package(), "");
  // Every piece has exactly one origin.
  EXPECT_EQ(static_cast<int>(by_piece.size()), d.origins_size());
  EXPECT_EQ(d.origins_size(), d.factors_size() + d.actions_size());
}

TEST_F(PackagesTest, OverridesAndGatesChangeOnlyTheUsesActions) {
  WriteAll();
  absl::StatusOr<Catalog> c = Load();
  ASSERT_THAT(c, IsOk());
  const v1::BehaviourSet& d = c->Find("goblin")->definition;
  const v1::Action& shoot = d.actions(1);
  const v1::Action& flee = d.actions(2);
  const v1::Action& rest = d.actions(3);
  EXPECT_EQ(shoot.weight(), 0.9);
  EXPECT_EQ(flee.rank(), 1);
  EXPECT_EQ(flee.considerations(1).weight(), 0.5);
  EXPECT_EQ(flee.considerations(0).weight(), 1);
  EXPECT_EQ(flee.considerations(0).range().min(), 20);
  EXPECT_EQ(flee.considerations(0).range().max(), 0);  // as written
  EXPECT_EQ(rest.weight(), 0.3);
  // Both uses gate by has_bow: one gate consideration each, never two.
  for (const v1::Action* a : {&shoot, &flee, &rest}) {
    EXPECT_EQ(a->considerations(a->considerations_size() - 1).name(),
              "when_has_bow")
        << a->name();
    EXPECT_EQ(
        std::count_if(
            a->considerations().begin(), a->considerations().end(),
            [](const v1::Consideration& k) { return k.factor() == "has_bow"; }),
        1);
  }
  EXPECT_EQ(d.actions(0).considerations_size(), 1);  // smash: the set's own
  // The scenarios, scored by the engine: the gate vetoes archery without a
  // bow.
  EXPECT_THAT(codec::CheckScenarios(*c->Find("goblin")), IsEmpty());
}

// A gate is not a consideration of the compensation: while its flag is set
// a gated action scores what the package's action scores ungated, to the
// bit, under every compensation of the product; while it is 0 the action
// is vetoed. (Counted in n, the per-consideration and geometric-mean
// compensations moved every gated score.)
TEST_F(PackagesTest, AGatedActionScoresAsUngatedWhileItsFlagIsSet) {
  Write("survival.yaml", kSurvival);
  for (const char* compensation :
       {"per_consideration", "geometric_mean", "on_product", "none"}) {
    SCOPED_TRACE(compensation);
    for (const char* name : {"gated", "plain"}) {
      const std::string when =
          std::string(name) == "gated" ? "    when: has_bow\n" : "";
      Write(absl::StrCat(name, ".yaml"),
            absl::StrCat("name: ", name, R"(
factors:
  - {name: has_bow, kind: flag}
uses:
  - package: survival
)",
                         when, "scoring: {compensation: ", compensation,
                         "}\nactions:\n  - name: idle\n    weight: 0.01\n"));
    }
    absl::StatusOr<Catalog> c = Load();
    ASSERT_THAT(c, IsOk());
    const engine::CompiledBehaviourSet& gated = c->Find("gated")->compiled;
    const engine::CompiledBehaviourSet& plain = c->Find("plain")->compiled;
    // flee: hurt, danger and the gate; the compensation counts two.
    const engine::CompiledAction& flee = gated.actions()[1];
    ASSERT_EQ(flee.name, "flee");
    EXPECT_EQ(flee.consideration_count, 3u);
    EXPECT_EQ(flee.compensated_count, 2u);
    int compared = 0;
    for (float health : {5.0f, 40.0f, 77.0f}) {
      for (float threat : {0.1f, 0.6f, 0.95f}) {
        for (float bow : {0.0f, 1.0f}) {
          // Both sets' factors: has_bow, health, threat.
          const float factors[] = {bow, health, threat};
          engine::AgentInput in{.factors = factors};
          engine::Decision g, p;
          ASSERT_THAT(
              engine::Decide(gated, in, engine::ExplainLevel::kFull, &g),
              IsOk());
          ASSERT_THAT(
              engine::Decide(plain, in, engine::ExplainLevel::kFull, &p),
              IsOk());
          ASSERT_EQ(g.candidates.size(), p.candidates.size());
          for (size_t i = 1; i < g.candidates.size(); ++i) {  // flee, rest
            if (bow == 1.0f) {
              EXPECT_EQ(g.candidates[i].score, p.candidates[i].score)
                  << "health " << health << " threat " << threat;
              compared += p.candidates[i].score > 0 ? 1 : 0;
            } else {
              EXPECT_EQ(g.candidates[i].score, 0.0f);
              EXPECT_EQ(g.candidates[i].veto,
                        engine::VetoReason::kConsideration);
            }
          }
        }
      }
    }
    EXPECT_GT(compared, 10);  // scores above 0 were compared
  }
}

// A gate written by hand: a step at full weight over the whole output
// range, under product or min; anything else is an error naming it.
TEST_F(PackagesTest, AGateMustBeAYesOrNoCondition) {
  Write("guard.yaml", R"(name: guard
factors:
  - {name: alarm, kind: flag}
  - {name: fatigue}
actions:
  - name: patrol
    considerations:
      - {name: fresh, factor: fatigue, range: {min: 1, max: 0}}
      - {name: on_duty, factor: alarm, gate: true, curve: {linear: {}}}
      - {name: armed, factor: alarm, gate: true, weight: 0.5, curve: {step: {}}}
      - {name: awake, factor: alarm, gate: true, output: {min: 0.2}, curve: {step: {}}}
)");
  const std::string errors = Errors(Load());
  EXPECT_THAT(errors,
              AllOf(HasSubstr("actions[0].considerations[1].curve: a gate's "
                              "curve must be a step"),
                    HasSubstr("actions[0].considerations[2].weight: a gate has "
                              "weight 1"),
                    HasSubstr("actions[0].considerations[3].output: a gate's "
                              "output range is 0..1, got 0.2..1")));
  Write("guard.yaml", R"(name: guard
factors:
  - {name: alarm, kind: flag}
scoring: {aggregation: weighted_sum}
actions:
  - name: patrol
    considerations:
      - {name: on_duty, factor: alarm, gate: true, curve: {step: {}}}
)");
  EXPECT_THAT(Errors(Load()),
              HasSubstr("actions[0].considerations[0].gate: the set "
                        "aggregates by weighted_sum"));
}

TEST_F(PackagesTest, AComposedSetIsTheSetWrittenFlat) {
  Write("survival.yaml", kSurvival);
  Write("wolf.yaml", R"(name: wolf
factors:
  - {name: health, min: 0, max: 100, unit: hp}
uses:
  - package: survival
    actions:
      rest: {weight: 0.5}
actions:
  - name: howl
)");
  absl::StatusOr<Catalog> c = Load();
  ASSERT_THAT(c, IsOk());
  absl::StatusOr<std::shared_ptr<const LoadedSet>> flat =
      LoadSetText(R"(name: wolf
factors:
  - {name: health, min: 0, max: 100, unit: hp}
  - {name: threat, min: 0, max: 1}
actions:
  - name: howl
  - name: flee
    considerations:
      - name: hurt
        factor: health
        range: {min: 100, max: 0}
        curve: {polynomial: {exponent: 2}}
      - {name: danger, factor: threat}
  - name: rest
    weight: 0.5
    considerations:
      - {name: safe, factor: threat, range: {min: 1, max: 0}}
)",
                  "flat.yaml");
  ASSERT_THAT(flat, IsOk());
  // Same content, same revision: the engine, replay and clients see one set.
  EXPECT_EQ(c->Find("wolf")->revision(), (*flat)->revision());
}

TEST_F(PackagesTest, APackageEditChangesTheRevisionsOfItsUsersOnly) {
  WriteAll();
  absl::StatusOr<Catalog> first = Load();
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(first->compiled(), UnorderedElementsAre("goblin", "villager"));
  // A comment changes no content: nothing recompiles.
  Write("survival.yaml",
        absl::StrCat("# shared by every creature\n", kSurvival));
  absl::StatusOr<Catalog> same = Load(&*first);
  ASSERT_THAT(same, IsOk());
  EXPECT_THAT(same->compiled(), IsEmpty());
  EXPECT_EQ(same->Find("goblin"), first->Find("goblin"));
  // One line of the package: the goblin, which composes it, recompiles with
  // a new revision; the villager serves on as it was.
  Write("survival.yaml",
        absl::StrReplaceAll(kSurvival, {{"weight: 0.3", "weight: 0.35"}}));
  absl::StatusOr<Catalog> next = Load(&*same);
  ASSERT_THAT(next, IsOk());
  EXPECT_THAT(next->compiled(), ElementsAre("goblin"));
  EXPECT_NE(next->Find("goblin")->revision(),
            first->Find("goblin")->revision());
  EXPECT_EQ(next->Find("villager"), first->Find("villager"));
  EXPECT_EQ(next->Find("goblin")->definition.actions(3).weight(), 0.35);
}

TEST_F(PackagesTest, LoadingOneFileFindsThePackagesBesideIt) {
  WriteAll();
  absl::StatusOr<std::shared_ptr<const LoadedSet>> goblin =
      LoadSetFile(Path("goblin.yaml"));
  ASSERT_THAT(goblin, IsOk());
  EXPECT_EQ((*goblin)->definition.actions_size(), 4);
  EXPECT_THAT(LoadSetFile(Path("survival.yaml")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a package, not a set")));
}

// The load errors of a catalog, all of them, one per line.
TEST_F(PackagesTest, AnUnknownPackageSuggestsTheNearestName) {
  WriteAll();
  Write("goblin.yaml", absl::StrReplaceAll(
                           kGoblin, {{"package: archery", "package: archey"}}));
  EXPECT_THAT(Errors(Load()),
              AllOf(HasSubstr(absl::StrCat(Path("goblin.yaml"),
                                           ":6:5: uses[0].package: unknown "
                                           "package \"archey\"")),
                    HasSubstr("did you mean \"archery\"")));
}

TEST_F(PackagesTest, OverridesOfWhatAPackageLacksNameBothFiles) {
  WriteAll();
  Write("goblin.yaml",
        absl::StrReplaceAll(kGoblin, {{"shoot: {weight", "shot: {weight"},
                                      {"hurt: {range", "hrt: {range"}}));
  const std::string errors = Errors(Load());
  EXPECT_THAT(errors,
              HasSubstr(absl::StrCat(
                  Path("goblin.yaml"),
                  ":9:13: uses[0].actions[\"shot\"]: package \"archery\" (",
                  Path("archery.yaml"),
                  ") has no action \"shot\" (did you mean \"shoot\"?)")));
  EXPECT_THAT(errors, HasSubstr(absl::StrCat(
                          "uses[1].actions[\"flee\"].considerations[\"hrt\"]: "
                          "action \"flee\" of package \"survival\" (",
                          Path("survival.yaml"), ") has no consideration")));
}

TEST_F(PackagesTest, PackagesThatUseEachOtherAreACycle) {
  Write("a.yaml", "package: a\nuses: [{package: b}]\n");
  Write("b.yaml", "package: b\nuses:\n  - package: a\n");
  Write("s.yaml",
        "name: s\nfactors: [{name: x}]\nactions: [{name: idle}]\n"
        "uses: [{package: a}]\n");
  EXPECT_THAT(Errors(Load()),
              HasSubstr(absl::StrCat(Path("b.yaml"),
                                     ":3:5: uses[0].package: packages use "
                                     "each other in a cycle: a -> b -> a")));
}

TEST_F(PackagesTest, TwoPackagesDeclaringAFactorDifferentlyNameBothLines) {
  Write("p.yaml", "package: p\nfactors:\n  - {name: health, max: 100}\n");
  Write("q.yaml",
        "package: q\nfactors:\n  - {name: mana}\n"
        "  - {name: health, max: 50}\n");
  Write("s.yaml",
        "name: s\nactions: [{name: idle}]\n"
        "uses: [{package: p}, {package: q}]\n");
  EXPECT_THAT(Errors(Load()),
              HasSubstr(absl::StrCat(
                  Path("q.yaml"),
                  ":4:6: factors[1].name: \"health\" is declared "
                  "differently at ",
                  Path("p.yaml"), ":3; declare it in \"s\" to choose")));
  // The set's own declaration settles it.
  Write("s.yaml",
        "name: s\nfactors: [{name: health, max: 80}]\n"
        "actions: [{name: idle}]\n"
        "uses: [{package: p}, {package: q}]\n");
  absl::StatusOr<Catalog> c = Load();
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->Find("s")->definition.factors(0).max(), 80);
}

TEST_F(PackagesTest, TwoActionsOfOneNameNameBothFiles) {
  WriteAll();
  Write("goblin.yaml",
        absl::StrReplaceAll(kGoblin, {{"name: smash", "name: rest"}}));
  EXPECT_THAT(Errors(Load()),
              HasSubstr(absl::StrCat(Path("survival.yaml"),
                                     ":14:5: actions[1].name: \"rest\" is "
                                     "also defined at ",
                                     Path("goblin.yaml"), ":19")));
}

TEST_F(PackagesTest, AGateReadsAFlagUnderAVetoingAggregation) {
  WriteAll();
  Write("goblin.yaml",
        absl::StrReplaceAll(kGoblin, {{"when: has_bow", "when: rage"}}));
  EXPECT_THAT(Errors(Load()),
              HasSubstr(absl::StrCat(Path("goblin.yaml"),
                                     ":7:5: uses[0].when: \"rage\" is not a "
                                     "flag")));
  Write("goblin.yaml",
        absl::StrCat(kGoblin, "scoring: {aggregation: weighted_sum}\n"));
  EXPECT_THAT(Errors(Load()), HasSubstr("aggregates by weighted_sum"));
}

// Survival is reached twice: under archery's gate and on its own. Composed
// once, it keeps only the gates every use shares: none.
TEST_F(PackagesTest, APackageReachedTwiceKeepsTheGatesEveryUseShares) {
  WriteAll();
  Write(
      "goblin.yaml",
      absl::StrReplaceAll(kGoblin, {{"  - package: survival\n    when: has_bow",
                                     "  - package: survival"}}));
  absl::StatusOr<Catalog> c = Load();
  ASSERT_THAT(c, IsOk());
  const v1::BehaviourSet& d = c->Find("goblin")->definition;
  ASSERT_THAT(Names(d.actions()),
              ElementsAre("smash", "shoot", "flee", "rest"));
  EXPECT_EQ(d.actions(1).considerations(1).name(), "when_has_bow");
  for (int i : {2, 3}) {
    for (const v1::Consideration& k : d.actions(i).considerations()) {
      EXPECT_NE(k.factor(), "has_bow") << d.actions(i).name();
    }
  }
}

TEST_F(PackagesTest, AProblemInAPackagesPieceIsReportedWhereItIsWritten) {
  WriteAll();
  Write("survival.yaml",
        absl::StrReplaceAll(kSurvival, {{"{name: danger, factor: threat}",
                                         "{name: danger, factor: thret}"}}));
  EXPECT_THAT(Errors(Load()),
              HasSubstr(absl::StrCat(
                  Path("survival.yaml"),
                  ":13:24: actions[0].considerations[1].factor: unknown factor "
                  "\"thret\" (did you mean \"threat\"?) (package \"survival\", "
                  "composed into \"goblin\")")));
}

TEST_F(PackagesTest, NamesAreUniqueAcrossPackagesAndSets) {
  WriteAll();
  Write("copy.yaml", kSurvival);
  Write("rest.yaml",
        "name: survival\nfactors: [{name: x}]\n"
        "actions: [{name: idle}]\n");
  const std::string errors = Errors(Load());
  EXPECT_THAT(errors,
              HasSubstr("package: \"survival\" is already defined at "));
  EXPECT_THAT(errors, HasSubstr(absl::StrCat(
                          Path("rest.yaml"),
                          ": name: set \"survival\" has the name of the "
                          "package at ")));
}

// A reload takes the unchanged villager as it was, and still refuses a new
// package that has its name.
TEST_F(PackagesTest, AReloadChecksUnchangedSetsAgainstNewPackages) {
  WriteAll();
  absl::StatusOr<Catalog> first = Load();
  ASSERT_THAT(first, IsOk());
  Write("villager_pkg.yaml", "package: villager\n");
  EXPECT_THAT(Errors(Load(&*first)),
              HasSubstr(absl::StrCat(Path("villager.yaml"),
                                     ": name: set \"villager\" has the name "
                                     "of the package at ")));
}

TEST_F(PackagesTest, ASetUsingNoPackageKeepsItsRevision) {
  absl::StatusOr<std::shared_ptr<const LoadedSet>> alone =
      LoadSetText(kVillager, "villager.yaml");
  WriteAll();
  absl::StatusOr<Catalog> c = Load();
  ASSERT_THAT(alone, IsOk());
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(c->Find("villager")->revision(), (*alone)->revision());
  EXPECT_TRUE(c->Find("villager")->definition.origins().empty());
  EXPECT_THAT(c->Find("villager")->packages, IsEmpty());
}

}  // namespace
}  // namespace utilityd::loader
