#include "utilityd/loader/proto_reader.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "utilityd/v1/behaviour_set.pb.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::loader {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::vector<ReadIssue> ReadSet(const std::string& text, v1::BehaviourSet* set,
                               const ReadLimits& limits = {}) {
  std::vector<ReadIssue> issues;
  (void)ReadMessage(text, "set.yaml", set, &issues, limits);
  return issues;
}

TEST(ProtoReaderTest, ReadsYamlWithShortEnumsAndOneofs) {
  v1::BehaviourSet set;
  EXPECT_THAT(ReadSet(R"(
name: guard
factors:
  - {name: health, min: 0, max: 100}
actions:
  - name: heal
    weight: 1.1
    considerations:
      - name: hurt
        factor: health
        range: {min: 100, max: 0}
        curve: {logistic: {steepness: 8, rescale: true}, invert: true}
scoring: {aggregation: weighted_sum, compensation: NONE}
selection: {top_k: {k: 3}}
personalities:
  - {name: brave, action_weights: {heal: 0.5}}
)",
                      &set),
              IsEmpty());
  EXPECT_EQ(set.name(), "guard");
  EXPECT_TRUE(set.actions(0).has_weight());
  EXPECT_DOUBLE_EQ(set.actions(0).weight(), 1.1);
  const v1::Consideration& c = set.actions(0).considerations(0);
  EXPECT_DOUBLE_EQ(c.range().min(), 100);
  EXPECT_TRUE(c.curve().has_logistic());
  EXPECT_FALSE(c.curve().logistic().has_midpoint());
  EXPECT_TRUE(c.curve().invert());
  EXPECT_EQ(set.scoring().aggregation(), v1::AGGREGATION_WEIGHTED_SUM);
  EXPECT_EQ(set.scoring().compensation(), v1::COMPENSATION_NONE);
  EXPECT_EQ(set.selection().top_k().k(), 3);
  EXPECT_DOUBLE_EQ(set.personalities(0).action_weights().at("heal"), 0.5);
}

TEST(ProtoReaderTest, ReadsProtobufJsonWithCamelCaseNames) {
  v1::DecideRequest request;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadMessage(R"({"requestId": "18446744073709551615",
      "agents": [{"agentId": "a", "behaviourSet": "s", "factors": [1, "NaN",
      "-Infinity"], "secondsSinceAction": {"x": 2.5}, "seed": 7}],
      "explain": "EXPLAIN_FULL"})",
                          "req.json", &request, &issues))
      << JoinIssues(issues);
  EXPECT_EQ(request.request_id(), 18446744073709551615ull);
  ASSERT_EQ(request.agents_size(), 1);
  const v1::AgentSnapshot& a = request.agents(0);
  EXPECT_EQ(a.behaviour_set(), "s");
  ASSERT_EQ(a.factors_size(), 3);
  EXPECT_TRUE(std::isnan(a.factors(1)));
  EXPECT_TRUE(std::isinf(a.factors(2)) && a.factors(2) < 0);
  EXPECT_FLOAT_EQ(a.seconds_since_action().at("x"), 2.5f);
  EXPECT_EQ(request.explain(), v1::EXPLAIN_FULL);
}

TEST(ProtoReaderTest, RoundTripsWhatProtobufsJsonPrinterWrites) {
  v1::DecideRequest original;
  original.set_request_id(42);
  original.set_explain(v1::EXPLAIN_TOP);
  v1::AgentSnapshot* a = original.add_agents();
  a->set_agent_id("mage-1");
  a->set_behaviour_set("arena_mage");
  a->add_factors(0.25f);
  a->add_factors(-3);
  a->set_current_action("attack");
  (*a->mutable_seconds_since_action())["heal"] = 1.5f;
  v1::TargetSnapshot* t = a->add_targets();
  t->set_target_id("g1");
  (*t->mutable_named_factors())["distance"] = 4;
  a->set_seed(99);
  // Bytes travel as base64 (a tree state: not UTF-8, '+' and '/' in it).
  a->set_tree_state(std::string("\x01\x9f\x85\xcc\xff\x00\xfe\xfb", 8));
  a->set_game_time(12.5);
  v1::LeafOutcome* o = a->add_leaf_outcomes();
  o->set_leaf(7);
  o->set_status(v1::NODE_STATUS_SUCCESS);
  for (bool snake : {false, true}) {
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = snake;
    std::string json;
    ASSERT_TRUE(
        google::protobuf::util::MessageToJsonString(original, &json, options)
            .ok());
    v1::DecideRequest parsed;
    std::vector<ReadIssue> issues;
    ASSERT_TRUE(ReadMessage(json, "rt.json", &parsed, &issues))
        << JoinIssues(issues);
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(original, parsed))
        << json;
  }
}

TEST(ProtoReaderTest, ReadsBytesAsStandardOrUrlSafeBase64) {
  v1::AgentSnapshot a;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadMessage("tree_state: \"AZ+F/w==\"", "b", &a, &issues))
      << JoinIssues(issues);
  EXPECT_EQ(a.tree_state(), std::string("\x01\x9f\x85\xff", 4));
  ASSERT_TRUE(ReadMessage("tree_state: AZ-F_w", "b", &a, &issues))
      << JoinIssues(issues);
  EXPECT_EQ(a.tree_state(), std::string("\x01\x9f\x85\xff", 4));
  EXPECT_FALSE(ReadMessage("tree_state: \"not base64!\"", "b", &a, &issues));
  EXPECT_THAT(issues.back().path, "tree_state");
  EXPECT_THAT(issues.back().message, HasSubstr("base64"));
}

TEST(ProtoReaderTest, ReadsTimestampsInTheirJsonForm) {
  v1::BehaviourSetSummary summary;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadMessage("loaded_at: \"2026-11-30T06:35:41.25Z\"", "t",
                          &summary, &issues))
      << JoinIssues(issues);
  EXPECT_EQ(summary.loaded_at().seconds(), 1796020541);
  EXPECT_EQ(summary.loaded_at().nanos(), 250000000);
  EXPECT_FALSE(ReadMessage("loaded_at: yesterday", "t", &summary, &issues));
  EXPECT_THAT(issues.back().message, HasSubstr("RFC 3339"));
}

TEST(ProtoReaderTest, NullMeansUnset) {
  v1::BehaviourSet set;
  EXPECT_THAT(ReadSet("name: a\nactions:\n  - {name: x, weight: null}\n", &set),
              IsEmpty());
  EXPECT_FALSE(set.actions(0).has_weight());
}

TEST(ProtoReaderTest, UnknownFieldNamesLineAndSuggests) {
  v1::BehaviourSet set;
  const auto issues = ReadSet(R"(name: a
actions:
  - name: heal
    considerations:
      - name: hurt
        factr: health
)",
                              &set);
  ASSERT_THAT(issues, SizeIs(1));
  EXPECT_EQ(issues[0].ToString(),
            "set.yaml:6:9: actions[0].considerations[0].factr: unknown field "
            "\"factr\" (did you mean \"factor\"?)");
}

TEST(ProtoReaderTest, ReportsEveryTypeProblem) {
  v1::BehaviourSet set;
  const auto issues = ReadSet(R"(name: [not, a, string]
factors: {name: health}
actions:
  - name: heal
    weight: heavy
    rank: 1.5
    per_target: maybe
    considerations: 3
scoring: {aggregation: products}
)",
                              &set);
  auto has = [&](const std::string& path, const std::string& message) {
    return Contains(AllOf(Field(&ReadIssue::path, path),
                          Field(&ReadIssue::message, HasSubstr(message))));
  };
  EXPECT_THAT(issues, has("name", "expected a single value, got a list"));
  EXPECT_THAT(issues, has("factors", "expected a list, got a mapping"));
  EXPECT_THAT(issues,
              has("actions[0].weight", "expected a number, got \"heavy\""));
  EXPECT_THAT(issues, has("actions[0].rank", "expected a whole number"));
  EXPECT_THAT(issues, has("actions[0].per_target", "expected true or false"));
  EXPECT_THAT(issues, has("actions[0].considerations", "expected a list"));
  EXPECT_THAT(issues, has("scoring.aggregation",
                          "unknown value \"products\" (did you mean "
                          "\"product\"?); expected one of: product, "
                          "weighted_sum, min"));
}

TEST(ProtoReaderTest, RejectsDuplicateKeysAndTwoOneofMembers) {
  v1::BehaviourSet set;
  const auto issues = ReadSet(R"(name: a
name: b
actions:
  - name: x
    considerations:
      - name: c
        curve: {linear: {}, step: {}}
personalities:
  - {name: p, action_weights: {x: 1, x: 2}}
)",
                              &set);
  EXPECT_THAT(issues, Contains(Field(&ReadIssue::message, "given twice")));
  EXPECT_THAT(issues,
              Contains(Field(&ReadIssue::message,
                             HasSubstr("only one of kind may be set"))));
  EXPECT_THAT(issues, Contains(Field(&ReadIssue::message, "duplicate key")));
}

TEST(ProtoReaderTest, SyntaxErrorsNameTheLine) {
  v1::BehaviourSet set;
  const auto issues = ReadSet("name: a\nactions: [\n  {name: x\n", &set);
  ASSERT_THAT(issues, SizeIs(1));
  EXPECT_THAT(issues[0].message, HasSubstr("syntax error"));
  EXPECT_GT(issues[0].line, 0);
}

TEST(ProtoReaderTest, StopsAnAliasBombBeforeItExpands) {
  // yaml-cpp shares aliased nodes, so the reader's walk is where aliases
  // expand. 2000 aliases of a 10-item list is 20000+ nodes: over a budget
  // of 10000, reading stops with an issue instead of expanding further.
  std::string doc = "name: s\nx: &big [";
  for (int i = 0; i < 10; ++i) {
    absl::StrAppend(&doc, i ? ", " : "", "{id: t", i, "}");
  }
  doc += "]\nscenarios:\n";
  for (int i = 0; i < 2000; ++i) {
    absl::StrAppend(&doc, "  - {name: s", i, ", targets: *big}\n");
  }
  v1::BehaviourSet set;
  ReadLimits limits;
  limits.max_nodes = 10000;
  const auto issues = ReadSet(doc, &set, limits);
  EXPECT_THAT(issues, Contains(Field(&ReadIssue::message,
                                     HasSubstr("more than 10000 nodes"))));
  EXPECT_LT(set.scenarios_size(), 2000);
}

TEST(ProtoReaderTest, RefusesOversizedAndDeeplyNestedDocuments) {
  v1::BehaviourSet set;
  ReadLimits limits;
  limits.max_bytes = 100;
  EXPECT_THAT(ReadSet(std::string(200, '#'), &set, limits),
              Contains(Field(&ReadIssue::message, HasSubstr("200 bytes"))));
  ReadLimits shallow;
  shallow.max_depth = 3;
  EXPECT_THAT(
      ReadSet("actions: [{considerations: [{curve: {linear: {slope: 1}}}]}]",
              &set, shallow),
      Contains(Field(&ReadIssue::message, HasSubstr("nesting deeper than 3"))));
}

TEST(ProtoReaderTest, RejectsInvalidUtf8InStrings) {
  v1::BehaviourSet set;
  EXPECT_THAT(
      ReadSet("name: a\ndescription: \"bad \xC3\x28 byte\"\n", &set),
      Contains(AllOf(Field(&ReadIssue::path, "description"),
                     Field(&ReadIssue::message, "is not valid UTF-8"))));
  EXPECT_THAT(
      ReadSet("name: a\ndescription: \"caf\xC3\xA9 \xE2\x86\x92\"\n", &set),
      IsEmpty());
}

TEST(ProtoReaderTest, RecordsWhereFieldsWereWritten) {
  v1::BehaviourSet set;
  std::vector<ReadIssue> issues;
  PositionMap positions;
  ASSERT_TRUE(ReadMessage("name: a\nactions:\n  - name: x\n    weight: 2\n",
                          "p.yaml", &set, &issues, {}, &positions));
  EXPECT_EQ(FindPosition(positions, "actions[0].weight").line, 4);
  EXPECT_EQ(FindPosition(positions, "actions[0].considerations[3].curve").line,
            3);
  EXPECT_EQ(FindPosition(positions, "nowhere").line, 0);
}

}  // namespace
}  // namespace utilityd::loader
