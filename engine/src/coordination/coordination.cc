#include "utilityd/engine/coordination.h"

#include <algorithm>
#include <cmath>

namespace utilityd::engine {

namespace {

int32_t Units(int32_t v, int32_t lo) { return std::clamp(v, lo, kMaxUnits); }

}  // namespace

int32_t Allocator::Lacks(int32_t a, int32_t p, int32_t amount) const {
  int32_t own = 0;
  for (int32_t h : held_by_[a]) {
    if (holdings_[h].pool == p && reserved_[h]) own += Amount(h);
  }
  const int32_t need = std::max(0, Units(amount, 1) - own);
  return std::max(0, taken_[p] + need - Capacity(p));
}

int32_t Allocator::Capacity(int32_t p) const {
  return Units(pools_[p].capacity, 0);
}
int32_t Allocator::Amount(int32_t h) const {
  return Units(holdings_[h].amount, 1);
}

bool Allocator::Preempt(int32_t a, int32_t p, int32_t lack, float score,
                        float margin,
                        absl::Span<const AllocationAgent> agents) {
  auto holder_score = [&](int32_t h) {
    const Holding& x = holdings_[h];
    return x.agent < 0 ? x.score : agents[x.agent].options[0].score;
  };
  victims_.clear();
  int32_t freed = 0;
  for (size_t h = 0; h < holdings_.size(); ++h) {
    const Holding& x = holdings_[h];
    if (x.pool != p || !reserved_[h] || out_.kept[h] || x.agent == a) continue;
    const float s = holder_score(static_cast<int32_t>(h));
    if (!(score > s + margin)) continue;  // NaN: never
    victims_.push_back(static_cast<int32_t>(h));
    freed += Amount(static_cast<int32_t>(h));
  }
  if (freed < lack) return false;
  std::stable_sort(victims_.begin(), victims_.end(), [&](int32_t x, int32_t y) {
    return holder_score(x) < holder_score(y);
  });
  for (int32_t h : victims_) {
    if (lack <= 0) break;
    reserved_[h] = 0;
    taken_[p] -= Amount(h);
    lack -= Amount(h);
    out_.preempted_by[h] = a;
    ++out_.preemptions[p];
  }
  return true;
}

const Allocation& Allocator::Allocate(absl::Span<const PoolSpec> pools,
                                      absl::Span<const Holding> holdings,
                                      absl::Span<const AllocationAgent> agents,
                                      absl::Span<const Use> uses) {
  pools_ = pools;
  holdings_ = holdings;
  Reset(agents.size());
  Reserve(agents, uses);
  // 2. Highest decision first: agents in order of their first option's
  // score (ties to the lower index), each taking its first option that fits.
  order_.resize(agents.size());
  for (size_t a = 0; a < agents.size(); ++a) {
    order_[a] = static_cast<int32_t>(a);
  }
  auto first_score = [&](int32_t a) {
    return agents[a].options.empty() ? -1.0f : agents[a].options[0].score;
  };
  std::stable_sort(order_.begin(), order_.end(), [&](int32_t x, int32_t y) {
    return first_score(x) > first_score(y);
  });
  for (int32_t a : order_) {
    Settle(a, agents, uses);
    // 4. Settled: what it still reserves and its option does not use is
    // released at once, for the agents after it.
    for (int32_t h : held_by_[a]) {
      if (reserved_[h] && !out_.kept[h]) {
        reserved_[h] = 0;
        taken_[holdings[h].pool] -= Amount(h);
      }
    }
  }
  // Outside holders not preempted keep.
  for (size_t h = 0; h < holdings.size(); ++h) {
    if (reserved_[h] && holdings[h].agent < 0) out_.kept[h] = 1;
  }
  out_.used = taken_;
  return out_;
}

void Allocator::Reset(size_t agents) {
  const size_t pools = pools_.size(), holdings = holdings_.size();
  out_.chosen.assign(agents, -1);
  out_.denied.assign(agents, Denial{});
  out_.kept.assign(holdings, 0);
  out_.preempted_by.assign(holdings, -1);
  out_.used.assign(pools, 0);
  out_.grants.assign(pools, 0);
  out_.denials.assign(pools, 0);
  out_.preemptions.assign(pools, 0);
  taken_.assign(pools, 0);
  reserved_.assign(holdings, 0);
  if (held_by_.size() < agents) held_by_.resize(agents);
  for (size_t a = 0; a < agents; ++a) held_by_[a].clear();
}

void Allocator::Reserve(absl::Span<const AllocationAgent> agents,
                        absl::Span<const Use> uses) {
  // 1. Holders keep: reserve in the order given, up to capacity; a batch
  // agent's holding only while its decision uses the pool.
  auto uses_pool = [&](const Option& o, int32_t p) {
    for (const Use& u : uses.subspan(o.first_use, o.use_count)) {
      if (u.pool == p) return true;
    }
    return false;
  };
  for (size_t h = 0; h < holdings_.size(); ++h) {
    const Holding& x = holdings_[h];
    if (x.agent >= 0) {
      const auto& options = agents[x.agent].options;
      if (options.empty() || !uses_pool(options[0], x.pool)) continue;
      held_by_[x.agent].push_back(static_cast<int32_t>(h));
    }
    const int32_t amount = Amount(static_cast<int32_t>(h));
    if (taken_[x.pool] + amount > Capacity(x.pool)) continue;
    taken_[x.pool] += amount;
    reserved_[h] = 1;
  }
}

void Allocator::Settle(int32_t a, absl::Span<const AllocationAgent> agents,
                       absl::Span<const Use> uses) {
  const auto& options = agents[a].options;
  for (size_t k = 0; k < options.size(); ++k) {
    const Option& o = options[k];
    int32_t blocked = -1;
    for (const Use& u : uses.subspan(o.first_use, o.use_count)) {
      const int32_t lack = Lacks(a, u.pool, u.amount);
      if (lack == 0) continue;
      // 3. Preemption.
      const float margin = pools_[u.pool].preemption_margin;
      if (std::isfinite(margin) &&
          Preempt(a, u.pool, lack, o.score, margin, agents)) {
        continue;
      }
      blocked = u.pool;
      break;
    }
    if (blocked < 0) {
      Grant(a, o, uses);
      out_.chosen[a] = static_cast<int32_t>(k);
      return;
    }
    if (out_.denied[a].option < 0) {
      out_.denied[a] = {static_cast<int32_t>(k), blocked};
    }
    ++out_.denials[blocked];
  }
}

void Allocator::Grant(int32_t a, const Option& o, absl::Span<const Use> uses) {
  for (const Use& u : uses.subspan(o.first_use, o.use_count)) {
    int32_t own = 0;
    for (int32_t h : held_by_[a]) {
      if (holdings_[h].pool == u.pool && reserved_[h]) {
        own += Amount(h);
        out_.kept[h] = 1;
      }
    }
    taken_[u.pool] += std::max(0, Units(u.amount, 1) - own);
    if (own == 0) ++out_.grants[u.pool];
  }
}

}  // namespace utilityd::engine
