// A fixture for tests of the admin endpoint: the real utilityd serving the
// example sets, with an HTTP client on its admin port and a gRPC stub.
//
//   class MyTest : public testing::AdminServerTest {};
//   TEST_F(MyTest, X) { Start({"--admin_token=t"}); http_->Get("/metrics"); }
#ifndef UTILITYD_TESTS_TESTING_ADMIN_SERVER_H_
#define UTILITYD_TESTS_TESTING_ADMIN_SERVER_H_

#include <grpcpp/create_channel.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd::testing {

class AdminServerTest : public ::testing::Test {
 protected:
  // Starts utilityd on the examples with `flags` and connects to it.
  void Start(std::vector<std::string> flags = {}) {
    flags.push_back("--config_dir=examples/behaviour_sets");
    server_ = std::make_unique<UtilitydProcess>(flags);
    ASSERT_THAT(server_->StartServing(), IsOk());
    http_ =
        std::make_unique<httplib::Client>("127.0.0.1", server_->http_port());
    http_->set_read_timeout(60);
    stub_ = v1::DecisionService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  httplib::Result Post(const std::string& path, const std::string& body) {
    return http_->Post(path, body, "application/json");
  }

  std::unique_ptr<UtilitydProcess> server_;
  std::unique_ptr<httplib::Client> http_;
  std::unique_ptr<v1::DecisionService::Stub> stub_;
};

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_ADMIN_SERVER_H_
