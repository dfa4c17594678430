#include "server/src/decision_log.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/write.h"
#include "utilityd/engine/random.h"
#include "utilityd/replay/log_reader.h"

namespace utilityd::server {

absl::StatusOr<std::unique_ptr<DecisionLog>> DecisionLog::Open(
    const Options& options, prometheus::Counter* written,
    prometheus::Counter* dropped) {
  if (!(options.sample >= 0 && options.sample <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decision_log_sample: must be within 0..1, got ", options.sample));
  }
  if (options.queue_capacity < 1) {
    return absl::InvalidArgumentError("decision_log_queue: must be >= 1");
  }
  if (options.format != "json" && options.format != "binary") {
    return absl::InvalidArgumentError(
        absl::StrCat("decision_log_format: expected json or binary, got \"",
                     options.format, "\""));
  }
  if (options.sink == "off" || options.sink.empty()) return nullptr;
  if (options.sink == "stdout") {
    return std::make_unique<DecisionLog>(stdout, false, options, written,
                                         dropped);
  }
  FILE* f = std::fopen(options.sink.c_str(), "a");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("decision_log: cannot open ",
                                            options.sink, " for writing"));
  }
  return std::make_unique<DecisionLog>(f, true, options, written, dropped);
}

v1::DecisionLogEntry MakeDecisionLogEntry(const loader::LoadedSet& set,
                                          const v1::AgentSnapshot& agent,
                                          const engine::AgentInput& input,
                                          absl::Time time,
                                          const v1::Decision& decision,
                                          float runner_up_score, bool explain) {
  v1::DecisionLogEntry e;
  *e.mutable_time() = google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
      absl::ToUnixNanos(time));
  e.set_decision_id(decision.decision_id());
  e.set_agent_id(agent.agent_id());
  e.set_behaviour_set(set.name());
  e.set_revision(set.revision());
  const auto& factors = set.compiled.factors();
  for (size_t f = 0; f < factors.size() && f < input.factors.size(); ++f) {
    (*e.mutable_factors())[factors[f].name] = input.factors[f];
  }
  e.set_current_action(agent.current_action());
  *e.mutable_snapshot() = agent;
  e.set_action(decision.action());
  e.set_target_id(decision.target_id());
  e.set_score(decision.score());
  e.set_switched(decision.switched());
  e.set_runner_up_score(runner_up_score);
  e.set_variant(decision.variant());
  if (decision.has_coordination()) {
    *e.mutable_coordination() = decision.coordination();
  }
  if (set.compiled.tree() != nullptr) {
    // A tick: its leaves, not a flat breakdown (which would score the
    // set's actions as if there were no tree).
    e.set_game_time(agent.game_time());
    *e.mutable_run_leaves() = decision.run_leaves();
    *e.mutable_halted_leaves() = decision.halted_leaves();
    e.set_tree_status(decision.tree_status());
    e.set_tree_reset(decision.tree_reset());
    return e;
  }
  if (!explain) return e;
  if (!decision.explanation().actions().empty()) {
    *e.mutable_explanation() = decision.explanation();
    return e;
  }
  AddFullBreakdown(set, agent, input, &e);
  return e;
}

void AddFullBreakdown(const loader::LoadedSet& set,
                      const v1::AgentSnapshot& agent,
                      const engine::AgentInput& input,
                      v1::DecisionLogEntry* entry) {
  engine::Decision full;
  if (engine::Decide(set.compiled, input, engine::ExplainLevel::kFull, &full)
          .ok()) {
    v1::Decision explained;
    codec::WriteDecision(set, agent, full, v1::EXPLAIN_FULL, &explained);
    *entry->mutable_explanation() = std::move(*explained.mutable_explanation());
  }
}

IdSampler::IdSampler(double rate) : all_(rate >= 1) {
  if (!all_ && rate > 0)
    threshold_ = static_cast<uint64_t>(std::ldexp(rate, 64));
}

DecisionLog::DecisionLog(FILE* out, bool owned, const Options& options,
                         prometheus::Counter* written,
                         prometheus::Counter* dropped)
    : out_(out),
      owned_(owned),
      mask_agent_ids_(options.mask_agent_ids),
      mask_salt_(options.mask_salt),
      factor_values_(options.factor_values),
      binary_(options.format == "binary"),
      sampled_(options.sample),
      written_(written),
      dropped_(dropped),
      queue_(std::make_unique<DrainingQueue<Item>>(
          options.queue_capacity,
          [this](std::deque<Item>& batch) { Write(batch); })) {}

DecisionLog::~DecisionLog() {
  queue_->Stop();  // writes what is queued
  if (owned_) std::fclose(out_);
}

std::string DecisionLog::MaskAgentId(absl::string_view agent_id) const {
  // FNV-1a 64 over salt and id, then SplitMix64's finaliser to spread it.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](absl::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  };
  mix(mask_salt_);
  mix("\x1f");
  mix(agent_id);
  return absl::StrFormat("%016x", engine::SplitMix64::Mix(h));
}

void DecisionLog::ClearRawInputs(v1::DecisionLogEntry* entry) const {
  if (factor_values_) return;
  // The breakdown shows raw inputs too; the normalised values remain.
  for (auto& a : *entry->mutable_explanation()->mutable_actions()) {
    for (auto& c : *a.mutable_considerations()) c.clear_raw();
  }
}

void DecisionLog::Offer(v1::DecisionLogEntry entry, Breakdown breakdown) {
  if (mask_agent_ids_) {
    entry.set_agent_id(MaskAgentId(entry.agent_id()));
    if (entry.has_snapshot())
      entry.mutable_snapshot()->set_agent_id(entry.agent_id());
  }
  if (!factor_values_) {
    entry.clear_factors();
    if (entry.has_snapshot()) {
      // Target ids stay: they name what was chosen, not what was measured.
      v1::AgentSnapshot& s = *entry.mutable_snapshot();
      s.clear_factors();
      s.clear_named_factors();
      for (v1::TargetSnapshot& t : *s.mutable_targets()) {
        t.clear_factors();
        t.clear_named_factors();
      }
      entry.set_factors_dropped(true);
    }
  }
  ClearRawInputs(&entry);
  Item item{.breakdown = std::move(breakdown)};
  if (binary_) {
    // The by-name copy of the snapshot's factors is for people reading
    // JSON; the binary form keeps the snapshot only. It crosses to the
    // writer serialised: one buffer for the writer to free, not a message's
    // many allocations, each freed into this thread's malloc arena under its
    // lock while it serves requests (2x the throughput with every decision
    // logged). JSON goes as the message: the writer would otherwise parse
    // it again before printing it, which cost more than it saved.
    if (entry.has_snapshot()) entry.clear_factors();
    entry.SerializeToString(&item.bytes);
  } else {
    item.entry = std::move(entry);
  }
  if (!queue_->Offer(std::move(item))) dropped_->Increment();
}

// On the writer thread: one batch of entries to the sink.
void DecisionLog::Write(std::deque<Item>& batch) {
  google::protobuf::util::JsonPrintOptions json;
  json.preserve_proto_field_names = true;
  std::string line;
  for (Item& item : batch) {
    line.clear();
    if (binary_ && item.breakdown.set == nullptr) {
      // Written as it came: no breakdown to add.
      replay::AppendDelimited(item.bytes, &line);
      std::fwrite(line.data(), 1, line.size(), out_);
      continue;
    }
    v1::DecisionLogEntry& e = item.entry;
    if (binary_ && !e.ParseFromString(item.bytes)) continue;  // cannot fail
    if (const auto& set = item.breakdown.set; set != nullptr) {
      // A sampled decision: scored again here, off the request path.
      codec::AgentScratch scratch;
      engine::AgentInput input;
      if (codec::ResolveAgent(*set, item.breakdown.snapshot, &scratch, &input)
              .ok()) {
        AddFullBreakdown(*set, item.breakdown.snapshot, input, &e);
        ClearRawInputs(&e);
      }
    }
    if (binary_) {
      replay::AppendDelimited(e, &line);
    } else {
      (void)google::protobuf::util::MessageToJsonString(e, &line, json);
      line += '\n';
    }
    std::fwrite(line.data(), 1, line.size(), out_);
  }
  std::fflush(out_);
  written_->Increment(static_cast<double>(batch.size()));
}

}  // namespace utilityd::server
