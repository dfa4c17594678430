// Loads a behaviour set through the installed package and decides one of its
// scenarios. Exits non-zero when anything is off.
#include <iostream>

#include "utilityd/codec/decide_codec.h"
#include "utilityd/loader/set_loader.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto set = utilityd::loader::LoadSetFile(argv[1]);
  if (!set.ok()) {
    std::cerr << set.status() << "\n";
    return 1;
  }
  const std::vector<std::string> failed =
      utilityd::codec::CheckScenarios(**set);
  for (const auto& f : failed) std::cerr << f << "\n";
  std::cout << (*set)->name() << "@" << (*set)->revision() << " ok\n";
  return failed.empty() ? 0 : 1;
}
