#include "server/src/log.h"

#include "gtest/gtest.h"

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

TEST(LogTest, ParsesLevels) {
  LogLevel level;
  EXPECT_TRUE(ParseLogLevel("warning", &level));
  EXPECT_EQ(level, LogLevel::kWarning);
  EXPECT_FALSE(ParseLogLevel("loud", &level));
}

}  // namespace
}  // namespace utilityd::server
