#include "server/src/recent_decisions.h"

#include <algorithm>

#include "utilityd/codec/resolve.h"
#include "utilityd/engine/decide.h"

namespace utilityd::server {
namespace {

// The feed entry of a sample: its snapshot scored again, with the set it
// was decided with, for the factors by name and the full breakdown.
v1::DecisionLogEntry ToEntry(const RecentDecisions::Sample& s) {
  const auto set = s.generation->catalog.Find(s.snapshot.behaviour_set());
  codec::AgentScratch scratch;
  engine::AgentInput input;
  if (set == nullptr ||
      !codec::ResolveAgent(*set, s.snapshot, &scratch, &input).ok()) {
    // Not reached: the sample was decided with this very set.
    v1::DecisionLogEntry e;
    e.set_agent_id(s.snapshot.agent_id());
    e.set_behaviour_set(s.snapshot.behaviour_set());
    return e;
  }
  return MakeDecisionLogEntry(*set, s.snapshot, input, s.time, s.decision,
                              s.runner_up_score, /*explain=*/true);
}

}  // namespace

RecentDecisions::RecentDecisions(size_t capacity, double sample,
                                 double max_per_second)
    : capacity_(std::max<size_t>(capacity, 1)),
      sample_(sample),
      max_per_second_(max_per_second),
      fraction_(sample),
      ring_(capacity_) {}

IdSampler RecentDecisions::sampler(absl::Time now) {
  if (max_per_second_ > 0 &&
      absl::ToUnixNanos(now) >=
          next_adjust_ns_.load(std::memory_order_relaxed)) {
    Adjust(now);
  }
  return IdSampler(fraction_.load(std::memory_order_relaxed));
}

void RecentDecisions::Adjust(absl::Time now) {
  utilityd::MutexLock lock(&mu_);
  if (absl::ToUnixNanos(now) < next_adjust_ns_.load()) return;  // done
  next_adjust_ns_.store(absl::ToUnixNanos(now + absl::Seconds(1)));
  if (window_start_ == absl::InfinitePast() || now <= window_start_) {
    window_start_ = now;
    window_adds_ = 0;
    return;
  }
  const double per_second = static_cast<double>(window_adds_) /
                            absl::ToDoubleSeconds(now - window_start_);
  double f = fraction_.load();
  if (per_second > max_per_second_) {
    // What entered scales with the fraction: this one lets in about the
    // limit at the window's traffic.
    f *= max_per_second_ / per_second;
  } else if (per_second < max_per_second_ / 2) {
    f = std::min(sample_, f * 2);  // back up, at most doubling a second
  }
  fraction_.store(f);
  window_start_ = now;
  window_adds_ = 0;
}

void RecentDecisions::Add(std::shared_ptr<const Generation> generation,
                          const v1::AgentSnapshot& snapshot, absl::Time time,
                          const v1::Decision& decision, float runner_up_score) {
  utilityd::MutexLock lock(&mu_);
  Sample& slot = ring_[next_];
  // The slot's old generation leaves with `generation`, released outside
  // the lock.
  slot.generation.swap(generation);
  slot.snapshot = snapshot;
  slot.time = time;
  slot.decision = decision;
  slot.decision.clear_explanation();
  slot.runner_up_score = runner_up_score;
  next_ = (next_ + 1) % ring_.size();
  size_ = std::min(size_ + 1, ring_.size());
  ++window_adds_;
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
      if (!filter.action.empty() && s.decision.action() != filter.action) {
        continue;
      }
      if (filter.switched.has_value() &&
          s.decision.switched() != *filter.switched) {
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
