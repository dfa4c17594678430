// The C++ SDK against the vectors the TypeScript SDK's tests read too
// (tests/vectors/client_sdk_vectors.json, made by Python's protobuf):
// decision ids, packing, block encoding and decoding, the tree tracker.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "utilityd/base/decision_id.h"
#include "utilityd/client/block.h"
#include "utilityd/client/client.h"
#include "utilityd/client/tree_tracker.h"
#include "vectors/sdk_vectors.pb.h"

namespace utilityd::client {
namespace {

using google::protobuf::util::MessageDifferencer;
using testing::SdkVectors;

SdkVectors Load() {
  std::ifstream in("tests/vectors/client_sdk_vectors.json");
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  SdkVectors v;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &v);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return v;
}

template <typename T, typename Field>
absl::Span<const T> SpanOf(const Field& f) {
  return absl::MakeConstSpan(f.data(), f.size());
}

TEST(SdkVectorsTest, TheVectorsAreThere) {
  const SdkVectors v = Load();
  EXPECT_GE(v.decision_ids_size(), 5);
  EXPECT_GE(v.packing_size(), 4);
  EXPECT_GE(v.blocks_size(), 2);
  EXPECT_GE(v.answers_size(), 3);
  EXPECT_GE(v.trees_size(), 1);
}

TEST(SdkVectorsTest, DecisionIds) {
  const SdkVectors v = Load();
  for (const auto& c : v.decision_ids()) {
    const auto hex = DecisionIdHex(DecisionId(c.base(), c.index()));
    EXPECT_EQ(std::string(hex.data(), hex.size()), c.hex())
        << c.base() << " " << c.index();
  }
}

TEST(SdkVectorsTest, NamedFactorsPackInTheSetsOrder) {
  const SdkVectors v = Load();
  for (const auto& c : v.packing()) {
    SetSchema schema(c.summary());
    v1::AgentSnapshot snapshot = c.given();
    const absl::Status s = schema.Pack(&snapshot);
    if (!c.error().empty()) {
      EXPECT_EQ(s.message(), c.error()) << c.name();
      EXPECT_TRUE(MessageDifferencer::Equals(snapshot, c.given()))
          << c.name() << ": left unchanged";
      continue;
    }
    ASSERT_TRUE(s.ok()) << c.name() << ": " << s;
    EXPECT_TRUE(MessageDifferencer::Equals(snapshot, c.packed()))
        << c.name() << "\n"
        << snapshot.DebugString();
  }
}

TEST(SdkVectorsTest, BlocksEncodeToTheReferenceBytes) {
  const SdkVectors v = Load();
  for (const auto& c : v.blocks()) {
    const v1::AgentBlock& b = c.block();
    std::vector<v1::NodeStatus> statuses;
    for (int s : b.outcome_statuses()) {
      statuses.push_back(static_cast<v1::NodeStatus>(s));
    }
    BlockColumns in{
        .behaviour_set = b.behaviour_set(),
        .expected_revision = b.expected_revision(),
        .agent_ids = SpanOf<uint64_t>(b.agent_ids()),
        .factors = SpanOf<float>(b.factors()),
        .layout = b.layout(),
        .current_action = SpanOf<int32_t>(b.current_action()),
        .seconds_since_action = SpanOf<float>(b.seconds_since_action()),
        .seeds = SpanOf<uint64_t>(b.seeds()),
        .personality = SpanOf<int32_t>(b.personality()),
        .target_offsets = SpanOf<uint32_t>(b.target_offsets()),
        .target_factors = SpanOf<float>(b.target_factors()),
        .target_ids = SpanOf<uint64_t>(b.target_ids()),
        .current_target = SpanOf<int32_t>(b.current_target()),
        .explain_rows = SpanOf<uint32_t>(b.explain_rows()),
        .game_time = b.game_time(),
        .tree_state_offsets = SpanOf<uint32_t>(b.tree_state_offsets()),
        .tree_states = b.tree_states(),
        .outcome_offsets = SpanOf<uint32_t>(b.outcome_offsets()),
        .outcome_leaves = SpanOf<int32_t>(b.outcome_leaves()),
        .outcome_statuses = statuses,
        .held_offsets = SpanOf<uint32_t>(b.held_offsets()),
        .held_resources = SpanOf<uint32_t>(b.held_resources()),
        .held_target_ids = SpanOf<uint64_t>(b.held_target_ids()),
        .held_amounts = SpanOf<uint32_t>(b.held_amounts()),
        .fixed_width_indices = b.fixed_width_indices()};
    v1::AgentBlock out;
    WriteBlock(in, &out);
    std::string wire;
    ASSERT_TRUE(out.SerializeToString(&wire));
    EXPECT_EQ(wire, c.wire()) << c.name();
  }
}

TEST(SdkVectorsTest, AnswersReadIntoCallerArrays) {
  const SdkVectors v = Load();
  for (const auto& c : v.answers()) {
    v1::DecisionBlock answer;
    ASSERT_TRUE(answer.ParseFromString(c.wire())) << c.name();
    EXPECT_EQ(answer.SerializeAsString(), c.block().SerializeAsString());
    // The indices the reader must give: the fixed-width columns when the
    // answer has them.
    const bool fixed = c.block().action_index_fixed_size() > 0;
    const auto& want_action =
        fixed ? c.block().action_index_fixed() : c.block().action_index();
    const auto& want_target =
        fixed ? c.block().target_index_fixed() : c.block().target_index();
    const int rows = want_action.size();
    std::vector<int32_t> action(rows), target(rows);
    std::vector<float> score(rows);
    std::vector<uint8_t> flags(rows);
    std::vector<RowError> errors;
    const absl::Status s = ReadBlock(answer, rows,
                                     {.action_index = absl::MakeSpan(action),
                                      .target_index = absl::MakeSpan(target),
                                      .score = absl::MakeSpan(score),
                                      .flags = absl::MakeSpan(flags)},
                                     &errors);
    if (c.block().has_error()) {
      EXPECT_EQ(s.message(), c.block().error().message()) << c.name();
      continue;
    }
    ASSERT_TRUE(s.ok()) << c.name() << ": " << s;
    for (int r = 0; r < rows; ++r) {
      EXPECT_EQ(action[r], want_action[r]);
      EXPECT_EQ(target[r], want_target[r]);
      EXPECT_EQ(score[r], c.block().score(r));
      EXPECT_EQ(flags[r], static_cast<uint8_t>(c.block().flags()[r]));
    }
    ASSERT_EQ(errors.size(), static_cast<size_t>(c.block().full_size()));
    for (size_t k = 0; k < errors.size(); ++k) {
      EXPECT_EQ(errors[k].row, c.block().full(static_cast<int>(k)).agent());
    }
  }
}

TEST(SdkVectorsTest, TheTreeTracker) {
  const SdkVectors v = Load();
  for (const auto& c : v.trees()) {
    TreeTracker trees;
    for (int k = 0; k < c.steps_size(); ++k) {
      const auto& step = c.steps(k);
      SCOPED_TRACE(::testing::Message() << c.name() << ", step " << k);
      if (step.has_prepare()) {
        v1::AgentSnapshot snapshot;
        snapshot.set_agent_id(step.prepare().agent_id());
        trees.Prepare(&snapshot);
        EXPECT_EQ(snapshot.tree_state(), step.prepare().expect_state());
        ASSERT_EQ(snapshot.leaf_outcomes_size(),
                  step.prepare().expect_outcomes_size());
        for (int o = 0; o < snapshot.leaf_outcomes_size(); ++o) {
          EXPECT_EQ(snapshot.leaf_outcomes(o).SerializeAsString(),
                    step.prepare().expect_outcomes(o).SerializeAsString());
        }
        EXPECT_EQ(trees.Running(step.prepare().agent_id()).size(),
                  step.prepare().expect_running());
      } else if (step.has_update()) {
        trees.Update(step.update());
      } else if (step.has_report()) {
        trees.Report(step.report().agent_id(), step.report().leaf(),
                     step.report().status());
      } else {
        trees.Forget(step.forget());
      }
    }
  }
}

}  // namespace
}  // namespace utilityd::client
