// utilityctl run in process for the CLI's tests: its exit code and what it
// printed.
#ifndef UTILITYD_TESTS_CTL_RUN_UTILITYCTL_H_
#define UTILITYD_TESTS_CTL_RUN_UTILITYCTL_H_

#include <sstream>
#include <string>
#include <vector>

#include "ctl/commands.h"

namespace utilityd::ctl::test_util {

struct Result {
  int code;
  std::string out;
  std::string err;
};

inline Result Ctl(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunUtilityctl(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace utilityd::ctl::test_util

#endif  // UTILITYD_TESTS_CTL_RUN_UTILITYCTL_H_
