// TLS and mutual TLS on the real binary, with certificates made by openssl
// for each test run: a client without a valid certificate is refused.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "ctl/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/utilityd_process.h"
#include "utilityd/client/client.h"

namespace utilityd {
namespace {

using ::testing::HasSubstr;
using ::utilityd::testing::IsOk;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("utilityd_tls");
    const std::string d = dir_->path().string();
    // A CA, a server certificate for localhost/127.0.0.1 and a client
    // certificate it signed, and a rogue CA with its own client.
    const std::string script = absl::StrCat(
        "set -e; cd ", d, "\n",
        "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext\n",
        "for ca in ca rogue; do openssl req -x509 -newkey rsa:2048 -nodes "
        "-keyout $ca.key -out $ca.pem -days 2 -subj \"/CN=$ca test CA\"; "
        "done\n",
        "sign() { openssl req -newkey rsa:2048 -nodes -keyout $1.key -out "
        "$1.csr "
        "-subj \"/CN=$3\"; openssl x509 -req -in $1.csr -CA $2.pem -CAkey "
        "$2.key "
        "-CAcreateserial -out $1.pem -days 2 $4; }\n",
        "sign server ca localhost '-extfile server.ext'\n",
        "sign client ca game-server ''\n",
        "sign intruder rogue game-server ''\n");
    ASSERT_EQ(
        std::system(absl::StrCat("bash -c '",
                                 absl::StrReplaceAll(script, {{"'", "'\\''"}}),
                                 "' >/dev/null 2>&1")
                        .c_str()),
        0);
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string File(const std::string& name) {
    return (dir_->path() / name).string();
  }

  void StartServer(bool mutual) {
    std::vector<std::string> args = {"--config_dir=examples/behaviour_sets",
                                     "--tls_cert=" + File("server.pem"),
                                     "--tls_key=" + File("server.key")};
    if (mutual) args.push_back("--tls_client_ca=" + File("ca.pem"));
    server_ = std::make_unique<testing::UtilitydProcess>(args);
    ASSERT_THAT(server_->Start(), IsOk());
  }

  // Lists sets through the SDK with `options`; polls while the server
  // starts.
  absl::Status List(client::ClientOptions options) {
    options.target = server_->address();
    options.deadline = absl::Seconds(2);
    auto c = client::Client::Connect(options);
    if (!c.ok()) return c.status();
    absl::Status last;
    for (int i = 0; i < 20; ++i) {
      last = (*c)->ListBehaviourSets().status();
      if (last.ok() || last.code() != absl::StatusCode::kUnavailable) break;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return last;
  }

  static testing::TempDir* dir_;
  std::unique_ptr<testing::UtilitydProcess> server_;
};

testing::TempDir* TlsTest::dir_ = nullptr;

TEST_F(TlsTest, TlsServesVerifiedClientsAndRefusesPlaintext) {
  ASSERT_NO_FATAL_FAILURE(StartServer(/*mutual=*/false));
  EXPECT_THAT(List({.tls_ca = File("ca.pem")}), IsOk());
  const absl::Status plaintext = List({});
  EXPECT_EQ(plaintext.code(), absl::StatusCode::kUnavailable) << plaintext;
  // A client that trusts another CA refuses the server.
  EXPECT_FALSE(List({.tls_ca = File("rogue.pem")}).ok());
}

TEST_F(TlsTest, MutualTlsRefusesClientsWithoutAValidCertificate) {
  ASSERT_NO_FATAL_FAILURE(StartServer(/*mutual=*/true));
  EXPECT_THAT(List({.tls_ca = File("ca.pem"),
                    .tls_cert = File("client.pem"),
                    .tls_key = File("client.key")}),
              IsOk());
  EXPECT_FALSE(List({.tls_ca = File("ca.pem")}).ok()) << "no client cert";
  EXPECT_FALSE(List({.tls_ca = File("ca.pem"),
                     .tls_cert = File("intruder.pem"),
                     .tls_key = File("intruder.key")})
                   .ok())
      << "client cert from another CA";
  EXPECT_FALSE(List({}).ok()) << "plaintext";

  std::ostringstream out, err;
  const std::vector<std::string> health = {
      "health", "--target=" + server_->address(), "--tls_ca=" + File("ca.pem"),
      "--tls_cert=" + File("client.pem"), "--tls_key=" + File("client.key")};
  EXPECT_EQ(ctl::RunUtilityctl(health, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), "SERVING\n");
  std::ostringstream out2, err2;
  EXPECT_EQ(ctl::RunUtilityctl({"health", "--target=" + server_->address(),
                                "--tls_ca=" + File("ca.pem"), "--timeout=2s"},
                               out2, err2),
            1);
}

TEST_F(TlsTest, IncompleteTlsFlagsAreRefusedAtStartup) {
  testing::UtilitydProcess half({"--config_dir=examples/behaviour_sets",
                                 "--tls_cert=" + File("server.pem")});
  const absl::Status s = half.Start(absl::Seconds(10));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("give both"));
  testing::UtilitydProcess missing({"--config_dir=examples/behaviour_sets",
                                    "--tls_cert=/nonexistent.pem",
                                    "--tls_key=" + File("server.key")});
  const absl::Status m = missing.Start(absl::Seconds(10));
  EXPECT_THAT(std::string(m.message()), HasSubstr("tls_cert: cannot read"));
  EXPECT_THAT(client::ChannelCredentials({.tls_cert = File("client.pem")}),
              ::utilityd::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("need tls_ca")));
}

}  // namespace
}  // namespace utilityd
