// What utilityctl's commands share: the exit codes, the option parser, the
// command table's entry, where decisions come from (a config directory or a
// server), and one factory per command, each in its own file (validate.cc,
// decide.cc, sets.cc, health.cc, log.cc, replay.cc, bench_command.cc,
// analyse.cc, tune.cc, bt_command.cc).
// Internal to ctl/.
#ifndef UTILITYD_CTL_CLI_H_
#define UTILITYD_CTL_CLI_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "utilityd/client/client.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::ctl {

// Exit codes: success, invalid input, usage error.
inline constexpr int kOk = 0;
inline constexpr int kInvalid = 1;
inline constexpr int kUsage = 2;

// A command-line option. Options without `value_name` are flags; options
// with an `implicit` value may be given bare (--explain) or with =value.
struct Option {
  std::string name;
  std::string value_name;
  std::string help;
  std::string implicit;
};

struct Parsed {
  absl::flat_hash_map<std::string, std::string> values;
  std::vector<std::string> positional;
  bool has(const std::string& name) const { return values.contains(name); }
  std::string get(const std::string& name, std::string fallback = "") const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
};

struct Command {
  std::string name;
  std::string synopsis;
  std::string description;
  std::vector<Option> options;
  std::function<int(const Parsed&, std::ostream&, std::ostream&)> run;
};

// Returns a command's --help text.
std::string Usage(const Command& c);
// Parses args; returns false (after printing why) on a usage error.
bool Parse(const Command& c, const std::vector<std::string>& args, Parsed* p,
           std::ostream& err);
// Reads a whole file; false when it cannot be read.
bool ReadFile(const std::string& path, std::string* text);
// --format: "table" (the default) or "json" into *format; false (after
// printing why, as `utilityctl <command>`) for anything else.
bool TableOrJson(const Parsed& p, const std::string& command,
                 std::string* format, std::ostream& err);
// A message in indented protobuf JSON with proto field names.
std::string ToJson(const google::protobuf::Message& m);
// Prints a failed call the way grpc_cli and friends do: code and message;
// returns kInvalid.
int Failed(const absl::Status& status, std::ostream& err);

// Offline (a config directory, scored in process) or remote (a utilityd
// server). Both answer with the same messages, so every command prints the
// same output either way.
class Source {
 public:
  virtual ~Source() = default;
  virtual absl::StatusOr<v1::DecideResponse> Decide(
      const v1::DecideRequest& request) = 0;
  virtual absl::StatusOr<v1::ListBehaviourSetsResponse> List() = 0;
  virtual absl::StatusOr<v1::GetBehaviourSetResponse> Get(
      const std::string& name) = 0;
};

// Adds the TLS flags of every command that talks to a server to `options`.
std::vector<Option> WithTls(std::vector<Option> options);
// The SDK's options for `target`, with p's TLS flags.
client::ClientOptions RemoteOptions(const Parsed& p, const std::string& target);
// Opens --target when given, else loads --config_dir. Prints why on failure.
std::unique_ptr<Source> OpenSource(const Parsed& p, std::ostream& err);

// Printing shared by decide and log (decide.cc): a node status's word, and
// a list of tree leaves ("nothing" when empty), marking those that start.
std::string StatusName(v1::NodeStatus s);
std::string Leaves(const google::protobuf::RepeatedPtrField<v1::TreeLeaf>& ls,
                   bool mark_started);

// The commands.
Command ValidateCommand();
Command PackagesCommand();
Command DecideCommand();
Command SetsCommand();
Command GetCommand();
Command HealthCommand();
Command BenchCommand();
Command LogCommand();
Command ReplayCommand();
Command AnalyseCommand();
Command TuneCommand();
Command ImportBtCommand();
Command ExportBtCommand();

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_CLI_H_
