#include "ctl/bench.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "utilityd/base/sync.h"
#include "utilityd/client/block.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd::ctl {
namespace {

constexpr char kStreamMethod[] = "/utilityd.v1.DecisionService/DecideStream";
constexpr char kUnaryMethod[] = "/utilityd.v1.DecisionService/Decide";
using GenericStub =
    grpc::TemplatedGenericStub<grpc::ByteBuffer, grpc::ByteBuffer>;

int64_t NowNanos() { return absl::GetCurrentTimeNanos(); }

// What every load lane shares.
struct Run {
  grpc::ByteBuffer request;
  int batch = 0;
  int factors = 0;  // the set's, per agent
  BenchOptions::Form form = BenchOptions::Form::kFull;
  int in_flight = 1;
  int64_t measure_from = 0;  // ns; answers before it are warm-up
  int64_t stop_at = 0;
  int64_t interval = 0;  // ns between sends per lane; 0: no pacing
  std::atomic<int> errors{0};
  std::atomic<size_t> answer_bytes{0};  // of the first answer checked
  utilityd::Mutex mu;
  std::string first_error ABSL_GUARDED_BY(mu);

  void Fail(const std::string& what) {
    if (errors.fetch_add(1) == 0) {
      utilityd::MutexLock lock(&mu);
      first_error = what;
    }
  }
};

const char* FormName(BenchOptions::Form form) {
  switch (form) {
    case BenchOptions::Form::kCompact:
      return "compact";
    case BenchOptions::Form::kColumnar:
      return "columnar";
    case BenchOptions::Form::kFull:
      break;
  }
  return "full";
}

// What a failed agent or row says, if the answer has one.
std::string FirstAgentError(const v1::DecideResponse& response,
                            BenchOptions::Form form) {
  const google::protobuf::RepeatedPtrField<v1::IndexedDecision>* full = nullptr;
  switch (form) {
    case BenchOptions::Form::kFull:
      if (response.decisions(0).has_error()) {
        return response.decisions(0).error().message();
      }
      return "";
    case BenchOptions::Form::kCompact:
      full = &response.compact().full();
      break;
    case BenchOptions::Form::kColumnar:
      if (response.blocks(0).has_error()) {
        return response.blocks(0).error().message();
      }
      full = &response.blocks(0).full();
      break;
  }
  for (const v1::IndexedDecision& x : *full) {
    if (x.decision().has_error()) return x.decision().error().message();
  }
  return "";
}

// Checks one answer: the right number of decisions, in the form asked
// for, and no error; notes its size.
void CheckAnswer(Run* run, const grpc::ByteBuffer& bytes) {
  run->answer_bytes.store(bytes.Length());
  grpc::ByteBuffer copy(bytes);
  v1::DecideResponse response;
  if (!grpc::GenericDeserialize<grpc::ProtoBufferReader, v1::DecideResponse>(
           &copy, &response)
           .ok()) {
    run->Fail("an answer did not parse as a DecideResponse");
    return;
  }
  int got = response.decisions_size();
  if (run->form == BenchOptions::Form::kCompact) {
    got = response.compact().action_index_size();
  } else if (run->form == BenchOptions::Form::kColumnar) {
    // One row per flag, whichever index columns the block asked for.
    got = response.blocks_size() == 1
              ? static_cast<int>(response.blocks(0).flags().size())
              : -1;
  }
  if (response.has_error()) {
    run->Fail(absl::StrCat("the batch failed: ", response.error().message()));
  } else if (got != run->batch) {
    run->Fail(absl::StrCat("expected ", run->batch, " decisions in the ",
                           FormName(run->form), " form, got ",
                           got < 0 ? "no single block" : absl::StrCat(got)));
  } else if (std::string e = FirstAgentError(response, run->form); !e.empty()) {
    run->Fail(absl::StrCat("an agent failed: ", e));
  }
}

// Pacing: whether a lane may send at `now`, advancing its schedule. A lane
// that fell more than one interval behind starts again from now rather than
// bursting to catch up.
bool Due(int64_t now, int64_t interval, int64_t* next_due) {
  if (interval <= 0) return true;
  if (*next_due == 0) *next_due = now;
  if (now < *next_due) return false;
  *next_due += interval;
  if (*next_due < now - interval) *next_due = now;
  return true;
}

// Per lane: round trips in microseconds, after the warm-up.
struct Tally {
  std::vector<uint32_t> micros;
  int64_t answered = 0;

  // Counts a round trip sent at `sent` and answered at `end` (ns) when it
  // lies within the measured time.
  void Add(const Run& run, int64_t sent, int64_t end) {
    if (sent < run.measure_from || end > run.stop_at) return;
    micros.push_back(static_cast<uint32_t>((end - sent) / 1000));
    ++answered;
  }
};

// One DecideStream: sends the batch whenever fewer than in_flight are
// unanswered (and pacing allows), reads answers in order.
class StreamLane final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  StreamLane(GenericStub* stub, Run* run) : run_(run), request_(run->request) {
    stub->PrepareBidiStreamingCall(&context_, kStreamMethod, {}, this);
    StartRead(&response_);
    StartCall();
  }

  // Sends the next batch if the lane may, or ends the writes once the run
  // is over (at most one write is ever in flight).
  void TryWrite() {
    bool end = false;
    {
      utilityd::MutexLock lock(&mu_);
      if (writing_ || writes_done_ || outstanding_ >= run_->in_flight) return;
      const int64_t now = NowNanos();
      if (now >= run_->stop_at) {
        writes_done_ = end = true;
      } else {
        if (!Due(now, run_->interval, &next_due_)) return;
        writing_ = true;
        ++outstanding_;
        sent_.push_back(now);
      }
    }
    if (end) {
      StartWritesDone();
    } else {
      StartWrite(&request_);
    }
  }

  void OnWriteDone(bool ok) override {
    {
      utilityd::MutexLock lock(&mu_);
      writing_ = false;
    }
    if (!ok) return;  // the stream broke; OnDone reports it
    TryWrite();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    const int64_t now = NowNanos();
    {
      utilityd::MutexLock lock(&mu_);
      const int64_t sent = sent_.front();
      sent_.pop_front();
      --outstanding_;
      tally_.Add(*run_, sent, now);
    }
    if (!checked_) {
      checked_ = true;
      CheckAnswer(run_, response_);
    }
    StartRead(&response_);
    TryWrite();
  }

  void OnDone(const grpc::Status& s) override {
    if (!s.ok()) {
      run_->Fail(absl::StrCat("stream ended: ", s.error_message()));
    }
    utilityd::MutexLock lock(&mu_);
    done_ = true;
  }

  // Waits until the stream has ended, then returns what it measured.
  Tally Finish(absl::Duration timeout) {
    utilityd::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout([this] { return done_; }, timeout)) {
      context_.TryCancel();
      mu_.Await([this] { return done_; });
    }
    return std::move(tally_);
  }

 private:
  Run* const run_;
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  bool checked_ = false;  // only the reading callback touches it
  utilityd::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  int outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_due_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<int64_t> sent_ ABSL_GUARDED_BY(mu_);
  Tally tally_ ABSL_GUARDED_BY(mu_);
};

// A stream that is opened and then left idle.
class IdleLane final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit IdleLane(GenericStub* stub) {
    stub->PrepareBidiStreamingCall(&context_, kStreamMethod, {}, this);
    StartRead(&response_);
    StartCall();
  }
  void OnDone(const grpc::Status&) override {
    utilityd::MutexLock lock(&mu_);
    done_ = true;
  }
  void Close() {
    context_.TryCancel();
    utilityd::MutexLock lock(&mu_);
    mu_.Await([this] { return done_; });
  }

 private:
  grpc::ClientContext context_;
  grpc::ByteBuffer response_;
  utilityd::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

// Unary Decide calls, one at a time per lane, paced like a stream.
class UnaryLane {
 public:
  UnaryLane(GenericStub* stub, Run* run) : stub_(stub), run_(run) {}

  void TryCall() {
    int64_t now;
    {
      utilityd::MutexLock lock(&mu_);
      if (calling_ || stopped_) return;
      now = NowNanos();
      if (now >= run_->stop_at) {
        stopped_ = true;
        return;
      }
      if (!Due(now, run_->interval, &next_due_)) return;
      calling_ = true;
    }
    auto context = std::make_shared<grpc::ClientContext>();
    auto response = std::make_shared<grpc::ByteBuffer>();
    stub_->UnaryCall(
        context.get(), kUnaryMethod, {}, &run_->request, response.get(),
        [this, context, response, now](grpc::Status s) {
          const int64_t end = NowNanos();
          if (!s.ok()) {
            run_->Fail(absl::StrCat("call failed: ", s.error_message()));
          } else if (!checked_.exchange(true)) {
            CheckAnswer(run_, *response);
          }
          {
            utilityd::MutexLock lock(&mu_);
            calling_ = false;
            tally_.Add(*run_, now, end);
          }
          TryCall();
        });
  }

  Tally Finish() {
    utilityd::MutexLock lock(&mu_);
    mu_.Await([this] { return !calling_; });
    stopped_ = true;
    return std::move(tally_);
  }

 private:
  GenericStub* const stub_;
  Run* const run_;
  std::atomic<bool> checked_{false};
  utilityd::Mutex mu_;
  bool calling_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_due_ ABSL_GUARDED_BY(mu_) = 0;
  Tally tally_ ABSL_GUARDED_BY(mu_);
};

// A batch of agents with factors drawn over each factor's declared range:
// snapshots, or (columnar) one block whose columns are written as a game
// server's ECS system would, factor-major through the SDK's WriteBlock:
// entity ids, factors and running actions (no seeds: each would add 8
// bytes an agent, and only random selection reads them).
v1::DecideRequest MakeBatch(const v1::BehaviourSet& set, int agents,
                            v1::Explain explain, BenchOptions::Form form,
                            bool fixed_width_indices) {
  std::mt19937 rng(2026);
  auto draw = [&](const v1::Factor& f) {
    return std::uniform_real_distribution<float>(f.min(), f.max())(rng);
  };
  v1::DecideRequest request;
  request.set_explain(explain);
  if (form == BenchOptions::Form::kColumnar) {
    const int n = set.factors_size();
    std::vector<uint64_t> ids(agents);
    std::vector<int32_t> current(agents);
    std::vector<float> factors(static_cast<size_t>(agents) * n);
    for (int i = 0; i < agents; ++i) {
      ids[i] = 1000000 + i;
      current[i] = i % set.actions_size();
      for (int f = 0; f < n; ++f)
        factors[f * agents + i] = draw(set.factors(f));
    }
    client::WriteBlock({.behaviour_set = set.name(),
                        .agent_ids = ids,
                        .factors = factors,
                        .layout = v1::FACTOR_LAYOUT_COLUMNS,
                        .current_action = current,
                        .fixed_width_indices = fixed_width_indices},
                       request.add_blocks());
    return request;
  }
  bool per_target = false;
  for (const auto& a : set.actions()) per_target |= a.per_target();
  request.set_form(form == BenchOptions::Form::kCompact
                       ? v1::DECISION_FORM_COMPACT
                       : v1::DECISION_FORM_FULL);
  for (int i = 0; i < agents; ++i) {
    v1::AgentSnapshot* agent = request.add_agents();
    agent->set_agent_id(absl::StrCat("bench-", i));
    agent->set_behaviour_set(set.name());
    for (const auto& f : set.factors()) agent->add_factors(draw(f));
    agent->set_current_action(set.actions(i % set.actions_size()).name());
    for (int t = 0; per_target && t < 2; ++t) {
      v1::TargetSnapshot* target = agent->add_targets();
      target->set_target_id(absl::StrCat("target-", t));
      for (const auto& f : set.target_factors()) target->add_factors(draw(f));
    }
    agent->set_seed(i);
  }
  return request;
}

// The server's CPU seconds and resident bytes from its /metrics.
bool ScrapeServer(const std::string& admin, double* cpu_seconds,
                  double* resident_bytes) {
  const size_t colon = admin.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(admin.substr(colon + 1), &port)) {
    return false;
  }
  httplib::Client http(admin.substr(0, colon), port);
  http.set_connection_timeout(2);
  auto res = http.Get("/metrics");
  if (!res || res->status != 200) return false;
  bool cpu = false, rss = false;
  for (absl::string_view line : absl::StrSplit(res->body, '\n')) {
    auto value = [&](absl::string_view name, double* v) {
      return absl::ConsumePrefix(&line, name) &&
             absl::ConsumePrefix(&line, " ") && absl::SimpleAtod(line, v);
    };
    cpu |= value("process_cpu_seconds_total", cpu_seconds);
    rss |= value("process_resident_memory_bytes", resident_bytes);
  }
  return cpu && rss;
}

double Percentile(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1,
                            static_cast<size_t>(p * (sorted.size() - 1) + 0.5));
  return sorted[i] / 1000.0;  // ms
}

}  // namespace

namespace {

std::vector<std::unique_ptr<GenericStub>> Connect(const BenchOptions& o) {
  // Separate connections: channels with distinct arguments share none.
  std::vector<std::unique_ptr<GenericStub>> stubs;
  for (int c = 0; c < o.connections; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("utilityd.bench.connection", c);
    args.SetMaxReceiveMessageSize(64 << 20);
    stubs.push_back(std::make_unique<GenericStub>(grpc::CreateCustomChannel(
        o.target, grpc::InsecureChannelCredentials(), args)));
  }
  return stubs;
}

int RunIdle(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  double cpu = 0, before = 0, with = 0;
  if (o.admin.empty() || !ScrapeServer(o.admin, &cpu, &before)) {
    err << "utilityctl bench: --idle_streams needs --admin (the server's "
           "admin endpoint)\n";
    return 2;
  }
  auto stubs = Connect(o);
  std::vector<std::unique_ptr<IdleLane>> lanes;
  for (int i = 0; i < o.idle_streams; ++i) {
    lanes.push_back(std::make_unique<IdleLane>(stubs[i % stubs.size()].get()));
  }
  absl::SleepFor(o.duration);
  const bool ok = ScrapeServer(o.admin, &cpu, &with);
  for (auto& l : lanes) l->Close();
  if (!ok) {
    err << "utilityctl bench: cannot read the server's metrics\n";
    return 1;
  }
  const double per_stream = (with - before) / o.idle_streams;
  if (o.json) {
    out << absl::StrFormat(
        "{\"idle_streams\":%d,\"server_rss_before_bytes\":%.0f,"
        "\"server_rss_with_bytes\":%.0f,\"bytes_per_stream\":%.0f}\n",
        o.idle_streams, before, with, per_stream);
  } else {
    out << absl::StrFormat(
        "utilityctl bench: %d idle streams: server resident %.1f MiB -> "
        "%.1f MiB, %.1f KiB per stream\n",
        o.idle_streams, before / 1048576, with / 1048576, per_stream / 1024);
  }
  return 0;
}

}  // namespace

namespace {

// What a run measured.
struct Measured {
  Tally all;             // every measured round trip, sorted
  double seconds = 0;    // the measured time
  double cores = -1;     // the server's CPU over it, when scraped
  double resident = -1;  // the server's resident bytes at the end
};

// Starts the lanes, paces (or, unpaced, only starts) them until the end,
// and collects their round trips; reads the server's CPU when measuring
// starts and ends.
Measured Drive(const BenchOptions& o, int lanes, Run& run) {
  auto stubs = Connect(o);
  double cpu0 = 0, rss0 = 0, cpu1 = 0, rss1 = 0;
  const bool scraped = !o.admin.empty() && ScrapeServer(o.admin, &cpu0, &rss0);
  const int64_t start = NowNanos();
  run.measure_from = start + absl::ToInt64Nanoseconds(o.warmup);
  run.stop_at = run.measure_from + absl::ToInt64Nanoseconds(o.duration);
  std::vector<std::unique_ptr<StreamLane>> streams;
  std::vector<std::unique_ptr<UnaryLane>> unary;
  for (int l = 0; l < lanes; ++l) {
    GenericStub* s = stubs[l % stubs.size()].get();
    if (o.unary) {
      unary.push_back(std::make_unique<UnaryLane>(s, &run));
    } else {
      streams.push_back(std::make_unique<StreamLane>(s, &run));
    }
  }
  double cpu_at_measure = 0, rss_unused = 0;
  bool scraped_measure = false;
  while (NowNanos() < run.stop_at + 1000000) {
    for (auto& s : streams) s->TryWrite();
    for (auto& u : unary) u->TryCall();
    if (scraped && !scraped_measure && NowNanos() >= run.measure_from) {
      scraped_measure = ScrapeServer(o.admin, &cpu_at_measure, &rss_unused);
    }
    absl::SleepFor(run.interval > 0 ? absl::Microseconds(100)
                                    : absl::Milliseconds(5));
  }
  Measured m;
  m.seconds = absl::ToDoubleSeconds(o.duration);
  if (scraped_measure && ScrapeServer(o.admin, &cpu1, &rss1)) {
    m.cores = (cpu1 - cpu_at_measure) / m.seconds;
    m.resident = rss1;
  }
  auto add = [&m](const Tally& t) {
    m.all.micros.insert(m.all.micros.end(), t.micros.begin(), t.micros.end());
    m.all.answered += t.answered;
  };
  for (auto& s : streams) {
    s->TryWrite();  // ends the writes of an idle stream
    add(s->Finish(absl::Seconds(30)));
  }
  for (auto& u : unary) add(u->Finish());
  std::sort(m.all.micros.begin(), m.all.micros.end());
  return m;
}

// Prints the figures, as JSON or for people.
void Report(const BenchOptions& o, int lanes, const Run& run, const Measured& m,
            std::ostream& out) {
  const double batches_per_s = m.all.answered / m.seconds;
  const double decisions_per_s = batches_per_s * o.batch;
  const std::vector<uint32_t>& rt = m.all.micros;
  if (o.json) {
    out << absl::StrFormat(
        "{\"mode\":\"%s\",\"set\":\"%s\",\"factors\":%d,\"batch\":%d,"
        "\"lanes\":%d,"
        "\"connections\":%d,\"in_flight\":%d,\"rate\":%g,\"seconds\":%g,"
        "\"batches_per_second\":%.1f,\"decisions_per_second\":%.0f,"
        "\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,"
        "\"max_ms\":%.3f,\"server_cpu_cores\":%.3f,"
        "\"server_rss_bytes\":%.0f,\"form\":\"%s\",\"request_bytes\":%d,"
        "\"answer_bytes\":%d,\"errors\":%d}\n",
        o.unary ? "unary" : "stream", o.set, run.factors, o.batch, lanes,
        o.connections, run.in_flight, o.rate, m.seconds, batches_per_s,
        decisions_per_s, Percentile(rt, 0.5), Percentile(rt, 0.9),
        Percentile(rt, 0.99), Percentile(rt, 0.999),
        rt.empty() ? 0.0 : rt.back() / 1000.0, m.cores, m.resident,
        FormName(o.form), run.request.Length(), run.answer_bytes.load(),
        run.errors.load());
    return;
  }
  out << absl::StrFormat(
      "utilityctl bench: %s, batches of %d, %d %s over %d connection(s), "
      "%d in flight each, rate %s, %s after %s warm-up\n",
      o.set, o.batch, lanes, o.unary ? "unary callers" : "streams",
      o.connections, run.in_flight,
      o.rate > 0 ? absl::StrFormat("%g batches/s", o.rate) : "max",
      absl::FormatDuration(o.duration), absl::FormatDuration(o.warmup));
  out << absl::StrFormat("  decisions/s   %.0f\n  batches/s     %.1f\n",
                         decisions_per_s, batches_per_s);
  out << absl::StrFormat("  request       %d bytes, %.1f per agent\n",
                         run.request.Length(),
                         static_cast<double>(run.request.Length()) / o.batch);
  out << absl::StrFormat("  answer        %d bytes, %.1f per decision (%s)\n",
                         run.answer_bytes.load(),
                         static_cast<double>(run.answer_bytes.load()) / o.batch,
                         FormName(o.form));
  out << absl::StrFormat(
      "  round trip    p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  p99.9 %.3f "
      "ms\n",
      Percentile(rt, 0.5), Percentile(rt, 0.9), Percentile(rt, 0.99),
      Percentile(rt, 0.999));
  if (m.cores >= 0) {
    out << absl::StrFormat("  server        %.2f cores, resident %.1f MiB\n",
                           m.cores, m.resident / (1024.0 * 1024.0));
  }
  out << "  errors        " << run.errors.load() << "\n";
}

// The set, for its factors and their ranges.
absl::StatusOr<v1::BehaviourSet> FetchSet(const BenchOptions& o) {
  auto stub = v1::DecisionService::NewStub(
      grpc::CreateChannel(o.target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::GetBehaviourSetRequest get;
  get.set_name(o.set);
  v1::GetBehaviourSetResponse set;
  if (grpc::Status s = stub->GetBehaviourSet(&context, get, &set); !s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot get set ", o.set, " from ", o.target, ": ", s.error_message()));
  }
  return set.behaviour_set();
}

}  // namespace

int RunBench(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  if (o.idle_streams > 0) return RunIdle(o, out, err);
  if (o.batch < 1 || o.streams < 1 || o.connections < 1 || o.in_flight < 1 ||
      o.rate < 0 || o.duration <= absl::ZeroDuration()) {
    err << "utilityctl bench: --batch, --streams, --connections and "
           "--in_flight must be >= 1, --rate >= 0, --duration > 0\n";
    return 2;
  }
  const absl::StatusOr<v1::BehaviourSet> set = FetchSet(o);
  if (!set.ok()) {
    err << "utilityctl bench: " << set.status().message() << "\n";
    return 1;
  }
  Run run;
  run.batch = o.batch;
  run.form = o.form;
  run.factors = set->factors_size();
  run.in_flight = o.unary ? 1 : o.in_flight;
  if (o.form == BenchOptions::Form::kColumnar &&
      o.explain != v1::EXPLAIN_NONE) {
    err << "utilityctl bench: --form columnar answers numbers only: drop "
           "--explain\n";
    return 2;
  }
  const v1::DecideRequest request =
      MakeBatch(*set, o.batch, o.explain, o.form, o.fixed_width_indices);
  bool own = false;
  if (!grpc::GenericSerialize<grpc::ProtoBufferWriter, v1::DecideRequest>(
           request, &run.request, &own)
           .ok()) {
    err << "utilityctl bench: cannot serialise the batch\n";
    return 1;
  }
  const int lanes = o.unary ? o.streams * o.in_flight : o.streams;
  if (o.rate > 0) run.interval = static_cast<int64_t>(1e9 * lanes / o.rate);
  const Measured m = Drive(o, lanes, run);
  Report(o, lanes, run, m, out);
  if (run.errors.load() > 0) {
    utilityd::MutexLock lock(&run.mu);
    err << "utilityctl bench: " << run.errors.load()
        << " error(s); the first: " << run.first_error << "\n";
    return 1;
  }
  if (m.all.answered == 0) {
    err << "utilityctl bench: no batch was answered in the measured time\n";
    return 1;
  }
  return 0;
}

}  // namespace utilityd::ctl
