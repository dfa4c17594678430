// utilityctl bench: the load generator's flags (the generator is bench.cc).
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
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

int Bench(const Parsed& p, std::ostream& out, std::ostream& err) {
  BenchOptions o;
  o.target = p.get("target", o.target);
  o.admin = p.get("admin");
  o.set = p.get("set", o.set);
  o.unary = p.has("unary");
  o.fixed_width_indices = p.has("fixed_width_indices");
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
  if (form == "full") {
    o.form = BenchOptions::Form::kFull;
  } else if (form == "compact") {
    o.form = BenchOptions::Form::kCompact;
  } else if (form == "columnar") {
    o.form = BenchOptions::Form::kColumnar;
  } else {
    err << "utilityctl bench: --form: expected full, compact or columnar\n";
    return kUsage;
  }
  return RunBench(o, out, err);
}

}  // namespace

Command BenchCommand() {
  return {
      .name = "bench",
      .synopsis =
          "[--target HOST:PORT] [--admin HOST:PORT] [--set NAME] "
          "[--batch N]\n"
          "                        [--streams N] [--connections N] "
          "[--in_flight N] [--rate R]\n"
          "                        [--duration 10s] [--warmup 2s] "
          "[--unary]\n"
          "                        [--form full|compact|columnar] "
          "[--fixed_width_indices]\n"
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
                   "full (default), compact, or columnar: one factor-major "
                   "block (docs/SERVICE.md)"},
                  {"fixed_width_indices", "",
                   "columnar: ask for the answer's indices in fixed-width "
                   "columns (docs/SERVICE.md)"},
                  {"unary", "", "unary Decide calls instead of streams"},
                  {"idle_streams", "N",
                   "hold N idle streams for --duration and report the "
                   "server's memory per stream (needs --admin)"},
                  {"format", "FORMAT", "table (default) or json"}},
      .run = Bench};
}

}  // namespace utilityd::ctl
