// PatchSetText: every example file, with one edit of each kind, comes back
// as the author's text with exactly that edit: one line changed or added,
// every comment and omitted default kept, loading as the edited set.
#include "utilityd/loader/set_patch.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::loader {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines that differ once the lines both texts start and end with are
// set aside: what a unified diff of the two shows.
struct LineDiff {
  std::vector<std::string> removed;
  std::vector<std::string> added;
};
LineDiff Lines(const std::string& a, const std::string& b) {
  std::vector<std::string> x = absl::StrSplit(a, '\n');
  std::vector<std::string> y = absl::StrSplit(b, '\n');
  size_t head = 0;
  while (head < x.size() && head < y.size() && x[head] == y[head]) ++head;
  size_t tail = 0;
  while (tail + head < x.size() && tail + head < y.size() &&
         x[x.size() - 1 - tail] == y[y.size() - 1 - tail]) {
    ++tail;
  }
  return {{x.begin() + head, x.end() - tail},
          {y.begin() + head, y.end() - tail}};
}

// The first consideration of the set: an action's, else a tree node's.
v1::Consideration* FirstConsideration(v1::BehaviourSet* set) {
  for (v1::Action& a : *set->mutable_actions()) {
    if (a.considerations_size() > 0) return a.mutable_considerations(0);
  }
  std::vector<v1::TreeNode*> open = {set->mutable_tree()};
  while (!open.empty()) {
    v1::TreeNode* n = open.back();
    open.pop_back();
    if (n->considerations_size() > 0) return n->mutable_considerations(0);
    for (v1::TreeNode* c : ChildrenOf(n)) open.push_back(c);
  }
  return nullptr;
}

// Its curve's first parameter, moved: a value the file has, or one it
// leaves to the kind's default.
void MoveFirstParameter(v1::Curve* curve) {
  const google::protobuf::Reflection* r = curve->GetReflection();
  const google::protobuf::FieldDescriptor* kind = r->GetOneofFieldDescriptor(
      *curve, curve->GetDescriptor()->FindOneofByName("kind"));
  ASSERT_NE(kind, nullptr);
  google::protobuf::Message* params = r->MutableMessage(curve, kind);
  const google::protobuf::Descriptor* d = params->GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) {
      continue;
    }
    const double v = params->GetReflection()->GetDouble(*params, f);
    params->GetReflection()->SetDouble(params, f, v + 0.125);
    return;
  }
  GTEST_SKIP() << kind->name() << " has no number to move";
}

struct EditCase {
  const char* name;
  std::function<void(v1::BehaviourSet*)> edit;
};

std::vector<EditCase> Edits() {
  return {
      {"a curve parameter",
       [](v1::BehaviourSet* s) {
         MoveFirstParameter(FirstConsideration(s)->mutable_curve());
       }},
      {"an output range the file may omit",
       [](v1::BehaviourSet* s) {
         v1::Range* out = FirstConsideration(s)->mutable_output();
         out->set_min(out->max() * 0.85);
       }},
      {"a consideration weight",
       [](v1::BehaviourSet* s) { FirstConsideration(s)->set_weight(0.75); }},
      {"a curve's kind",
       [](v1::BehaviourSet* s) {
         v1::Curve* c = FirstConsideration(s)->mutable_curve();
         if (c->has_smoothstep()) {
           c->mutable_linear();
         } else {
           c->mutable_smoothstep();
         }
       }},
      {"the commitment bonus",
       [](v1::BehaviourSet* s) {
         s->mutable_selection()->set_commitment_bonus(0.35);
       }},
  };
}

class PatchEveryExample : public ::testing::TestWithParam<std::string> {};

TEST_P(PatchEveryExample, OneEditIsOneLineOfTheAuthorsFile) {
  const fs::path path = fs::path("examples/behaviour_sets") / GetParam();
  const std::string original = ReadText(path);
  absl::StatusOr<std::shared_ptr<const LoadedSet>> loaded =
      LoadSetText(original, path.string());
  ASSERT_THAT(loaded, IsOk());
  for (const EditCase& c : Edits()) {
    SCOPED_TRACE(c.name);
    v1::BehaviourSet edited = (*loaded)->definition;
    c.edit(&edited);
    absl::StatusOr<std::string> patched =
        PatchSetText(original, path.string(), edited);
    ASSERT_THAT(patched, IsOk());
    const LineDiff diff = Lines(original, *patched);
    EXPECT_LE(diff.removed.size(), 1u) << *patched;
    EXPECT_EQ(diff.added.size(), 1u) << *patched;
    // What loads from the new text is the edited set, whatever else.
    absl::StatusOr<std::shared_ptr<const LoadedSet>> again =
        LoadSetText(*patched, path.string());
    ASSERT_THAT(again, IsOk());
    absl::StatusOr<std::shared_ptr<const LoadedSet>> wanted =
        LoadSetProto(edited, "edited");
    ASSERT_THAT(wanted, IsOk());
    EXPECT_EQ((*again)->definition.revision(), (*wanted)->definition.revision())
        << diff.added[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, PatchEveryExample,
                         ::testing::Values("arena_goblin.yaml",
                                           "arena_mage.yaml",
                                           "eat_hide_wander.yaml",
                                           "guard_tree.yaml",
                                           "villager_needs.yaml"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return p.param.substr(0, p.param.find('.'));
                         });

TEST(PatchSetText, NothingChangedIsTheSameText) {
  const std::string text = ReadText("examples/behaviour_sets/arena_mage.yaml");
  auto loaded = LoadSetText(text, "arena_mage.yaml");
  ASSERT_THAT(loaded, IsOk());
  absl::StatusOr<std::string> patched =
      PatchSetText(text, "arena_mage.yaml", (*loaded)->definition);
  ASSERT_THAT(patched, IsOk());
  EXPECT_EQ(*patched, text);
}

constexpr char kSmall[] = R"(# a comment kept
name: small
factors:
  - {name: hunger}   # 0..1
actions:
  - name: eat
    considerations:
      - name: hunger
        factor: hunger
        curve:
          logistic:
            steepness: 8   # steep
  - name: idle
    considerations:
      - {name: bored, factor: hunger, output: {min: 0.1}}
)";

TEST(PatchSetText, WritesIntoBlockAndFlowMappingsInTheirStyle) {
  auto loaded = LoadSetText(kSmall, "small.yaml");
  ASSERT_THAT(loaded, IsOk());
  v1::BehaviourSet edited = (*loaded)->definition;
  edited.mutable_actions(0)
      ->mutable_considerations(0)
      ->mutable_curve()
      ->mutable_logistic()
      ->set_steepness(12);
  edited.mutable_actions(0)->set_weight(2);
  edited.mutable_actions(1)
      ->mutable_considerations(0)
      ->mutable_output()
      ->set_max(0.8);
  absl::StatusOr<std::string> patched =
      PatchSetText(kSmall, "small.yaml", edited);
  ASSERT_THAT(patched, IsOk());
  EXPECT_THAT(*patched, HasSubstr("steepness: 12   # steep\n"));
  // At the end of the action's mapping, at its indentation.
  EXPECT_THAT(*patched, HasSubstr("steepness: 12   # steep\n    weight: 2\n"
                                  "  - name: idle\n"));
  EXPECT_THAT(*patched,
              HasSubstr("{name: bored, factor: hunger, output: {min: 0.1, "
                        "max: 0.8}}"));
  EXPECT_THAT(*patched, HasSubstr("# a comment kept\n"));
  EXPECT_THAT(*patched, HasSubstr("{name: hunger}   # 0..1\n"));
}

TEST(PatchSetText, ACurveOfAnotherKindIsWrittenWithOnlyWhatDiffers) {
  auto loaded = LoadSetText(kSmall, "small.yaml");
  ASSERT_THAT(loaded, IsOk());
  v1::BehaviourSet edited = (*loaded)->definition;
  v1::Curve* curve =
      edited.mutable_actions(0)->mutable_considerations(0)->mutable_curve();
  curve->mutable_normal()->set_mean(0.25);
  absl::StatusOr<std::string> patched =
      PatchSetText(kSmall, "small.yaml", edited);
  ASSERT_THAT(patched, IsOk());
  EXPECT_THAT(*patched, HasSubstr("        curve: {normal: {mean: 0.25}}\n"
                                  "  - name: idle\n"));
}

TEST(PatchSetText, FindsValuesAfterTextThatIsNotAsciiAndKeepsDerivedDefaults) {
  const std::string text =
      "name: cafe\n"
      "factors:\n"
      "  - {name: faim, description: \"café ☕ — faim\", max: 4}\n"
      "actions:\n"
      "  - {name: manger, description: ☕☕, considerations: [{name: f, "
      "factor: faim, weight: 0.5}]}\n";
  auto loaded = LoadSetText(text, "cafe.yaml");
  ASSERT_THAT(loaded, IsOk());
  v1::BehaviourSet edited = (*loaded)->definition;
  edited.mutable_factors(0)->set_max(8);
  edited.mutable_actions(0)->mutable_considerations(0)->set_weight(0.25);
  absl::StatusOr<std::string> patched = PatchSetText(text, "cafe.yaml", edited);
  ASSERT_THAT(patched, IsOk());
  EXPECT_THAT(*patched, HasSubstr("\"café ☕ — faim\", max: 8}\n"));
  // The factor's new max would move the bookend its consideration took
  // from it: the consideration keeps the one it had, written out.
  EXPECT_THAT(*patched,
              HasSubstr("factor: faim, weight: 0.25, range: {max: 4}}]}\n"));
}

TEST(PatchSetText, RefusesJsonAndNamesWhatItCannotWrite) {
  EXPECT_THAT(
      PatchSetText("{}", "x.json", v1::BehaviourSet()).status().message(),
      HasSubstr("JSON"));
  auto loaded = LoadSetText(kSmall, "small.yaml");
  ASSERT_THAT(loaded, IsOk());
  v1::BehaviourSet invalid = (*loaded)->definition;
  invalid.mutable_actions(0)->mutable_considerations(0)->set_factor("nope");
  EXPECT_FALSE(PatchSetText(kSmall, "small.yaml", invalid).ok());
}

}  // namespace
}  // namespace utilityd::loader
