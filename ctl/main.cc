// utilityctl: validate behaviour sets and decide offline. See
// `utilityctl --help`.
#include <iostream>
#include <string>
#include <vector>

#include "ctl/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return utilityd::ctl::RunUtilityctl(args, std::cout, std::cerr);
}
