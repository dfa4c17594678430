#include "server/src/recent_decisions.h"

#include <algorithm>

#include "utilityd/engine/decide.h"
#include "utilityd/loader/decide_codec.h"

namespace utilityd::server {
namespace {

// The feed entry of a sample: outcome as decided, snapshot factors by name,
// and the full breakdown from scoring the snapshot again.
v1::DecisionLogEntry ToEntry(const RecentDecisions::Sample& s) {
  v1::DecisionLogEntry e;
  const int64_t nanos = absl::ToUnixNanos(s.time);
  e.mutable_time()->set_seconds(nanos / 1000000000);
  e.mutable_time()->set_nanos(static_cast<int32_t>(nanos % 1000000000));
  e.set_decision_id(s.decision_id);
  e.set_agent_id(s.snapshot.agent_id());
  e.set_behaviour_set(s.snapshot.behaviour_set());
  e.set_current_action(s.snapshot.current_action());
  e.set_action(s.action);
  e.set_target_id(s.target_id);
  e.set_score(s.score);
  e.set_switched(s.switched);
  e.set_runner_up_score(s.runner_up_score);
  const auto set = s.generation->catalog.Find(s.snapshot.behaviour_set());
  if (set == nullptr) return e;
  e.set_revision(set->revision());
  loader::AgentScratch scratch;
  engine::AgentInput input;
  if (!loader::ResolveAgent(*set, s.snapshot, &scratch, &input).ok()) return e;
  const auto& factors = set->compiled.factors();
  for (size_t f = 0; f < factors.size() && f < input.factors.size(); ++f) {
    (*e.mutable_factors())[factors[f].name] = input.factors[f];
  }
  engine::Decision full;
  if (engine::Decide(set->compiled, input, engine::ExplainLevel::kFull, &full)
          .ok()) {
    v1::Decision explained;
    loader::WriteDecision(*set, s.snapshot, full, v1::EXPLAIN_FULL, &explained);
    *e.mutable_explanation() = std::move(*explained.mutable_explanation());
  }
  return e;
}

}  // namespace

RecentDecisions::RecentDecisions(size_t capacity, double sample)
    : sampled_(sample), ring_(std::max<size_t>(capacity, 1)) {}

void RecentDecisions::Add(Sample sample) {
  Sample old;
  {
    utilityd::MutexLock lock(&mu_);
    old = std::move(ring_[next_]);  // freed outside the lock
    ring_[next_] = std::move(sample);
    next_ = (next_ + 1) % ring_.size();
    size_ = std::min(size_ + 1, ring_.size());
  }
}

std::vector<v1::DecisionLogEntry> RecentDecisions::Newest(
    const Filter& filter) const {
  std::vector<Sample> picked;
  {
    utilityd::MutexLock lock(&mu_);
    for (size_t i = 1; i <= size_ && picked.size() < filter.limit; ++i) {
      const Sample& s = ring_[(next_ + ring_.size() - i) % ring_.size()];
      if (!filter.behaviour_set.empty() &&
          s.snapshot.behaviour_set() != filter.behaviour_set) {
        continue;
      }
      if (!filter.action.empty() && s.action != filter.action) continue;
      if (filter.switched.has_value() && s.switched != *filter.switched) {
        continue;
      }
      picked.push_back(s);
    }
  }
  // The costly part, outside the lock.
  std::vector<v1::DecisionLogEntry> out;
  out.reserve(picked.size());
  for (const Sample& s : picked) out.push_back(ToEntry(s));
  return out;
}

}  // namespace utilityd::server
