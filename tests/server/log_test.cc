#include "server/src/log.h"

#include "gtest/gtest.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::server {
namespace {

TEST(LogTest, PlainWordsStayBareEverythingElseIsAJsonString) {
  EXPECT_EQ(LogfmtValue("config_loaded"), "config_loaded");
  EXPECT_EQ(LogfmtValue("/etc/utilityd"), "/etc/utilityd");
  EXPECT_EQ(LogfmtValue(""), "\"\"");
  EXPECT_EQ(LogfmtValue("two words"), "\"two words\"");
  EXPECT_EQ(LogfmtValue("a=b"), "\"a=b\"");
  EXPECT_EQ(LogfmtValue("line one\nunknown factor \"helth\""),
            "\"line one\\nunknown factor \\\"helth\\\"\"");
}

TEST(LogTest, JsonStringEscapesControlCharacters) {
  EXPECT_EQ(JsonString("tab\there\\"), "\"tab\\there\\\\\"");
  EXPECT_EQ(JsonString(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(JsonString("café →"), "\"café →\"");
}

TEST(LogTest, ProtobufMessagesAreRateLimited) {
  InstallProtobufLogHandler(/*per_minute=*/5);
  const ProtobufLogStats before = GetProtobufLogStats();
  // A proto3 string field holding invalid UTF-8 makes protobuf log an
  // error on every parse, as a bad client's messages would.
  v1::AgentSnapshot bad;
  bad.set_agent_id(std::string("\xff\xfe", 2));
  const std::string bytes = bad.SerializeAsString();
  for (int i = 0; i < 100; ++i) {
    v1::AgentSnapshot parsed;
    (void)parsed.ParseFromString(bytes);
  }
  const ProtobufLogStats after = GetProtobufLogStats();
  EXPECT_LE(after.forwarded - before.forwarded, 5);
  EXPECT_GE(after.suppressed - before.suppressed, 95);
}

TEST(LogTest, ParsesLevels) {
  LogLevel level;
  EXPECT_TRUE(ParseLogLevel("warning", &level));
  EXPECT_EQ(level, LogLevel::kWarning);
  EXPECT_FALSE(ParseLogLevel("loud", &level));
}

}  // namespace
}  // namespace utilityd::server
