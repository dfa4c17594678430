#include "utilityd/loader/set_loader.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/proto_writer.h"

namespace utilityd::loader {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;
using ::utilityd::testing::StatusIs;

constexpr char kGuard[] = R"(name: guard
factors:
  - {name: health, max: 100}
  - {name: distance, min: 0, max: 30}
actions:
  - name: heal
    considerations:
      - {name: hurt, factor: health, range: {min: 100, max: 0}}
  - name: strike
    considerations:
      - name: near
        factor: distance
        curve: {logistic: {}}
      - name: armed
        factor: health
        curve: {linear: {intercept: 0.2}}
        output: {min: 0.1}
scenarios:
  - name: Hurt
    factors: {health: 10, distance: 20}
    expected_action: heal
)";

TEST(ApplyDefaultsTest, UnsetMeansTheDocumentedDefaultNeverZero) {
  absl::StatusOr<std::shared_ptr<const LoadedSet>> set =
      LoadSetText(kGuard, "guard.yaml");
  ASSERT_THAT(set, IsOk());
  const v1::BehaviourSet& d = (*set)->definition;
  EXPECT_DOUBLE_EQ(d.factors(0).min(), 0);
  EXPECT_DOUBLE_EQ(d.actions(0).weight(), 1);
  const v1::Consideration& hurt = d.actions(0).considerations(0);
  EXPECT_DOUBLE_EQ(hurt.weight(), 1);
  EXPECT_DOUBLE_EQ(hurt.output().min(), 0);
  EXPECT_DOUBLE_EQ(hurt.output().max(), 1);
  ASSERT_TRUE(hurt.curve().has_linear());
  EXPECT_DOUBLE_EQ(hurt.curve().linear().slope(), 1);
  const v1::Consideration& near = d.actions(1).considerations(0);
  EXPECT_DOUBLE_EQ(near.range().min(), 0);  // from the factor
  EXPECT_DOUBLE_EQ(near.range().max(), 30);
  EXPECT_DOUBLE_EQ(near.curve().logistic().steepness(), 10);
  EXPECT_DOUBLE_EQ(near.curve().logistic().midpoint(), 0.5);
  const v1::Consideration& armed = d.actions(1).considerations(1);
  EXPECT_DOUBLE_EQ(armed.curve().linear().slope(), 1);  // only intercept given
  EXPECT_DOUBLE_EQ(armed.curve().linear().intercept(), 0.2);
  EXPECT_DOUBLE_EQ(armed.output().max(), 1);  // only min given
  EXPECT_EQ(d.scoring().aggregation(), v1::AGGREGATION_PRODUCT);
  EXPECT_EQ(d.scoring().compensation(), v1::COMPENSATION_PER_CONSIDERATION);
  EXPECT_TRUE(d.selection().has_highest());
}

// The proto and the engine's registry of curve kinds agree both ways: every
// kind message of utilityd.v1.Curve is a registered kind, and every
// registered kind's parameters are fields of its message, typed to match.
TEST(CurveKindsTest, ProtoAndEngineRegistryAgree) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::OneofDescriptor* oneof =
      v1::Curve::descriptor()->FindOneofByName("kind");
  ASSERT_NE(oneof, nullptr);
  ASSERT_EQ(static_cast<size_t>(oneof->field_count()),
            engine::AllCurveKinds().size());
  for (int i = 0; i < oneof->field_count(); ++i) {
    const FieldDescriptor* kind = oneof->field(i);
    const std::optional<engine::CurveKind> k =
        engine::FindCurveKind(kind->name());
    ASSERT_TRUE(k.has_value()) << kind->name() << " is not registered";
    const google::protobuf::Descriptor* message = kind->message_type();
    EXPECT_EQ(static_cast<size_t>(message->field_count()),
              engine::CurveParams(*k).size())
        << kind->name();
    for (const engine::CurveParam& p : engine::CurveParams(*k)) {
      const FieldDescriptor* f = message->FindFieldByName(p.name);
      ASSERT_NE(f, nullptr) << kind->name() << "." << p.name;
      if (p.number != nullptr) {
        EXPECT_EQ(f->cpp_type(), FieldDescriptor::CPPTYPE_DOUBLE);
        EXPECT_TRUE(f->has_presence()) << "unset must mean the default";
      }
      if (p.flag != nullptr) {
        EXPECT_EQ(f->cpp_type(), FieldDescriptor::CPPTYPE_BOOL);
      }
      if (p.points != nullptr) {
        EXPECT_TRUE(f->is_repeated());
      }
    }
  }
}

// Each kind's unset parameters read as the engine's defaults.
TEST(CurveKindsTest, UnsetParametersAreTheEnginesDefaults) {
  const engine::CurveDefinition defaults;
  absl::StatusOr<std::shared_ptr<const LoadedSet>> guard =
      LoadSetText(kGuard, "guard.yaml");
  ASSERT_THAT(guard, IsOk());
  for (engine::CurveKind k : engine::AllCurveKinds()) {
    v1::BehaviourSet set = (*guard)->definition;
    v1::Curve* curve =
        set.mutable_actions(0)->mutable_considerations(0)->mutable_curve();
    curve->Clear();
    const google::protobuf::FieldDescriptor* field =
        v1::Curve::descriptor()->FindFieldByName(engine::CurveKindName(k));
    curve->GetReflection()->MutableMessage(curve, field);
    ApplyDefaults(&set);
    const engine::SetDefinition def = ToDefinition(set);
    const engine::CurveDefinition& d = def.actions[0].considerations[0].curve;
    EXPECT_EQ(d.kind, k);
    for (const engine::CurveParam& p : engine::CurveParams(k)) {
      if (p.number != nullptr) {
        EXPECT_EQ(d.*p.number, defaults.*p.number)
            << engine::CurveKindName(k) << "." << p.name;
      }
    }
  }
}

// The proto and the engine's registry of node kinds agree both ways: every
// field of utilityd.v1.TreeNode's `kind` oneof is a registered kind whose
// arity is its message's (`child`, `children` or neither), and every numeric
// parameter is a field of its message, typed to match.
TEST(NodeKindsTest, ProtoAndEngineRegistryAgree) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::OneofDescriptor* oneof =
      v1::TreeNode::descriptor()->FindOneofByName("kind");
  ASSERT_NE(oneof, nullptr);
  // (`subtree` is a use of a named tree, expanded by the loader: never a
  // node of the engine.)
  ASSERT_EQ(static_cast<size_t>(oneof->field_count()),
            engine::AllNodeKinds().size() + 1);
  for (int i = 0; i < oneof->field_count(); ++i) {
    const FieldDescriptor* kind = oneof->field(i);
    if (kind->name() == "subtree") continue;
    const std::optional<engine::NodeKind> k =
        engine::FindNodeKind(kind->name());
    ASSERT_TRUE(k.has_value()) << kind->name() << " is not registered";
    EXPECT_STREQ(engine::NodeKindName(*k), kind->name().c_str());
    const google::protobuf::Descriptor* message = kind->message_type();
    engine::NodeArity arity = engine::NodeArity::kLeaf;
    if (message != nullptr && message->FindFieldByName("child")) {
      arity = engine::NodeArity::kChild;
    }
    if (message != nullptr && message->FindFieldByName("children")) {
      arity = engine::NodeArity::kChildren;
    }
    EXPECT_EQ(engine::NodeKindArity(*k), arity) << kind->name();
    for (const engine::NodeParam& p : engine::NodeParams(*k)) {
      ASSERT_NE(message, nullptr) << kind->name() << " has no message";
      const FieldDescriptor* f = message->FindFieldByName(p.name);
      ASSERT_NE(f, nullptr) << kind->name() << "." << p.name;
      EXPECT_EQ(f->cpp_type(), p.integer != nullptr
                                   ? FieldDescriptor::CPPTYPE_INT32
                                   : FieldDescriptor::CPPTYPE_DOUBLE)
          << kind->name() << "." << p.name;
    }
  }
}

// Each kind's unset numeric parameters read as the engine's defaults, and
// set ones as given.
TEST(NodeKindsTest, ParametersReadAsGivenOrTheirDefaults) {
  const engine::TreeNodeDefinition defaults;
  for (engine::NodeKind k : engine::AllNodeKinds()) {
    for (bool given : {false, true}) {
      v1::TreeNode node;
      const google::protobuf::FieldDescriptor* field =
          v1::TreeNode::descriptor()->FindFieldByName(engine::NodeKindName(k));
      if (field->message_type() == nullptr) continue;  // action: a name
      google::protobuf::Message* kind =
          node.GetReflection()->MutableMessage(&node, field);
      const google::protobuf::Reflection* r = kind->GetReflection();
      for (const engine::NodeParam& p : engine::NodeParams(k)) {
        const auto* f = kind->GetDescriptor()->FindFieldByName(p.name);
        if (given && p.integer) r->SetInt32(kind, f, 7);
        if (given && p.number) r->SetDouble(kind, f, 2.5);
      }
      v1::BehaviourSet set;
      *set.mutable_tree() = node;
      ApplyDefaults(&set);
      const engine::SetDefinition def = ToDefinition(set);
      ASSERT_TRUE(def.tree.has_value());
      EXPECT_EQ(def.tree->kind, k);
      for (const engine::NodeParam& p : engine::NodeParams(k)) {
        if (p.integer) {
          EXPECT_EQ((*def.tree).*p.integer, given ? 7 : defaults.*p.integer)
              << engine::NodeKindName(k) << "." << p.name;
        }
        if (p.number) {
          EXPECT_EQ((*def.tree).*p.number, given ? 2.5 : defaults.*p.number)
              << engine::NodeKindName(k) << "." << p.name;
        }
      }
    }
  }
}

TEST(ApplyDefaultsTest, IsIdempotent) {
  absl::StatusOr<std::shared_ptr<const LoadedSet>> set =
      LoadSetText(kGuard, "g");
  ASSERT_THAT(set, IsOk());
  v1::BehaviourSet twice = (*set)->definition;
  ApplyDefaults(&twice);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      (*set)->definition, twice));
  EXPECT_EQ(ComputeRevision(twice), (*set)->revision());
}

TEST(RevisionTest, IsStableAndTracksMeaningNotSpelling) {
  auto revision = [](const std::string& text) {
    absl::StatusOr<std::shared_ptr<const LoadedSet>> set =
        LoadSetText(text, "r.yaml");
    EXPECT_THAT(set, IsOk());
    return set.ok() ? (*set)->revision() : "";
  };
  const std::string base = revision(kGuard);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(revision(kGuard), base);
  // Writing a default out does not change the set.
  std::string explicit_weight = kGuard;
  explicit_weight.replace(explicit_weight.find("  - name: heal\n"), 15,
                          "  - name: heal\n    weight: 1\n");
  EXPECT_EQ(revision(explicit_weight), base);
  // A real change does.
  std::string heavier = kGuard;
  heavier.replace(heavier.find("  - name: heal\n"), 15,
                  "  - name: heal\n    weight: 2\n");
  EXPECT_NE(revision(heavier), base);
}

TEST(LoadSetTextTest, ErrorsNameFileLineFieldAndHint) {
  std::string text = kGuard;
  text.replace(text.find("factor: distance"), 16, "factor: distanse");
  EXPECT_THAT(
      LoadSetText(text, "guard.yaml"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("guard.yaml:12:9: actions[1].considerations[0]"
                         ".factor: unknown factor \"distanse\" (did you "
                         "mean \"distance\"?)")));
}

// Resources: defaults (capacity 1, amount 1), and every mistake named with
// its line and field.
TEST(LoadSetTextTest, ResourcesDefaultAndEveryMistakeIsNamed) {
  constexpr absl::string_view kTokens = R"(name: tokens
factors: [{name: health}]
target_factors: [{name: distance}]
resources:
  - {name: token, per_target: true}
  - {name: banner}
actions:
  - name: strike
    per_target: true
    uses: [{resource: token}]
    considerations: [{name: near, factor: distance, per_target: true}]
  - name: rally
    uses: [{resource: banner, amount: 2}]
    considerations: [{name: hale, factor: health}]
)";
  auto set = LoadSetText(kTokens, "t.yaml");
  ASSERT_THAT(set, IsOk());
  const v1::BehaviourSet& d = (*set)->definition;
  EXPECT_EQ(d.resources(0).capacity(), 1);
  EXPECT_FALSE(d.resources(0).has_preemption_margin());
  EXPECT_EQ(d.actions(0).uses(0).amount(), 1);
  const auto& compiled = (*set)->compiled;
  ASSERT_EQ(compiled.resources().size(), 2u);
  EXPECT_TRUE(compiled.resources()[0].per_target);
  EXPECT_TRUE(std::isinf(compiled.resources()[0].preemption_margin));
  ASSERT_EQ(compiled.uses(1).size(), 1u);
  EXPECT_EQ(compiled.uses(1)[0].resource, 1);
  EXPECT_EQ(compiled.uses(1)[0].amount, 2);

  std::string bad(kTokens);
  bad.replace(bad.find("{resource: token}"), 17, "{resource: tokn}");
  bad.replace(bad.find("{resource: banner, amount: 2}"), 29,
              "{resource: token, amount: 0}");
  bad.replace(bad.find("{name: banner}"), 14,
              "{name: banner, capacity: -1, preemption_margin: -0.5}");
  const auto status = LoadSetText(bad, "t.yaml").status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("t.yaml:10:13: actions[0].uses[0]"
                                         ".resource: unknown resource \"tokn\" "
                                         "(did you mean \"token\"?)")));
  EXPECT_THAT(status.message(),
              HasSubstr("actions[1].uses[0].amount: must be >= 1, got 0"));
  EXPECT_THAT(status.message(),
              HasSubstr("actions[1].uses[0].resource: \"token\" is "
                        "per_target, so it is taken from a target's pool: "
                        "the action must be per_target"));
  EXPECT_THAT(status.message(),
              HasSubstr("resources[1].capacity: must be >= 0, got -1"));
  EXPECT_THAT(status.message(),
              HasSubstr("resources[1].preemption_margin: must be >= 0"));
}

TEST(LoadSetTextTest, ValidatesScenarios) {
  const std::string text = std::string(kGuard) + R"(  - name: Hurt
    factors: {health: 10, distanc: 3}
    current_action: haal
    personality: brave
    seconds_since_action: {heal: -1}
)";
  EXPECT_THAT(
      LoadSetText(text, "s.yaml"),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("scenarios[1].name: duplicate scenario \"Hurt\""),
                HasSubstr("scenarios[1].factors[\"distanc\"]: unknown "
                          "factor \"distanc\" (did you mean \"distance\"?)"),
                HasSubstr("scenarios[1].factors: missing a value for "
                          "distance"),
                HasSubstr("scenarios[1].current_action: unknown action "
                          "\"haal\" (did you mean \"heal\"?)"),
                HasSubstr("scenarios[1].personality: unknown personality"),
                HasSubstr("seconds_since_action[\"heal\"]: must be >= 0"))));
}

TEST(LoadSetTextTest, FactorKindsHoldForRangesAndScenarioValues) {
  constexpr char kKinds[] = R"(name: kinds
factors:
  - {name: seen, kind: flag}
  - {name: goblins, kind: count, min: 0, max: 10}
  - {name: lit, kind: flag, max: 2}
  - {name: arrows, kind: count, min: 0, max: 2.5}
actions:
  - name: act
    considerations: [{name: c, factor: goblins}]
scenarios:
  - name: Odd
    factors: {seen: 0.5, goblins: 2.5, lit: 1, arrows: 1}
)";
  EXPECT_THAT(
      LoadSetText(kKinds, "k.yaml"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("k.yaml:5:5: factors[2]: a flag's range is "
                               "0..1, got 0..2"),
                     HasSubstr("factors[3]: bounds: a count is a whole "
                               "number, got 2.5"),
                     HasSubstr("scenarios[0].factors[\"seen\"]: a flag is 0 "
                               "or 1, got 0.5"),
                     HasSubstr("scenarios[0].factors[\"goblins\"]: a count "
                               "is a whole number, got 2.5"))));
  // Right, they load, and the kind is kept for tools.
  std::string right = kKinds;
  right = absl::StrReplaceAll(
      right, {{"max: 2}", "max: 1}"},
              {"max: 2.5}", "max: 3}"},
              {"{seen: 0.5, goblins: 2.5,", "{seen: 1, goblins: 2,"}});
  absl::StatusOr<std::shared_ptr<const LoadedSet>> set =
      LoadSetText(right, "k.yaml");
  ASSERT_THAT(set, IsOk());
  EXPECT_EQ((*set)->definition.factors(0).kind(), v1::FACTOR_KIND_FLAG);
  EXPECT_EQ((*set)->definition.factors(1).kind(), v1::FACTOR_KIND_COUNT);
}

TEST(LoadSetTextTest, ParseErrorsStopBeforeValidation) {
  EXPECT_THAT(LoadSetText("name: [", "x.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("x.yaml:"), HasSubstr("syntax error"))));
}

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("utilityd_catalog_" +
         std::string(
             ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }

  fs::path dir_;
};

TEST_F(CatalogTest, LoadsYamlAndJsonAndSkipsOtherFiles) {
  Write("guard.yaml", kGuard);
  Write("tiny.json",
        R"({"name": "tiny", "factors": [{"name": "f"}],
            "actions": [{"name": "a", "considerations": [{"name": "c",
            "factor": "f", "curve": {"step": {"threshold": 0.2}}}]}]})");
  Write("README.md", "not a set");
  Write(".hidden.yaml", "garbage: [");
  absl::StatusOr<Catalog> catalog = LoadCatalog({dir_.string()});
  ASSERT_THAT(catalog, IsOk());
  EXPECT_EQ(catalog->sets().size(), 2u);
  ASSERT_NE(catalog->Find("tiny"), nullptr);
  EXPECT_EQ(catalog->Find("missing"), nullptr);
}

TEST_F(CatalogTest, ReportsEveryBadFileAndDuplicateNames) {
  Write("a.yaml", kGuard);
  Write("b.yaml", kGuard);
  Write("c.yaml", "name: c\nfactors: []\n");
  EXPECT_THAT(
      LoadCatalog({dir_.string()}),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("b.yaml: name: set \"guard\" is already defined"),
                HasSubstr("c.yaml:2:1: factors: at least one factor"),
                HasSubstr("c.yaml: actions: at least one action"))));
}

TEST_F(CatalogTest, FollowsConfigMapStyleSymlinks) {
  // Kubernetes mounts a ConfigMap as symlinks into a timestamped directory.
  fs::create_directories(dir_ / "..2026_11_30");
  std::ofstream(dir_ / "..2026_11_30" / "guard.yaml") << kGuard;
  fs::create_directory_symlink("..2026_11_30", dir_ / "..data");
  fs::create_symlink("..data/guard.yaml", dir_ / "guard.yaml");
  absl::StatusOr<Catalog> catalog = LoadCatalog({dir_.string()});
  ASSERT_THAT(catalog, IsOk());
  EXPECT_EQ(catalog->sets().size(), 1u);
}

TEST_F(CatalogTest, MissingPathIsNotFound) {
  EXPECT_THAT(LoadCatalog({(dir_ / "nope").string()}),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("no such file or directory")));
  EXPECT_THAT(
      LoadSetFile((dir_ / "nope.yaml").string()),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("cannot be read")));
}

TEST(IsBehaviourSetFileNameTest, AcceptsTheThreeExtensions) {
  EXPECT_TRUE(IsBehaviourSetFileName("a.yaml"));
  EXPECT_TRUE(IsBehaviourSetFileName("a.yml"));
  EXPECT_TRUE(IsBehaviourSetFileName("a.json"));
  EXPECT_FALSE(IsBehaviourSetFileName("a.yaml.bak"));
  EXPECT_FALSE(IsBehaviourSetFileName(".a.yaml"));
  EXPECT_FALSE(IsBehaviourSetFileName("..data"));
}

// WriteMessageYaml writes what ReadMessage reads back to the same message:
// every example set (as written and with its defaults applied) and the
// BT.CPP test sets, whose trees use subtrees with remaps.
TEST(WriteMessageYamlTest, EverySetReadsBackTheSame) {
  std::vector<std::string> files;
  for (const char* dir : {"examples/behaviour_sets", "tests/testdata/bt"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    }
  }
  ASSERT_GE(files.size(), 5u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    std::ifstream in(f);
    const std::string text((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    v1::BehaviourSet set;
    if (!ReadMessageOrError(text, f, &set).ok()) continue;  // a mapping file
    for (bool defaults : {false, true}) {
      if (defaults) ApplyDefaults(&set);
      const std::string yaml = WriteMessageYaml(set);
      v1::BehaviourSet again;
      ASSERT_THAT(ReadMessageOrError(yaml, "written", &again), IsOk()) << yaml;
      EXPECT_TRUE(
          google::protobuf::util::MessageDifferencer::Equals(set, again))
          << yaml;
    }
  }
}

}  // namespace
}  // namespace utilityd::loader
