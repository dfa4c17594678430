// utilityctl --target against the real server prints what offline mode
// prints.
#include <sstream>

#include "ctl/commands.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;

struct Result {
  int code;
  std::string out, err;
};

Result Ctl(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = ctl::RunUtilityctl(args, out, err);
  return {code, out.str(), err.str()};
}

class RemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::UtilitydProcess>(
        std::vector<std::string>{"--config_dir=examples/behaviour_sets"});
    ASSERT_THAT(server_->StartServing(), IsOk());
  }
  std::string target() const { return "--target=" + server_->address(); }
  std::unique_ptr<testing::UtilitydProcess> server_;
};

template <typename M>
M Parse(const std::string& json) {
  M m;
  EXPECT_THAT(loader::ReadMessageOrError(json, "out", &m), IsOk()) << json;
  return m;
}

TEST_F(RemoteTest, DecideMatchesOfflineMode) {
  const std::vector<std::string> args = {"decide", "--input",
                                         "examples/requests/arena_decide.json"};
  Result offline = Ctl(args);
  std::vector<std::string> remote_args = args;
  remote_args.push_back(target());
  Result remote = Ctl(remote_args);
  ASSERT_EQ(offline.code, 0) << offline.err;
  ASSERT_EQ(remote.code, 0) << remote.err;
  v1::DecideResponse a = Parse<v1::DecideResponse>(offline.out);
  v1::DecideResponse b = Parse<v1::DecideResponse>(remote.out);
  ASSERT_EQ(b.decisions_size(), 3);
  for (auto& d : *b.mutable_decisions()) {
    EXPECT_EQ(d.decision_id().size(), 16u);
    d.clear_decision_id();
  }
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a, b))
      << offline.out << "\n---\n"
      << remote.out;
}

TEST_F(RemoteTest, ScenarioTablesMatchOfflineMode) {
  Result offline =
      Ctl({"decide", "--set", "arena_mage", "--explain", "--format", "table"});
  Result remote = Ctl({"decide", "--set", "arena_mage", "--explain", "--format",
                       "table", target()});
  ASSERT_EQ(remote.code, 0) << remote.err;
  EXPECT_EQ(offline.out, remote.out);
  EXPECT_THAT(remote.out, HasSubstr("-> recharge"));
}

TEST_F(RemoteTest, SetsAndGetMatchOfflineModeButForLoadTimes) {
  Result offline = Ctl({"sets"});
  Result remote = Ctl({"sets", target()});
  ASSERT_EQ(remote.code, 0) << remote.err;
  EXPECT_EQ(offline.out, remote.out);
  EXPECT_THAT(remote.out, HasSubstr("arena_mage"));
  Result got = Ctl({"get", "villager_needs", target()});
  ASSERT_EQ(got.code, 0) << got.err;
  auto response = Parse<v1::GetBehaviourSetResponse>(got.out);
  EXPECT_EQ(response.behaviour_set().actions_size(), 4);
  EXPECT_DOUBLE_EQ(response.behaviour_set().actions(0).weight(), 1);
  Result missing = Ctl({"get", "villager_need", target()});
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(missing.err, HasSubstr("did you mean \"villager_needs\""));
}

TEST_F(RemoteTest, HealthReportsServing) {
  Result r = Ctl({"health", target()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "SERVING\n");
  r = Ctl({"health", target(), "--service=utilityd.v1.DecisionService"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Ctl({"health", target(), "--service=no.such.Service"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
}

TEST(RemoteDownTest, AnUnreachableServerIsReported) {
  Result health = Ctl({"health", "--target=127.0.0.1:1", "--timeout=1s"});
  EXPECT_EQ(health.code, 1);
  EXPECT_THAT(health.err, HasSubstr("UNAVAILABLE"));
  Result r = Ctl({"sets", "--target=127.0.0.1:1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
}

}  // namespace
}  // namespace utilityd
