// The SDK headers' examples compile warning-free (this binary is built with
// -Wall -Wextra -Werror from them); here, that none was lost on the way:
// every header that announces an example has one in the build.
#include "tests/client_sdk/header_examples.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace utilityd::client::examples {
namespace {

TEST(HeaderExamplesTest, EveryAnnouncedExampleIsCompiled) {
  int announced = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           "client_sdk/include/utilityd/client")) {
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      if (line.find("// Example (compiled by") == 0) ++announced;
    }
  }
  EXPECT_GE(announced, 4);
  EXPECT_EQ(Count(), announced);
}

}  // namespace
}  // namespace utilityd::client::examples
