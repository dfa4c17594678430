#include "server/src/batch_recorder.h"

#include <utility>

namespace utilityd::server {

// Per thread: a batch is decided on one thread, start to end.
thread_local DecisionTally BatchRecorder::tally_;

void BatchRecorder::Record(const loader::LoadedSet& set,
                           const v1::AgentSnapshot& agent,
                           const engine::AgentInput& input,
                           const engine::BatchDecision& decision,
                           const v1::Decision& out, uint64_t id) {
  DecisionLog* const log = sinks_.log;
  RecentDecisions* const recent = sinks_.recent;
  // The generation holding `set`: the feed and the log explain with it.
  const bool canary = IsCanary(set);
  const std::shared_ptr<const Generation>& generation =
      canary ? canary_.generation : generation_;
  if (recent != nullptr && recent->Sampled(id)) {
    recent->Add(generation, agent, now_, out, decision.runner_up_score);
  }
  // Shadow evaluation takes a copy; its worker decides it again later. The
  // canary's decisions are compared with the live sets instead.
  ShadowEvaluator* const shadow =
      canary ? &sinks_.canary->compare() : sinks_.shadow;
  if (shadow != nullptr && shadow->Sampled(id)) {
    shadow->Offer(set, agent, out);
  }
  if (log == nullptr) return;
  // A sampled decision carries its full breakdown: the one already
  // written (explain full), else one the log's writer thread makes from a
  // copy of the snapshot (a tick has none: its leaves are its story).
  const bool sampled = log->Sampled(id);
  const bool written = !out.explanation().actions().empty();
  DecisionLog::Breakdown later;
  if (sampled && !written && set.compiled.tree() == nullptr) {
    // Points at the set, keeps its generation alive until written.
    later.set = std::shared_ptr<const loader::LoadedSet>(generation, &set);
    later.snapshot = agent;
  }
  log->Offer(MakeDecisionLogEntry(set, agent, input, now_, out,
                                  decision.runner_up_score, sampled && written),
             std::move(later));
}

}  // namespace utilityd::server
