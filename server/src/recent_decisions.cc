#include "server/src/recent_decisions.h"

#include <algorithm>

namespace utilityd::server {

RecentDecisions::RecentDecisions(size_t capacity, double sample)
    : sampled_(sample), ring_(std::max<size_t>(capacity, 1)) {}

void RecentDecisions::Add(v1::DecisionLogEntry entry) {
  utilityd::MutexLock lock(&mu_);
  ring_[next_] = std::move(entry);
  next_ = (next_ + 1) % ring_.size();
  size_ = std::min(size_ + 1, ring_.size());
}

std::vector<v1::DecisionLogEntry> RecentDecisions::Newest(
    const Filter& filter) const {
  std::vector<v1::DecisionLogEntry> out;
  utilityd::MutexLock lock(&mu_);
  for (size_t i = 1; i <= size_ && out.size() < filter.limit; ++i) {
    const v1::DecisionLogEntry& e =
        ring_[(next_ + ring_.size() - i) % ring_.size()];
    if (!filter.behaviour_set.empty() &&
        e.behaviour_set() != filter.behaviour_set) {
      continue;
    }
    if (!filter.action.empty() && e.action() != filter.action) continue;
    if (filter.switched.has_value() && e.switched() != *filter.switched) {
      continue;
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace utilityd::server
