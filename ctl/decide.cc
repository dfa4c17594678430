// utilityctl decide: a request or a set's scenarios, offline or remote, as JSON
// or a table.
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
#include "ctl/cli.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "utilityd/client/client.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/codec/trees.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

// --- decide ----------------------------------------------------------------

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

}  // namespace

std::string StatusName(v1::NodeStatus s) {
  switch (s) {
    case v1::NODE_STATUS_RUNNING:
      return "running";
    case v1::NODE_STATUS_SUCCESS:
      return "success";
    case v1::NODE_STATUS_FAILURE:
      return "failure";
    case v1::NODE_STATUS_SKIPPED:
      return "skipped";
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

Command DecideCommand() {
  return {
      .name = "decide",
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
      .run = Decide};
}

}  // namespace utilityd::ctl
