#include "ctl/commands.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ctl/cli.h"

namespace utilityd::ctl {

namespace {

// Every command, in the order the main usage lists them; each is defined in
// its own file.
std::vector<Command> Commands() {
  return {ValidateCommand(), PackagesCommand(), DecideCommand(),
          SetsCommand(),     GetCommand(),      HealthCommand(),
          BenchCommand(),    LogCommand(),      ReplayCommand(),
          AnalyseCommand(),  TuneCommand(),     ImportBtCommand(),
          ExportBtCommand()};
}

std::string MainUsage() {
  std::string s =
      "usage: utilityctl COMMAND [options]\n\n"
      "utilityd's command-line tool.\n\ncommands:\n";
  for (const Command& c : Commands()) {
    const std::string first = c.description.substr(0, c.description.find('.'));
    absl::StrAppend(&s, absl::StrFormat("  %-10s %s\n", c.name, first));
  }
  s += "\nRun `utilityctl COMMAND --help` for a command's options.\n";
  return s;
}

}  // namespace

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const Command& c : Commands()) names.push_back(c.name);
  return names;
}

int RunUtilityctl(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err) {
  if (args.empty()) {
    err << MainUsage();
    return kUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << MainUsage();
    return kOk;
  }
  for (const Command& c : Commands()) {
    if (c.name != args[0]) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const std::string& a : rest) {
      if (a == "--help" || a == "-h") {
        out << Usage(c);
        return kOk;
      }
    }
    Parsed parsed;
    if (!Parse(c, rest, &parsed, err)) return kUsage;
    return c.run(parsed, out, err);
  }
  err << "utilityctl: unknown command \"" << args[0] << "\"\n\n" << MainUsage();
  return kUsage;
}

}  // namespace utilityd::ctl
