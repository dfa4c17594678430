// `utilityctl bench`: a load generator for a running utilityd.
//
// It asks the server for the behaviour set, builds one batch of agents with
// random packed factors (two targets each for per-target sets; in the
// columnar form one block of columns, without targets), serialises
// it once, and sends it over DecideStream (or unary Decide) from gRPC's
// callback API — no thread per stream, and no parsing of answers beyond a
// check of the first — so that on a shared machine the generator takes as
// little of the CPU as it can. It reports decisions/s, batches/s, the round
// trip of each batch (p50, p90, p99, p99.9), the size of an answer, and the
// server's CPU and resident size from its /metrics when --admin is given.
#ifndef UTILITYD_CTL_BENCH_H_
#define UTILITYD_CTL_BENCH_H_

#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::ctl {

struct BenchOptions {
  std::string target = "127.0.0.1:50051";
  // The server's admin endpoint (HOST:PORT) for its CPU and memory; empty:
  // not reported.
  std::string admin;
  std::string set = "arena_mage";
  int batch = 256;
  // Streams (or, with unary, concurrent calls), spread over `connections`.
  int streams = 4;
  int connections = 2;
  // Batches sent and not yet answered, per stream.
  int in_flight = 2;
  // Batches per second over all streams; 0: as fast as the server answers.
  double rate = 0;
  absl::Duration duration = absl::Seconds(10);
  absl::Duration warmup = absl::Seconds(2);
  bool unary = false;
  v1::Explain explain = v1::EXPLAIN_NONE;
  // How the batch travels: snapshots answered in the full or the compact
  // form, or one block of columns (docs/SERVICE.md, "Blocks") written with
  // the SDK's WriteBlock, factor-major as an ECS chunk holds them.
  enum class Form { kFull, kCompact, kColumnar };
  Form form = Form::kFull;
  // Columnar: the block asks for its answer's indices in fixed-width
  // columns (AgentBlock.fixed_width_indices).
  bool fixed_width_indices = false;
  // Print one line of JSON instead of the table.
  bool json = false;
  // Instead of load: open this many streams that send nothing, hold them
  // for `duration`, and report the server's resident size before and with
  // them (needs --admin).
  int idle_streams = 0;
};

// Runs the load and prints the report. 0 on success, 1 when the server
// could not be reached or answered with errors.
int RunBench(const BenchOptions& options, std::ostream& out, std::ostream& err);

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_BENCH_H_
