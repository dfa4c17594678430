// utilityctl's commands, callable in-process (main.cc only forwards argv).
//
//   std::ostringstream out, err;
//   int code = RunUtilityctl({"validate", "examples/behaviour_sets"}, out,
//   err);
//
// Exit codes: 0 success, 1 the input is invalid (validation errors, a
// scenario that does not hold), 2 usage error.
#ifndef UTILITYD_CTL_COMMANDS_H_
#define UTILITYD_CTL_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace utilityd::ctl {

// Returns every command's name, in the order the main usage lists them.
[[nodiscard]] std::vector<std::string> CommandNames();

// Runs one utilityctl command line (without the program name).
[[nodiscard]] int RunUtilityctl(const std::vector<std::string>& args,
                                std::ostream& out, std::ostream& err);

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_COMMANDS_H_
