// Overload against the real utilityd (docs/RELIABILITY.md, "Overload"): a
// refusal says why and when to retry, on both paths, and is counted once; a
// refusal no retry can help says so; the SDK's unary Decide retries a
// refused call on another replica. (The flood itself, with memory, latency
// and health bounds: tests/load/overload_test.py.)
#include <grpcpp/grpcpp.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/client/client.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;
using ::utilityd::testing::UtilitydProcess;

v1::DecideRequest Foragers(int n) {
  v1::DecideRequest request;
  for (int a = 0; a < n; ++a) {
    v1::AgentSnapshot* agent = request.add_agents();
    agent->set_agent_id(absl::StrCat("f", a));
    agent->set_behaviour_set("eat_hide_wander");
    for (float v : {0.8f, 0.05f, 5.0f, 2.0f}) agent->add_factors(v);
  }
  return request;
}

std::unique_ptr<v1::DecisionService::Stub> RawStub(
    const UtilitydProcess& server) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);  // see every refusal
  return v1::DecisionService::NewStub(grpc::CreateCustomChannel(
      server.address(), grpc::InsecureChannelCredentials(), args));
}

std::string Trailer(const grpc::ClientContext& context,
                    const std::string& key) {
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto it = trailers.find(key);
  return it == trailers.end()
             ? ""
             : std::string(it->second.data(), it->second.size());
}

TEST(OverloadTest, ARefusalSaysWhyAndWhenToRetryAndIsCountedOnce) {
  // A queue of 100 agents: a batch of 200 never fits; one of 50 does.
  UtilitydProcess server(
      {"--config_dir=examples/behaviour_sets", "--max_queued_agents=100"});
  ASSERT_THAT(server.StartServing(), IsOk());
  auto stub = RawStub(server);
  {
    grpc::ClientContext context;
    v1::DecideResponse response;
    const grpc::Status s = stub->Decide(&context, Foragers(200), &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(), HasSubstr("overloaded"));
    EXPECT_GE(std::stoi(Trailer(context, "grpc-retry-pushback-ms")), 10);
  }
  {
    grpc::ClientContext context;
    v1::DecideResponse response;
    ASSERT_TRUE(stub->Decide(&context, Foragers(50), &response).ok());
    EXPECT_EQ(response.decisions_size(), 50);
  }
  // On a stream the refusal is the batch's Error, with the hint in it; the
  // stream goes on.
  grpc::ClientContext context;
  auto stream = stub->DecideStream(&context);
  v1::DecideResponse response;
  ASSERT_TRUE(stream->Write(Foragers(200)));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.error().reason(), v1::ERROR_REASON_OVERLOADED);
  EXPECT_EQ(response.error().code(), v1::ERROR_CODE_RESOURCE_EXHAUSTED);
  EXPECT_GE(response.error().retry_after_ms(), 10);
  ASSERT_TRUE(stream->Write(Foragers(50)));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.decisions_size(), 50);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(server.MetricTotal("utilityd_shed_total"), 2);
  EXPECT_EQ(server.MetricTotal("utilityd_queued_agents"), 0);
}

TEST(OverloadTest, ARefusalNoRetryCanHelpTellsRetriesNotToTry) {
  UtilitydProcess server(
      {"--config_dir=examples/behaviour_sets", "--max_agents_per_request=50"});
  ASSERT_THAT(server.StartServing(), IsOk());
  grpc::ClientContext context;
  v1::DecideResponse response;
  const grpc::Status s =
      RawStub(server)->Decide(&context, Foragers(60), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("max_agents_per_request"));
  EXPECT_EQ(Trailer(context, "grpc-retry-pushback-ms"), "-1");
  EXPECT_EQ(server.MetricTotal("utilityd_shed_total"), 0);
}

// Replica A refuses every batch of 20 (its queue holds 10 agents); B takes
// them. Through the SDK's round robin every call succeeds, each one A
// refused having been retried on B; without retries, those fail.
TEST(OverloadTest, TheSdkRetriesARefusedCallOnAnotherReplica) {
  UtilitydProcess a(
      {"--config_dir=examples/behaviour_sets", "--max_queued_agents=10"});
  UtilitydProcess b({"--config_dir=examples/behaviour_sets"});
  ASSERT_THAT(a.StartServing(), IsOk());
  ASSERT_THAT(b.StartServing(), IsOk());
  const std::string target =
      absl::StrCat("127.0.0.1:", a.port(), ",127.0.0.1:", b.port());
  constexpr int kCalls = 20;
  for (const int attempts : {4, 1}) {
    SCOPED_TRACE(absl::StrCat("max_attempts ", attempts));
    const double shed_before = a.MetricTotal("utilityd_shed_total");
    auto client =
        client::Client::Connect({.target = target, .max_attempts = attempts});
    ASSERT_THAT(client.status(), IsOk());
    int ok = 0, refused = 0;
    for (int i = 0; i < kCalls; ++i) {
      absl::StatusOr<v1::DecideResponse> r = (*client)->Decide(Foragers(20));
      if (r.ok()) {
        ++ok;
      } else if (r.status().code() == absl::StatusCode::kResourceExhausted) {
        ++refused;
      }
    }
    const double shed = a.MetricTotal("utilityd_shed_total") - shed_before;
    // Round robin reached A (so A refused some), and every call ended once.
    EXPECT_GT(shed, 0);
    EXPECT_EQ(ok + refused, kCalls);
    if (attempts > 1) {
      EXPECT_EQ(ok, kCalls);
    } else {
      EXPECT_EQ(refused, shed);
      EXPECT_GT(refused, 0);
    }
  }
}

}  // namespace
}  // namespace utilityd
