// Loads a behaviour set through the installed package, decides its
// scenarios, analyses it (utilityd::analysis, which links CLP when the
// package was built with it) and names a replay lookup, so every exported
// target is linked. Exits non-zero when anything is off.
#include <iostream>

#include "utilityd/analysis/analysis.h"
#include "utilityd/client/client.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/replay.h"

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
  auto analysed = utilityd::analysis::Analyse(**set, {});
  if (!analysed.ok()) {
    std::cerr << analysed.status() << "\n";
    return 1;
  }
  utilityd::replay::SetLookup lookup;  // links utilityd::replay's header
  // The client links, and a malformed target is its error, not a crash.
  if (utilityd::client::Client::Connect({.target = "127.0.0.1"}).ok()) {
    return 1;
  }
  std::cout << (*set)->name() << "@" << (*set)->revision() << " ok, "
            << analysed->actions_size() << " actions analysed\n";
  return failed.empty() ? 0 : 1;
}
