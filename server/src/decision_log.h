// The decision log: one entry (a v1::DecisionLogEntry, as a line of
// protobuf JSON or length-delimited binary) per decision, written by a
// background thread. Each entry keeps the snapshot as received, so
// `utilityctl replay` can decide it again. The request path only
// offers an entry to a bounded queue; when the queue is full the entry is
// dropped and counted, so logging never blocks a decision. A deterministic
// sample of decisions (by decision id) also carries the full breakdown,
// made on the writer thread from a copy of the snapshot (never on the
// request path).
//
//   DecisionLog::Options o{.sink = "/var/log/utilityd/decisions.jsonl",
//                          .sample = 0.01};
//   auto log = DecisionLog::Open(o, &written, &dropped);
//   DecisionLog::Breakdown b;                  // empty: no breakdown
//   if ((*log)->Sampled(id)) b = {.set = set_ptr, .snapshot = snapshot};
//   (*log)->Offer(std::move(entry), std::move(b));
#ifndef UTILITYD_SERVER_DECISION_LOG_H_
#define UTILITYD_SERVER_DECISION_LOG_H_

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/src/draining_queue.h"
#include "utilityd/engine/decide.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/metrics/metrics.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::server {

// The entry of one decision, as the decision log writes it and the live
// feed shows it: when, the agent and its factors by name, the outcome as
// written in `decision` (id, action, target, score, switched), and with
// `explain` the full breakdown — taken from `decision` when it carries one,
// else scored again from `input`. Ids are not masked here.
v1::DecisionLogEntry MakeDecisionLogEntry(const loader::LoadedSet& set,
                                          const v1::AgentSnapshot& agent,
                                          const engine::AgentInput& input,
                                          absl::Time time,
                                          const v1::Decision& decision,
                                          float runner_up_score, bool explain);

// Scores `input` again at explain full and puts the breakdown in `entry`.
void AddFullBreakdown(const loader::LoadedSet& set,
                      const v1::AgentSnapshot& agent,
                      const engine::AgentInput& input,
                      v1::DecisionLogEntry* entry);

// Picks a deterministic fraction of decisions by id: an id (a uniform
// 64-bit value) is sampled when it is below rate * 2^64.
class IdSampler {
 public:
  explicit IdSampler(double rate);
  bool operator()(uint64_t id) const { return all_ || id < threshold_; }
  // Returns the sampler of the ids this or `other` samples.
  IdSampler Or(const IdSampler& other) const {
    IdSampler both(0);
    both.all_ = all_ || other.all_;
    both.threshold_ = std::max(threshold_, other.threshold_);
    return both;
  }

 private:
  bool all_ = false;
  uint64_t threshold_ = 0;
};

class DecisionLog {
 public:
  struct Options {
    // "off", "stdout", or a file path (appended to).
    std::string sink = "off";
    // "json" (a line per entry) or "binary" (length-delimited messages).
    std::string format = "json";
    // Fraction of decisions, 0..1, whose line carries the full breakdown.
    double sample = 0.01;
    // Entries waiting to be written before new ones are dropped.
    size_t queue_capacity = 65536;
    // Replace agent ids with a keyed hash (16 hex digits): the same agent
    // gets the same token on every line and replica with the same salt.
    bool mask_agent_ids = false;
    std::string mask_salt;
    // Keep factor values (and the raw inputs of breakdowns) in the log.
    bool factor_values = true;
  };

  // Returns the token a masked agent id is logged as.
  std::string MaskAgentId(absl::string_view agent_id) const;

  // Opens the sink and starts the writer; nullptr when the sink is "off".
  // INVALID_ARGUMENT for a bad sample rate or capacity, NOT_FOUND when the
  // file cannot be opened.
  static absl::StatusOr<std::unique_ptr<DecisionLog>> Open(
      const Options& options, prometheus::Counter* written,
      prometheus::Counter* dropped);
  // Writes to `out` (tests); takes ownership when `owned`.
  DecisionLog(FILE* out, bool owned, const Options& options,
              prometheus::Counter* written, prometheus::Counter* dropped);
  // Writes what is queued, then stops the writer.
  ~DecisionLog();

  // Whether the decision with this id (its 64-bit value) is sampled.
  bool Sampled(uint64_t id) const { return sampled_(id); }
  const IdSampler& sampler() const { return sampled_; }
  // What the writer needs to add a sampled decision's full breakdown: the
  // set it was decided with (kept alive until written) and the snapshot as
  // received. Empty `set`: no breakdown to add.
  struct Breakdown {
    std::shared_ptr<const loader::LoadedSet> set;
    v1::AgentSnapshot snapshot;
  };
  // Applies the log's privacy rules to an entry (masked agent ids; no factor
  // values or raw inputs when they are not to be logged; the breakdown's
  // too, once the writer has made it), then queues it, or drops and counts
  // it when the queue is full. Never blocks on the sink, never scores.
  // Thread-safe.
  void Offer(v1::DecisionLogEntry entry, Breakdown breakdown = {});

 private:
  struct Item {
    v1::DecisionLogEntry entry;  // JSON form
    std::string bytes;           // binary form: the entry, serialised
    Breakdown breakdown;
  };
  void Write(std::deque<Item>& batch);

  FILE* out_;
  const bool owned_;
  const bool mask_agent_ids_;
  const std::string mask_salt_;
  const bool factor_values_;
  const bool binary_;
  const IdSampler sampled_;
  prometheus::Counter* written_;
  prometheus::Counter* dropped_;
  // Drops raw inputs from a breakdown when factor values are not logged.
  void ClearRawInputs(v1::DecisionLogEntry* entry) const;
  // Last: its writer thread starts once the rest is built.
  std::unique_ptr<DrainingQueue<Item>> queue_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_DECISION_LOG_H_
