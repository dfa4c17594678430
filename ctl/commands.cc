#include "ctl/commands.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "ctl/bench.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "utilityd/client/client.h"
#include "utilityd/codec/decide_codec.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

constexpr int kOk = 0;
constexpr int kInvalid = 1;
constexpr int kUsage = 2;

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

std::string Usage(const Command& c) {
  std::string s = absl::StrCat("usage: utilityctl ", c.name, " ", c.synopsis,
                               "\n\n", c.description, "\n");
  if (!c.options.empty()) s += "\noptions:\n";
  for (const Option& o : c.options) {
    std::string flag = "--" + o.name;
    if (!o.implicit.empty()) {
      absl::StrAppend(&flag, "[=", o.value_name, "]");
    } else if (!o.value_name.empty()) {
      absl::StrAppend(&flag, " ", o.value_name);
    }
    absl::StrAppend(&s, absl::StrFormat("  %-28s %s\n", flag, o.help));
  }
  absl::StrAppend(&s,
                  absl::StrFormat("  %-28s %s\n", "--help", "show this help"));
  return s;
}

// Parses args; returns false (after printing why) on a usage error.
bool Parse(const Command& c, const std::vector<std::string>& args, Parsed* p,
           std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!absl::StartsWith(a, "--")) {
      p->positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_value = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    const Option* opt = nullptr;
    for (const Option& o : c.options) {
      if (o.name == name) opt = &o;
    }
    if (opt == nullptr) {
      err << "utilityctl " << c.name << ": unknown option --" << name << "\n\n"
          << Usage(c);
      return false;
    }
    if (opt->value_name.empty()) {
      if (has_value) {
        err << "utilityctl " << c.name << ": --" << name << " takes no value\n";
        return false;
      }
      p->values[name] = "true";
    } else if (has_value) {
      p->values[name] = value;
    } else if (!opt->implicit.empty()) {
      p->values[name] = opt->implicit;
    } else if (i + 1 < args.size()) {
      p->values[name] = args[++i];
    } else {
      err << "utilityctl " << c.name << ": --" << name << " needs a "
          << opt->value_name << "\n";
      return false;
    }
  }
  return true;
}

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(m, &json, options);
  return json;
}

// --- where decisions come from ----------------------------------------------

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

class OfflineSource final : public Source {
 public:
  explicit OfflineSource(loader::Catalog catalog)
      : catalog_(std::move(catalog)), loaded_at_(absl::Now()) {}
  absl::StatusOr<v1::DecideResponse> Decide(
      const v1::DecideRequest& request) override {
    if (absl::Status s = codec::CheckForm(request); !s.ok()) return s;
    v1::DecideResponse response;
    codec::DecideBatch(catalog_, request, &response);
    return response;
  }
  absl::StatusOr<v1::ListBehaviourSetsResponse> List() override {
    v1::ListBehaviourSetsResponse list;
    for (const auto& [name, set] : catalog_.sets()) {
      *list.add_behaviour_sets() = codec::Summarise(*set, loaded_at_);
    }
    return list;
  }
  absl::StatusOr<v1::GetBehaviourSetResponse> Get(
      const std::string& name) override {
    const auto set = catalog_.Find(name);
    if (set == nullptr) {
      std::vector<std::string> names;
      for (const auto& [n, _] : catalog_.sets()) names.push_back(n);
      return absl::NotFoundError(absl::StrCat(
          "name: ", engine::UnknownNameMessage("set", name, names)));
    }
    v1::GetBehaviourSetResponse got;
    *got.mutable_summary() = codec::Summarise(*set, loaded_at_);
    *got.mutable_behaviour_set() = set->definition;
    return got;
  }

 private:
  loader::Catalog catalog_;
  absl::Time loaded_at_;
};

class RemoteSource final : public Source {
 public:
  explicit RemoteSource(std::unique_ptr<client::Client> client)
      : client_(std::move(client)) {}
  absl::StatusOr<v1::DecideResponse> Decide(
      const v1::DecideRequest& request) override {
    return client_->Decide(request);
  }
  absl::StatusOr<v1::ListBehaviourSetsResponse> List() override {
    return client_->ListBehaviourSets();
  }
  absl::StatusOr<v1::GetBehaviourSetResponse> Get(
      const std::string& name) override {
    return client_->GetBehaviourSet(name);
  }

 private:
  std::unique_ptr<client::Client> client_;
};

// TLS flags of every command that talks to a server.
const std::vector<Option>& TlsOptions() {
  static const std::vector<Option> options = {
      {"tls_ca", "FILE", "PEM CA that signed the server (switches TLS on)"},
      {"tls_cert", "FILE", "PEM client certificate (mutual TLS)"},
      {"tls_key", "FILE", "PEM key of --tls_cert"},
      {"tls_server_name", "NAME", "name to check the server certificate for"},
  };
  return options;
}

std::vector<Option> WithTls(std::vector<Option> options) {
  options.insert(options.end(), TlsOptions().begin(), TlsOptions().end());
  return options;
}

client::ClientOptions RemoteOptions(const Parsed& p,
                                    const std::string& target) {
  client::ClientOptions options;
  options.target = target;
  options.deadline = absl::Seconds(10);
  options.tls_ca = p.get("tls_ca");
  options.tls_cert = p.get("tls_cert");
  options.tls_key = p.get("tls_key");
  options.tls_server_name = p.get("tls_server_name");
  return options;
}

// Opens --target when given, else loads --config_dir. Prints why on failure.
std::unique_ptr<Source> OpenSource(const Parsed& p, std::ostream& err) {
  if (p.has("target")) {
    absl::StatusOr<std::unique_ptr<client::Client>> c =
        client::Client::Connect(RemoteOptions(p, p.get("target")));
    if (!c.ok()) {
      err << c.status().message() << "\n";
      return nullptr;
    }
    return std::make_unique<RemoteSource>(*std::move(c));
  }
  const std::string dir = p.get("config_dir", "examples/behaviour_sets");
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog({dir});
  if (!catalog.ok()) {
    err << catalog.status().message() << "\n";
    return nullptr;
  }
  return std::make_unique<OfflineSource>(*std::move(catalog));
}

// Prints a failed call the way grpc_cli and friends do: code and message.
int Failed(const absl::Status& status, std::ostream& err) {
  err << absl::StatusCodeToString(status.code()) << ": " << status.message()
      << "\n";
  return kInvalid;
}

// --- validate --------------------------------------------------------------

int Validate(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.empty()) {
    err << "utilityctl validate: name at least one file or directory\n";
    return kUsage;
  }
  absl::StatusOr<std::vector<std::string>> files =
      loader::ListSetFiles(p.positional);
  if (!files.ok()) {
    err << files.status().message() << "\n";
    return kInvalid;
  }
  if (files->empty()) {
    err << "no behaviour-set files (*.yaml, *.yml, *.json) in "
        << absl::StrJoin(p.positional, ", ") << "\n";
    return kInvalid;
  }
  int problems = 0;
  std::map<std::string, std::string> seen;  // set name -> file
  for (const std::string& f : *files) {
    absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> set =
        loader::LoadSetFile(f);
    if (!set.ok()) {
      const std::string message(set.status().message());
      err << message << "\n";
      problems += 1 + static_cast<int>(
                          std::count(message.begin(), message.end(), '\n'));
      continue;
    }
    const loader::LoadedSet& s = **set;
    if (auto [it, fresh] = seen.emplace(s.name(), f); !fresh) {
      err << f << ": name: set \"" << s.name() << "\" is already defined in "
          << it->second << "\n";
      ++problems;
      continue;
    }
    const std::vector<std::string> failed = codec::CheckScenarios(s);
    for (const std::string& line : failed) err << line << "\n";
    problems += static_cast<int>(failed.size());
    if (failed.empty()) {
      out << absl::StrFormat(
          "ok  %s  %s@%s  (%d factors, %d actions, %d scenarios hold)\n", f,
          s.name(), s.revision(), s.definition.factors_size(),
          s.definition.actions_size(), s.definition.scenarios_size());
    }
  }
  if (problems > 0) {
    err << problems << (problems == 1 ? " problem\n" : " problems\n");
    return kInvalid;
  }
  return kOk;
}

// --- decide ----------------------------------------------------------------

std::string StatusName(v1::NodeStatus s) {
  switch (s) {
    case v1::NODE_STATUS_RUNNING:
      return "running";
    case v1::NODE_STATUS_SUCCESS:
      return "success";
    case v1::NODE_STATUS_FAILURE:
      return "failure";
    default:
      return "idle";
  }
}

std::string Leaves(const google::protobuf::RepeatedPtrField<v1::TreeLeaf>& ls,
                   bool mark_started) {
  std::vector<std::string> out;
  for (const v1::TreeLeaf& l : ls) {
    std::string s = l.action();
    if (!l.target_id().empty()) absl::StrAppend(&s, "@", l.target_id());
    if (mark_started && l.started()) absl::StrAppend(&s, " (starts)");
    out.push_back(s);
  }
  return out.empty() ? "nothing" : absl::StrJoin(out, ", ");
}

// A tree tick: the leaves to run and to stop, the root's status, and (at
// explain top and full) the path ticked with each utility node's choice.
void PrintTick(const v1::Decision& d, std::ostream& out) {
  out << "  run " << Leaves(d.run_leaves(), true);
  if (!d.halted_leaves().empty()) {
    out << "; halt " << Leaves(d.halted_leaves(), false);
  }
  out << "; root " << StatusName(d.tree_status());
  if (!d.tree_reset().empty()) out << "; state reset: " << d.tree_reset();
  out << absl::StrFormat("; state %d bytes\n", d.tree_state().size());
  for (const v1::TreeNodeTrace& n : d.tree_path()) {
    out << "    " << (n.name().empty() ? n.kind() : n.name()) << " ("
        << n.kind() << ") " << StatusName(n.status());
    if (n.kind() == "condition") out << absl::StrFormat(" %.3f", n.value());
    if (n.has_utility()) {
      const v1::Explanation& x = n.utility();
      if (!x.summary().empty()) {
        out << "  " << x.summary();
      } else if (!x.runner_up_action().empty()) {
        out << absl::StrFormat("  runner-up %s %.3f (margin %.3f)",
                               x.runner_up_action(), x.runner_up_score(),
                               x.margin());
      }
    }
    out << "\n";
  }
}

// One direction of a factor's sensitivity: "31.5 (-48.5) -> flee", or
// "none down to 0".
std::string CrossingText(const v1::FactorSensitivity& s, bool above) {
  const bool found = above ? s.has_above() : s.has_below();
  if (!found) {
    return absl::StrFormat("none %s %g", above ? "up to" : "down to",
                           above ? s.range_max() : s.range_min());
  }
  const v1::Crossing& c = above ? s.above() : s.below();
  std::string what = c.action().empty() ? "(no action)" : c.action();
  if (!c.target_id().empty()) absl::StrAppend(&what, "@", c.target_id());
  return absl::StrFormat("%.9g (%+.6g) -> %s", c.value(), c.change(), what);
}

// What coordination did: the units held, the denial, what was released.
void PrintCoordination(const v1::Decision& d, std::ostream& out) {
  if (!d.has_coordination()) return;
  const v1::Coordination& c = d.coordination();
  auto pool = [](const v1::ResourceGrant& g) {
    return g.target_id().empty()
               ? g.resource()
               : absl::StrCat(g.resource(), " on ", g.target_id());
  };
  for (const v1::ResourceGrant& g : c.granted()) {
    out << "  holds " << pool(g) << (g.kept() ? " (kept)" : " (granted)")
        << "\n";
  }
  if (c.has_denied()) out << "  " << c.denied().message() << "\n";
  for (const v1::ResourceGrant& g : c.released()) {
    out << "  released " << pool(g);
    if (!g.preempted_by().empty())
      out << " (taken by " << g.preempted_by() << ")";
    out << "\n";
  }
}

// What would change the decision, one line per factor.
void PrintSensitivity(const v1::Decision& d, std::ostream& out) {
  if (d.sensitivity().empty()) return;
  out << absl::StrFormat("  %-22s %12s  %-40s %s\n", "WHAT WOULD CHANGE IT",
                         "VALUE", "BELOW", "ABOVE");
  for (const v1::FactorSensitivity& s : d.sensitivity()) {
    std::string name = s.factor();
    if (!s.target_id().empty()) name = absl::StrCat(s.target_id(), ".", name);
    out << absl::StrFormat("  %-22s %12s  %-40s %s\n", name,
                           absl::StrFormat("%g %s", s.value(), s.unit()),
                           CrossingText(s, false), CrossingText(s, true));
  }
}

void PrintTable(const v1::DecideRequest& req, const v1::DecideResponse& resp,
                std::ostream& out) {
  for (int i = 0; i < resp.decisions_size(); ++i) {
    const v1::Decision& d = resp.decisions(i);
    const v1::AgentSnapshot& agent = req.agents(i);
    if (i > 0) out << "\n";
    if (d.has_error()) {
      out << absl::StrFormat("%s  error %s: %s\n", d.agent_id(),
                             v1::ErrorCode_Name(d.error().code()),
                             d.error().message());
      continue;
    }
    if (d.tree_status() != v1::NODE_STATUS_UNSPECIFIED) {
      out << absl::StrFormat("%s  %s@%s  t=%g\n", d.agent_id(),
                             agent.behaviour_set(), d.revision(),
                             agent.game_time());
      PrintTick(d, out);
      continue;
    }
    std::string chosen = d.action().empty() ? "(no action)" : d.action();
    if (!d.target_id().empty()) absl::StrAppend(&chosen, "@", d.target_id());
    out << absl::StrFormat("%s  %s@%s  -> %s %.3f", d.agent_id(),
                           agent.behaviour_set(), d.revision(), chosen,
                           d.score());
    if (d.fallback()) out << "  (fallback)";
    if (d.switched() && !agent.current_action().empty()) {
      out << "  (switched from " << agent.current_action() << ")";
    }
    out << "\n";
    PrintCoordination(d, out);
    PrintSensitivity(d, out);
    if (!d.has_explanation()) continue;
    const v1::Explanation& x = d.explanation();
    out << "  strategy " << x.strategy() << ", rank " << x.rank();
    if (!x.runner_up_action().empty()) {
      std::string runner = x.runner_up_action();
      if (!x.runner_up_target().empty()) {
        absl::StrAppend(&runner, "@", x.runner_up_target());
      }
      out << absl::StrFormat(", runner-up %s %.3f (margin %.3f)", runner,
                             x.runner_up_score(), x.margin());
    }
    if (x.draw() > 0) out << absl::StrFormat(", draw %.4f", x.draw());
    out << "\n";
    if (x.actions().empty()) continue;
    out << absl::StrFormat("  %-2s%-20s %-10s %7s %7s %7s %6s %6s %6s\n", "",
                           "ACTION", "TARGET", "SCORE", "COMBINE", "COMPENS",
                           "WEIGHT", "COOL", "BONUS");
    for (const v1::ActionScore& a : x.actions()) {
      const bool winner =
          a.action() == d.action() && a.target_id() == d.target_id();
      std::string status;
      if (a.vetoed()) {
        status = absl::StrCat("  vetoed by ", a.vetoed_by());
      } else if (!a.eligible()) {
        status = "  not eligible";
      }
      if (a.probability() > 0) {
        absl::StrAppend(&status, absl::StrFormat("  p=%.3f", a.probability()));
      }
      out << absl::StrFormat(
          "  %-2s%-20s %-10s %7.3f %7.3f %7.3f %6.2f %6.2f %6.2f%s\n",
          winner ? "*" : "", a.action(), a.target_id(), a.score(),
          a.aggregate(), a.compensated(), a.weight(), a.cooldown_factor(),
          a.commitment_factor(), status);
      for (const v1::ConsiderationScore& c : a.considerations()) {
        if (c.invalid_input()) {
          out << absl::StrFormat("      %-20s %-16s raw %-9g INVALID INPUT\n",
                                 c.consideration(), c.factor(), c.raw());
          continue;
        }
        out << absl::StrFormat(
            "      %-20s %-16s raw %-9g norm %.3f  curve %.3f  out %.3f  "
            "contrib %.3f\n",
            c.consideration(), c.factor(), c.raw(), c.normalised(), c.curved(),
            c.output(), c.contribution());
      }
    }
    out << "  " << x.summary() << "\n";
  }
}

// Reads --explain into the request; false (with a message) when invalid.
bool SetExplain(const Parsed& p, v1::DecideRequest* request,
                std::ostream& err) {
  if (!p.has("explain")) return true;
  const std::string level = p.get("explain");
  if (level == "none") {
    request->set_explain(v1::EXPLAIN_NONE);
  } else if (level == "top") {
    request->set_explain(v1::EXPLAIN_TOP);
  } else if (level == "full") {
    request->set_explain(v1::EXPLAIN_FULL);
  } else {
    err << "--explain: expected none, top or full, got \"" << level << "\"\n";
    return false;
  }
  return true;
}

// A tree set's scenarios, tick by tick: each tick's request carries the
// state the previous answer returned, as a game server's would.
int DecideTreeScenarios(const Parsed& p, Source& source,
                        const v1::BehaviourSet& set, std::ostream& out,
                        std::ostream& err) {
  const std::string format = p.get("format", "json");
  if (format != "json" && format != "table") {
    err << "--format: expected json or table, got \"" << format << "\"\n";
    return kUsage;
  }
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> loaded =
      loader::LoadSetProto(set, set.name());
  if (!loaded.ok()) return Failed(loaded.status(), err);
  const std::string wanted = p.get("scenario");
  int shown = 0;
  std::vector<std::string> json;
  for (const v1::Scenario& scenario : set.scenarios()) {
    if (!wanted.empty() && !absl::EqualsIgnoreCase(scenario.name(), wanted)) {
      continue;
    }
    ++shown;
    if (format == "table") out << scenario.name() << "\n";
    v1::AgentSnapshot agent = codec::ScenarioSnapshot(set.name(), scenario);
    std::vector<v1::TreeStep> steps(scenario.ticks().begin(),
                                    scenario.ticks().end());
    if (steps.empty()) steps.emplace_back();  // one tick of the scenario
    std::string state;
    for (const v1::TreeStep& step : steps) {
      if (absl::Status s = codec::ApplyTreeStep(**loaded, step, state, &agent);
          !s.ok()) {
        return Failed(s, err);
      }
      v1::DecideRequest request;
      request.set_explain(format == "table" ? v1::EXPLAIN_TOP
                                            : v1::EXPLAIN_NONE);
      if (!SetExplain(p, &request, err)) return kUsage;
      *request.add_agents() = agent;
      absl::StatusOr<v1::DecideResponse> response = source.Decide(request);
      if (!response.ok()) return Failed(response.status(), err);
      if (format == "json") {
        json.push_back(ToJson(*response));
      } else {
        PrintTable(request, *response, out);
      }
      state = response->decisions(0).tree_state();
    }
  }
  if (shown == 0) {
    err << "--scenario: no scenario \"" << wanted << "\" in " << set.name()
        << "\n";
    return kInvalid;
  }
  if (format == "json") out << "[" << absl::StrJoin(json, ",\n") << "]\n";
  return kOk;
}

int Decide(const Parsed& p, std::ostream& out, std::ostream& err) {
  std::unique_ptr<Source> source = OpenSource(p, err);
  if (source == nullptr) return kInvalid;
  v1::DecideRequest request;
  if (p.has("input")) {
    std::string text;
    if (!ReadFile(p.get("input"), &text)) {
      err << p.get("input") << ": cannot be read\n";
      return kInvalid;
    }
    if (absl::Status s =
            loader::ReadMessageOrError(text, p.get("input"), &request);
        !s.ok()) {
      err << s.message() << "\n";
      return kInvalid;
    }
  } else if (p.has("set")) {
    absl::StatusOr<v1::GetBehaviourSetResponse> got = source->Get(p.get("set"));
    if (!got.ok()) return Failed(got.status(), err);
    const v1::BehaviourSet& set = got->behaviour_set();
    if (set.has_tree()) return DecideTreeScenarios(p, *source, set, out, err);
    const std::string wanted = p.get("scenario");
    for (const v1::Scenario& s : set.scenarios()) {
      if (wanted.empty() || absl::EqualsIgnoreCase(s.name(), wanted)) {
        *request.add_agents() = codec::ScenarioSnapshot(set.name(), s);
      }
    }
    if (request.agents().empty()) {
      std::vector<std::string> names;
      for (const v1::Scenario& s : set.scenarios()) {
        names.push_back(absl::StrCat("\"", s.name(), "\""));
      }
      err << "--scenario: no scenario \"" << wanted << "\" in " << set.name()
          << " (scenarios: " << absl::StrJoin(names, ", ") << ")\n";
      return kInvalid;
    }
  } else {
    err << "utilityctl decide: give --input FILE, or --set NAME [--scenario "
           "NAME]\n";
    return kUsage;
  }
  if (!SetExplain(p, &request, err)) return kUsage;
  if (p.has("sensitivity")) request.set_sensitivity(true);
  const std::string format = p.get("format", "json");
  if (format != "json" && format != "table") {
    err << "--format: expected json or table, got \"" << format << "\"\n";
    return kUsage;
  }
  absl::StatusOr<v1::DecideResponse> response = source->Decide(request);
  if (!response.ok()) return Failed(response.status(), err);
  if (format == "json") {
    out << ToJson(*response) << "\n";
  } else {
    PrintTable(request, *response, out);
  }
  return kOk;
}

// --- sets and get -----------------------------------------------------------

int Sets(const Parsed& p, std::ostream& out, std::ostream& err) {
  const std::string format = p.get("format", "table");
  if (format != "json" && format != "table") {
    err << "--format: expected json or table, got \"" << format << "\"\n";
    return kUsage;
  }
  std::unique_ptr<Source> source = OpenSource(p, err);
  if (source == nullptr) return kInvalid;
  absl::StatusOr<v1::ListBehaviourSetsResponse> list = source->List();
  if (!list.ok()) return Failed(list.status(), err);
  if (format == "json") {
    out << ToJson(*list) << "\n";
    return kOk;
  }
  out << absl::StrFormat("%-20s %-16s %7s %7s  %s\n", "NAME", "REVISION",
                         "FACTORS", "ACTIONS", "FACTOR ORDER");
  for (const v1::BehaviourSetSummary& s : list->behaviour_sets()) {
    out << absl::StrFormat("%-20s %-16s %7d %7d  %s\n", s.name(), s.revision(),
                           s.factors_size(), s.actions_size(),
                           absl::StrJoin(s.factors(), ","));
  }
  return kOk;
}

int Get(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.size() != 1) {
    err << "utilityctl get: name exactly one behaviour set\n";
    return kUsage;
  }
  std::unique_ptr<Source> source = OpenSource(p, err);
  if (source == nullptr) return kInvalid;
  absl::StatusOr<v1::GetBehaviourSetResponse> got =
      source->Get(p.positional[0]);
  if (!got.ok()) return Failed(got.status(), err);
  out << ToJson(*got) << "\n";
  return kOk;
}

// --- health ------------------------------------------------------------------

// Asks a server's grpc.health.v1 service; exit 0 only when SERVING (for a
// container HEALTHCHECK or a script).
int Health(const Parsed& p, std::ostream& out, std::ostream& err) {
  const client::ClientOptions options =
      RemoteOptions(p, p.get("target", "localhost:50051"));
  absl::StatusOr<std::string> resolved = client::ResolveTarget(options.target);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      client::ChannelCredentials(options);
  if (!resolved.ok() || !credentials.ok()) {
    err << (resolved.ok() ? credentials.status() : resolved.status()).message()
        << "\n";
    return kUsage;
  }
  grpc::ChannelArguments args;
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateCustomChannel(*resolved, *credentials, args));
  grpc::ClientContext context;
  absl::Duration timeout = absl::Seconds(3);
  if (p.has("timeout") && !absl::ParseDuration(p.get("timeout"), &timeout)) {
    err << "--timeout: expected a duration such as 3s\n";
    return kUsage;
  }
  context.set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(p.get("service"));
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status s = stub->Check(&context, request, &response);
  if (!s.ok()) {
    return Failed(client::FromGrpcStatus(s), err);
  }
  out << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
             response.status())
      << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING
             ? kOk
             : kInvalid;
}

// --- log ---------------------------------------------------------------------

// One decision-log line for humans:
//   2026-11-30T06:58:00.123Z  arena_mage@88030940  mage-1 -> recharge 0.992
//     (switched from attack)  margin 0.782
//       *recharge 0.99 [charges_missing 1.00→1.00, ...] | attack@goblin-1 ...
std::string FormatLogEntry(const v1::DecisionLogEntry& e) {
  const absl::Time t = absl::FromUnixSeconds(e.time().seconds()) +
                       absl::Nanoseconds(e.time().nanos());
  std::string chosen = e.action().empty() ? "(no action)" : e.action();
  if (!e.target_id().empty()) absl::StrAppend(&chosen, "@", e.target_id());
  std::string line = absl::StrFormat(
      "%s  %s@%s  %s -> %s %.3f",
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone()),
      e.behaviour_set(), e.revision().substr(0, 8), e.agent_id(), chosen,
      e.score());
  if (e.switched() && !e.current_action().empty()) {
    absl::StrAppend(&line, "  (switched from ", e.current_action(), ")");
  }
  if (e.runner_up_score() > 0) {
    absl::StrAppend(&line, absl::StrFormat("  margin %.3f",
                                           e.score() - e.runner_up_score()));
  }
  if (!e.explanation().summary().empty()) {
    absl::StrAppend(&line, "\n    ", e.explanation().summary());
  }
  if (e.tree_status() != v1::NODE_STATUS_UNSPECIFIED) {
    absl::StrAppend(&line, absl::StrFormat("\n    t=%g run ", e.game_time()),
                    Leaves(e.run_leaves(), true));
    if (!e.halted_leaves().empty()) {
      absl::StrAppend(&line, "; halt ", Leaves(e.halted_leaves(), false));
    }
    absl::StrAppend(&line, "; root ", StatusName(e.tree_status()));
    if (!e.tree_reset().empty()) {
      absl::StrAppend(&line, "; state reset: ", e.tree_reset());
    }
  }
  return line;
}

int Log(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.size() > 1) {
    err << "utilityctl log: name at most one file (default: standard input)\n";
    return kUsage;
  }
  absl::StatusOr<std::unique_ptr<replay::LogReader>> reader =
      replay::LogReader::Open(p.positional.empty() ? "-" : p.positional[0]);
  if (!reader.ok()) {
    err << reader.status().message() << "\n";
    return kInvalid;
  }
  const bool sampled_only = p.has("sampled");
  int bad = 0;
  v1::DecisionLogEntry e;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(&e);
    if (!more.ok()) {
      err << more.status().message() << "\n";
      ++bad;
      continue;  // a binary log's error ends it: Next returns false next
    }
    if (!*more) break;
    if (sampled_only && !e.has_explanation() &&
        e.tree_status() == v1::NODE_STATUS_UNSPECIFIED) {
      continue;
    }
    out << FormatLogEntry(e) << "\n";
  }
  return bad == 0 ? kOk : kInvalid;
}

// Loads a directory of behaviour sets for replay; prints why on failure.
std::optional<loader::Catalog> ReplaySets(const std::string& what,
                                          const std::string& dir,
                                          std::ostream& err) {
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog({dir});
  if (!catalog.ok()) {
    err << "utilityctl replay: --" << what << " " << dir << ": "
        << catalog.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(catalog);
}

int Replay(const Parsed& p, std::ostream& out, std::ostream& err) {
  std::vector<std::string> logs = p.positional;
  if (p.has("log")) logs.insert(logs.begin(), p.get("log"));
  if (logs.empty() || !p.has("candidate")) {
    err << "utilityctl replay: needs --log FILE and --candidate DIR\n";
    return kUsage;
  }
  const std::string format = p.get("format", "table");
  if (format != "table" && format != "json") {
    err << "utilityctl replay: --format: expected table or json\n";
    return kUsage;
  }
  double max_churn = -1;
  if (p.has("max_churn") &&
      (!absl::SimpleAtod(p.get("max_churn"), &max_churn) || max_churn < 0 ||
       max_churn > 1)) {
    err << "utilityctl replay: --max_churn: expected a fraction within 0..1, "
           "e.g. 0.05\n";
    return kUsage;
  }
  replay::ReplayOptions options;
  if (p.has("examples") &&
      (!absl::SimpleAtoi(p.get("examples"), &options.examples) ||
       options.examples < 0)) {
    err << "utilityctl replay: --examples: expected a whole number >= 0\n";
    return kUsage;
  }
  std::optional<loader::Catalog> candidate =
      ReplaySets("candidate", p.get("candidate"), err);
  if (!candidate) return kInvalid;
  std::optional<loader::Catalog> baseline;
  if (p.has("baseline")) {
    baseline = ReplaySets("baseline", p.get("baseline"), err);
    if (!baseline) return kInvalid;
  }
  options.candidate = replay::InCatalog(*candidate);
  if (baseline) options.baseline = replay::InCatalog(*baseline);
  options.baseline_name = p.get("baseline");
  replay::Replayer replayer(options);
  int bad = 0;
  for (const std::string& path : logs) {
    // The replay goes on past a bad JSON line and reports each one; a bad
    // binary entry ends its file.
    absl::StatusOr<std::unique_ptr<replay::LogReader>> reader =
        replay::LogReader::Open(path);
    if (!reader.ok()) {
      err << "utilityctl replay: " << reader.status().message() << "\n";
      return kInvalid;
    }
    while (true) {
      v1::DecisionLogEntry* e = replayer.NewEntry();
      absl::StatusOr<bool> more = (*reader)->Next(e);
      if (!more.ok()) {
        err << more.status().message() << "\n";
        ++bad;
        continue;
      }
      if (!*more) break;
      replayer.Add(e);
    }
  }
  const v1::ReplayReport report = replayer.Report();
  if (format == "json") {
    google::protobuf::util::JsonPrintOptions json;
    json.preserve_proto_field_names = true;
    json.always_print_primitive_fields = true;
    json.add_whitespace = true;
    std::string text;
    (void)google::protobuf::util::MessageToJsonString(report, &text, json);
    out << text;
  } else {
    out << replay::FormatReport(report);
  }
  if (bad > 0) {
    err << "utilityctl replay: " << bad << " log entries could not be read\n";
    return kInvalid;
  }
  if (max_churn >= 0 && report.churn() > max_churn) {
    err << absl::StrFormat(
        "utilityctl replay: churn %.4f is above --max_churn %.4f\n",
        report.churn(), max_churn);
    return kInvalid;
  }
  return kOk;
}

int Bench(const Parsed& p, std::ostream& out, std::ostream& err) {
  BenchOptions o;
  o.target = p.get("target", o.target);
  o.admin = p.get("admin");
  o.set = p.get("set", o.set);
  o.unary = p.has("unary");
  o.json = p.get("format", "table") == "json";
  auto integer = [&](const char* name, int* v) {
    if (!p.has(name)) return true;
    if (absl::SimpleAtoi(p.get(name), v)) return true;
    err << "utilityctl bench: --" << name << ": expected a whole number\n";
    return false;
  };
  auto duration = [&](const char* name, absl::Duration* v) {
    if (!p.has(name)) return true;
    if (absl::ParseDuration(p.get(name), v)) return true;
    err << "utilityctl bench: --" << name
        << ": expected a duration such as 10s\n";
    return false;
  };
  if (!integer("batch", &o.batch) || !integer("streams", &o.streams) ||
      !integer("connections", &o.connections) ||
      !integer("in_flight", &o.in_flight) ||
      !integer("idle_streams", &o.idle_streams) ||
      !duration("duration", &o.duration) || !duration("warmup", &o.warmup)) {
    return kUsage;
  }
  if (p.has("rate") && !absl::SimpleAtod(p.get("rate"), &o.rate)) {
    err << "utilityctl bench: --rate: expected batches per second\n";
    return kUsage;
  }
  const std::string explain = p.get("explain", "none");
  if (explain == "none") {
    o.explain = v1::EXPLAIN_NONE;
  } else if (explain == "top") {
    o.explain = v1::EXPLAIN_TOP;
  } else if (explain == "full") {
    o.explain = v1::EXPLAIN_FULL;
  } else {
    err << "utilityctl bench: --explain: expected none, top or full\n";
    return kUsage;
  }
  const std::string form = p.get("form", "full");
  if (form != "full" && form != "compact") {
    err << "utilityctl bench: --form: expected full or compact\n";
    return kUsage;
  }
  o.compact = form == "compact";
  return RunBench(o, out, err);
}

std::vector<Command> Commands() {
  return {
      {.name = "validate",
       .synopsis = "PATH...",
       .description =
           "Validates behaviour-set files (YAML or JSON) and every such file "
           "in the\ndirectories given. Reports every problem with file, line "
           "and field path,\nand checks that each scenario's expected action "
           "wins. Exits 1 on any problem.",
       .run = Validate},
      {.name = "decide",
       .synopsis =
           "[--config_dir DIR | --target HOST:PORT]\n"
           "                        (--input FILE | --set NAME [--scenario "
           "NAME])\n"
           "                        [--explain[=none|top|full]] "
           "[--format json|table]",
       .description =
           "Decides offline, exactly as the service does, or asks a server "
           "(--target). --input is a "
           "DecideRequest in\nprotobuf JSON (or YAML): agents with "
           "behaviour_set, factors or named_factors,\ncurrent_action, "
           "seconds_since_action, targets, seed, personality. --set runs\nthe "
           "set's scenarios instead (all, or the one --scenario names). JSON "
           "output\nis the DecideResponse message in protobuf JSON.",
       .options = WithTls(
           {{"config_dir", "DIR",
             "behaviour sets to load (default examples/behaviour_sets)"},
            {"target", "HOST:PORT",
             "ask a running utilityd instead of loading --config_dir"},
            {"input", "FILE", "DecideRequest in JSON or YAML"},
            {"set", "NAME", "decide the scenarios of this set"},
            {"scenario", "NAME", "only this scenario (case-insensitive)"},
            {"explain", "LEVEL",
             "none, top or full (bare --explain means full); overrides the "
             "request",
             "full"},
            {"sensitivity", "",
             "per factor, the nearest values that change the decision"},
            {"format", "FORMAT", "json (default) or table"}}),
       .run = Decide},
      {.name = "sets",
       .synopsis =
           "[--config_dir DIR | --target HOST:PORT] [--format table|json]",
       .description =
           "Lists behaviour sets with their revisions and factor order (the "
           "packed order\nclients send values in), from a config directory or "
           "a running server.",
       .options = WithTls(
           {{"config_dir", "DIR",
             "behaviour sets to load (default examples/behaviour_sets)"},
            {"target", "HOST:PORT", "ask a running utilityd"},
            {"format", "FORMAT", "table (default) or json"}}),
       .run = Sets},
      {.name = "get",
       .synopsis = "NAME [--config_dir DIR | --target HOST:PORT]",
       .description =
           "Prints one behaviour set's full definition, every default written "
           "out, as\nGetBehaviourSetResponse JSON.",
       .options = WithTls(
           {{"config_dir", "DIR",
             "behaviour sets to load (default examples/behaviour_sets)"},
            {"target", "HOST:PORT", "ask a running utilityd"}}),
       .run = Get},
      {.name = "health",
       .synopsis = "[--target HOST:PORT] [--service NAME] [--timeout 3s]",
       .description =
           "Checks a server's gRPC health. Prints SERVING or NOT_SERVING; "
           "exits 0 only\nwhen serving (for container health checks).",
       .options = WithTls(
           {{"target", "HOST:PORT", "server (default localhost:50051)"},
            {"service", "NAME",
             "service to ask about (default: the whole server)"},
            {"timeout", "DURATION", "give up after this long (default 3s)"}}),
       .run = Health},
      {.name = "bench",
       .synopsis = "[--target HOST:PORT] [--admin HOST:PORT] [--set NAME] "
                   "[--batch N]\n"
                   "                        [--streams N] [--connections N] "
                   "[--in_flight N] [--rate R]\n"
                   "                        [--duration 10s] [--warmup 2s] "
                   "[--unary] [--form full|compact]\n"
                   "                        [--format table|json]",
       .description =
           "Load-tests a running utilityd. Sends one batch of agents with "
           "random factors\nover DecideStream (or unary Decide) as fast as "
           "it is answered, or at --rate\nbatches per second, and reports "
           "decisions/s, batches/s, the round trip\n(p50, p90, p99, "
           "p99.9) and the answer's bytes per decision; with --admin, also "
           "the\nserver's CPU and memory.",
       .options = {{"target", "HOST:PORT", "server (default 127.0.0.1:50051)"},
                   {"admin", "HOST:PORT",
                    "the server's admin endpoint, for its CPU and memory"},
                   {"set", "NAME", "behaviour set (default arena_mage)"},
                   {"batch", "N", "agents per batch (default 256)"},
                   {"streams", "N",
                    "streams, or concurrent callers with --unary (default 4)"},
                   {"connections", "N", "connections (default 2)"},
                   {"in_flight", "N",
                    "unanswered batches per stream (default 2)"},
                   {"rate", "R",
                    "batches per second over all streams (default: max)"},
                   {"duration", "DURATION", "measured time (default 10s)"},
                   {"warmup", "DURATION", "time before measuring (default 2s)"},
                   {"explain", "LEVEL", "none (default), top or full"},
                   {"form", "FORM",
                    "full (default) or compact: the decisions' form "
                    "(docs/SERVICE.md)"},
                   {"unary", "", "unary Decide calls instead of streams"},
                   {"idle_streams", "N",
                    "hold N idle streams for --duration and report the "
                    "server's memory per stream (needs --admin)"},
                   {"format", "FORMAT", "table (default) or json"}},
       .run = Bench},
      {.name = "log",
       .synopsis = "[FILE] [--sampled]",
       .description =
           "Prints a decision log (utilityd --decision_log, JSON lines or "
           "binary) in the\none-line human format, with the score breakdown "
           "of sampled decisions. Reads\nstandard input when FILE is absent "
           "or -.",
       .options = {{"sampled", "", "only decisions that carry a breakdown"}},
       .run = Log},
      {.name = "replay",
       .synopsis = "--log FILE... --candidate DIR [--baseline DIR]\n"
                   "                        [--format table|json] "
                   "[--max_churn F] [--examples N]",
       .description =
           "Decides every logged snapshot again with the candidate sets and "
           "reports what\nchanges against the baseline: the logged decisions, "
           "or the same snapshots\ndecided with the --baseline sets. Reports "
           "churn (the share of decisions whose\naction or target changes) "
           "overall, per set and per action, the from -> to\nmatrix, newly "
           "vetoed and newly winning actions, the winner's score change,\n"
           "the margins of flips, and examples with both breakdowns. Logs are "
           "JSON lines or\nbinary (utilityd --decision_log_format); more "
           "files may follow --log FILE.\nWith --max_churn, exits 1 when churn "
           "is above it (a CI gate). See docs/REPLAY.md.",
       .options = {{"log", "FILE", "decision log to replay (more may follow)"},
                   {"candidate", "DIR", "behaviour sets to try"},
                   {"baseline", "DIR",
                    "behaviour sets to compare with (default: the logged "
                    "decisions)"},
                   {"format", "FORMAT", "table (default) or json"},
                   {"max_churn", "F",
                    "exit 1 when churn is above F (0..1, e.g. 0.05)"},
                   {"examples", "N", "flipped decisions to show (default 3)"}},
       .run = Replay},
  };
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
