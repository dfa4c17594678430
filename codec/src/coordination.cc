#include "coordination.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace utilityd::codec {
namespace {

// "attack@player-1", "(no action)".
std::string CandidateName(const engine::CompiledBehaviourSet& set, int action,
                          const std::string& target) {
  if (action < 0) return "(no action)";
  return target.empty() ? set.actions()[action].name
                        : absl::StrCat(set.actions()[action].name, "@", target);
}

}  // namespace

void Coordinator::ReleaseIfLarge(size_t keep_pools, size_t keep_holdings) {
  if (pools_.capacity() <= keep_pools && holders_.capacity() <= keep_pools &&
      holdings_.capacity() <= keep_holdings &&
      options_.capacity() <= keep_holdings) {
    return;
  }
  auto release = [](auto& container) {
    std::remove_reference_t<decltype(container)>().swap(container);
  };
  release(agents_);
  release(options_);
  release(uses_);
  release(pools_);
  release(info_);
  release(pool_index_);
  release(by_id_);
  release(seen_);
  release(holders_);
  release(holdings_);
  release(holding_agent_ids_);
  release(allocation_agents_);
  release(sort_);
  allocator_ = engine::Allocator();
  allocation_ = nullptr;
}

void Coordinator::Clear(const v1::DecideRequest& request,
                        const loader::Catalog& catalog) {
  catalog_ = &catalog;
  agents_.clear();
  options_.clear();
  uses_.clear();
  pools_.clear();
  info_.clear();
  pool_index_.clear();
  allocation_ = nullptr;
  // The request's pools first, in its order; a pool listed more than once
  // takes the first capacity given (and the holders of every listing).
  for (const v1::ResourcePool& p : request.pools()) {
    const int32_t pool = PoolFor(p.resource(), p.target_id());
    if (p.has_capacity() && !info_[pool].capacity_given) {
      // Clamped as the allocator takes it, so that the pool states say so.
      pools_[pool].capacity = std::clamp(p.capacity(), 0, engine::kMaxUnits);
      info_[pool].capacity_given = true;
    }
  }
}

int32_t Coordinator::PoolFor(absl::string_view resource,
                             absl::string_view target_id) {
  // The views point into the request, the sets and the block rows'
  // snapshots, which outlive the batch's allocation.
  auto [it, added] = pool_index_.try_emplace(
      PoolKey{resource, target_id}, static_cast<int32_t>(pools_.size()));
  if (added) {
    // One capacity per resource name across the catalog, whichever agents
    // the batch holds; a name no set declares: 1.
    const loader::CatalogResource* declared = catalog_->FindResource(resource);
    engine::PoolSpec spec;
    if (declared != nullptr) {
      spec.capacity = declared->capacity;
      spec.preemption_margin = declared->preemption_margin;
    }
    pools_.push_back(spec);
    info_.push_back({std::string(resource), std::string(target_id), false,
                     declared != nullptr});
  }
  return it->second;
}

bool Coordinator::AddOption(const engine::CompiledBehaviourSet& cs,
                            const v1::AgentSnapshot& snapshot, int action,
                            int target, float score) {
  engine::Option o{.action = action, .target = target, .score = score};
  o.first_use = static_cast<uint32_t>(uses_.size());
  for (const engine::CompiledUse& u : cs.uses(action)) {
    const engine::CompiledResource& r = cs.resources()[u.resource];
    // A view of the request's own string (never of a temporary: the key
    // outlives this call).
    const absl::string_view target_id =
        r.per_target ? absl::string_view(TargetId(snapshot, target))
                     : absl::string_view();
    uses_.push_back({.pool = PoolFor(r.name, target_id), .amount = u.amount});
  }
  o.use_count = static_cast<uint32_t>(uses_.size()) - o.first_use;
  options_.push_back(o);
  return o.use_count == 0;
}

void Coordinator::CollectCandidates(const engine::CompiledBehaviourSet& cs,
                                    const engine::AgentInput& input,
                                    const engine::BatchDecision& d,
                                    const engine::BatchDecider& decider,
                                    size_t g) {
  sort_.clear();
  // Every eligible candidate, the fallback action too: it competes in its
  // rank and score place like any other.
  const float min_score = static_cast<float>(cs.selection().min_score);
  const int targets = static_cast<int>(input.targets.size());
  for (int a = 0; a < cs.action_count(); ++a) {
    const bool per_target = cs.actions()[a].per_target;
    for (int t = per_target ? 0 : -1; t < (per_target ? targets : 0); ++t) {
      if (a == d.action && t == d.target) continue;
      const float s = decider.CandidateScore(cs, g, a, t);
      if (!(s > 0) || s < min_score) continue;
      sort_.push_back(
          {s, engine::Option{.action = a, .target = t, .score = s}});
    }
  }
}

void Coordinator::Hold(int index, const loader::LoadedSet& set,
                       const engine::AgentInput& input,
                       const engine::BatchDecision& d,
                       const engine::Decision* trace,
                       const engine::BatchDecider& decider, size_t g,
                       const v1::AgentSnapshot& snapshot) {
  const engine::CompiledBehaviourSet& cs = set.compiled;
  Agent& agent = agents_.emplace_back();
  agent.index = index;
  agent.snapshot = &snapshot;
  agent.set = &set;
  agent.input = input;
  agent.decision = d;
  agent.scored = d;
  if (trace != nullptr) agent.trace = *trace;
  agent.first_option = static_cast<uint32_t>(options_.size());
  // The decision first; then every other eligible candidate, higher ranks
  // first, then by score (ties to the lower action, then target); then, as
  // the last resort, the fallback when it is not among them. Options after
  // one that uses nothing are never reached (it always fits): the list
  // ends there.
  bool complete = false;
  bool fallback_listed = d.action >= 0 && d.action == cs.fallback_action();
  if (d.action >= 0)
    complete = AddOption(cs, snapshot, d.action, d.target, d.score);
  if (d.fallback) agent.fallback_option = 0;
  if (!complete) CollectCandidates(cs, input, d, decider, g);
  // In order of preference (a total order: ties to the lower action, then
  // target), taken best first until an option that uses nothing. A heap:
  // building it is linear, and each pick is logarithmic, so an agent whose
  // every target's candidate uses a resource costs n log n, not n^2.
  auto worse = [&](const auto& x, const auto& y) {
    const int rx = cs.actions()[x.second.action].rank;
    const int ry = cs.actions()[y.second.action].rank;
    if (rx != ry) return rx < ry;
    if (x.first != y.first) return x.first < y.first;
    if (x.second.action != y.second.action) {
      return x.second.action > y.second.action;
    }
    return x.second.target > y.second.target;
  };
  if (!complete) std::make_heap(sort_.begin(), sort_.end(), worse);
  while (!complete && !sort_.empty()) {
    std::pop_heap(sort_.begin(), sort_.end(), worse);
    const auto& best = sort_.back();
    fallback_listed |= best.second.action == cs.fallback_action();
    complete = AddOption(cs, snapshot, best.second.action, best.second.target,
                         best.first);
    sort_.pop_back();
  }
  if (!complete && !fallback_listed && cs.fallback_action() >= 0) {
    agent.fallback_option =
        static_cast<uint32_t>(options_.size()) - agent.first_option;
    AddOption(cs, snapshot, cs.fallback_action(), -1,
              decider.CandidateScore(cs, g, cs.fallback_action(), -1));
  }
  agent.option_count =
      static_cast<uint32_t>(options_.size()) - agent.first_option;
}

void Coordinator::CollectHoldings(const v1::DecideRequest& request) {
  // Batch agents by id (the first with each id), when anything is held.
  by_id_.clear();
  bool any_held = false;
  for (const v1::ResourcePool& p : request.pools()) {
    any_held |= !p.holders().empty();
  }
  for (const Agent& a : agents_) {
    any_held |= !a.snapshot->held().empty();
  }
  for (size_t k = 0; any_held && k < agents_.size(); ++k) {
    by_id_.try_emplace(agents_[k].snapshot->agent_id(),
                       static_cast<int32_t>(k));
  }
  holdings_.clear();
  holding_agent_ids_.clear();
  seen_.clear();
  auto hold = [&](const std::string& resource, const std::string& target,
                  const std::string& agent_id, int32_t amount,
                  std::optional<float> score) {
    if (!seen_.insert({resource, target, agent_id}).second) return;
    const auto it = by_id_.find(agent_id);
    engine::Holding h{.pool = PoolFor(resource, target),
                      .amount = std::max(1, amount),
                      .agent = it == by_id_.end() ? -1 : it->second};
    if (h.agent < 0 && score.has_value()) h.score = *score;
    holdings_.push_back(h);
    holding_agent_ids_.push_back(agent_id);
  };
  for (const v1::ResourcePool& p : request.pools()) {
    for (const v1::ResourceHolder& h : p.holders()) {
      if (h.until() > 0 && h.until() <= request.game_time()) continue;
      hold(p.resource(), p.target_id(), h.agent_id(),
           h.has_amount() ? h.amount() : 1,
           h.has_score() ? std::optional<float>(h.score()) : std::nullopt);
    }
  }
  for (const Agent& a : agents_) {
    const v1::AgentSnapshot& s = *a.snapshot;
    for (const v1::HeldResource& r : s.held()) {
      hold(r.resource(), r.target_id(), s.agent_id(),
           r.has_amount() ? r.amount() : 1, std::nullopt);
    }
  }
}

void Coordinator::Allocate(const v1::DecideRequest& request) {
  // Held set by set; allocated in request order, so that holdings and
  // ties go by the agents' places in the request.
  if (!std::is_sorted(agents_.begin(), agents_.end(), ByIndex)) {
    std::sort(agents_.begin(), agents_.end(), ByIndex);
  }
  CollectHoldings(request);
  allocation_agents_.clear();
  for (const Agent& a : agents_) {
    allocation_agents_.push_back({absl::MakeConstSpan(options_).subspan(
        a.first_option, a.option_count)});
  }
  allocation_ =
      &allocator_.Allocate(pools_, holdings_, allocation_agents_, uses_);
  ApplyAllocation();
}

void Coordinator::ApplyAllocation() {
  // Who holds each pool now: outside holders kept, in the order sent,
  // then the batch's agents in request order.
  holders_.assign(pools_.size(), {});
  for (size_t h = 0; h < holdings_.size(); ++h) {
    if (holdings_[h].agent < 0 && allocation_->kept[h]) {
      holders_[holdings_[h].pool].push_back(
          {-1, static_cast<int32_t>(h), holdings_[h].amount});
    }
  }
  for (int32_t k = 0; k < static_cast<int32_t>(agents_.size()); ++k) {
    const int32_t chosen = allocation_->chosen[k];
    if (chosen < 0) continue;
    const engine::Option& o = options_[agents_[k].first_option + chosen];
    for (uint32_t u = 0; u < o.use_count; ++u) {
      const engine::Use& use = uses_[o.first_use + u];
      holders_[use.pool].push_back({k, -1, use.amount});
    }
  }
  // The allocated decisions. Where allocation changed one, its runner-up
  // and margin are the scoring's, before allocation (Describe writes them):
  // the allocated decision itself has none, so it feeds no margin metric.
  for (size_t k = 0; k < agents_.size(); ++k) {
    Agent& a = agents_[k];
    const int32_t chosen = allocation_->chosen[k];
    if (chosen == 0) continue;  // its own decision
    engine::BatchDecision& d = a.decision;
    if (chosen < 0) {
      d.action = -1;
      d.target = -1;
      d.score = 0;
      d.fallback = false;
    } else {
      const engine::Option& o = options_[a.first_option + chosen];
      d.action = o.action;
      d.target = o.target;
      d.score = o.score;
      d.fallback = static_cast<uint32_t>(chosen) == a.fallback_option;
    }
    d.switched = engine::Switched(a.input, d.action, d.target);
    d.runner_up_action = -1;
    d.runner_up_target = -1;
    d.runner_up_score = 0;
    static_cast<engine::BatchDecision&>(a.trace) = d;
  }
}

const std::string& Coordinator::HolderId(const PoolHolder& x) const {
  return x.agent >= 0 ? agents_[x.agent].snapshot->agent_id()
                      : holding_agent_ids_[x.holding];
}

const engine::Option* Coordinator::Chosen(size_t k) const {
  const int32_t chosen = allocation_->chosen[k];
  return chosen < 0 ? nullptr : &options_[agents_[k].first_option + chosen];
}

int Coordinator::Find(int index) const {
  const auto it =
      std::lower_bound(agents_.begin(), agents_.end(), index,
                       [](const Agent& a, int i) { return a.index < i; });
  return it != agents_.end() && it->index == index
             ? static_cast<int>(it - agents_.begin())
             : -1;
}

bool Coordinator::Denied(size_t k) const {
  return allocation_->denied[k].option >= 0;
}

void Coordinator::Describe(size_t k, v1::Coordination* out) const {
  const Agent& a = agents_[k];
  const engine::CompiledBehaviourSet& cs = a.set->compiled;
  const v1::AgentSnapshot& snapshot = *a.snapshot;
  const int32_t chosen = allocation_->chosen[k];
  auto kept_in = [&](int32_t pool) {
    for (size_t h = 0; h < holdings_.size(); ++h) {
      if (holdings_[h].agent == static_cast<int32_t>(k) &&
          holdings_[h].pool == pool && allocation_->kept[h]) {
        return true;
      }
    }
    return false;
  };
  if (chosen >= 0) {
    const engine::Option& o = options_[a.first_option + chosen];
    for (uint32_t u = 0; u < o.use_count; ++u) {
      const engine::Use& use = uses_[o.first_use + u];
      v1::ResourceGrant* g = out->add_granted();
      g->set_resource(info_[use.pool].resource);
      g->set_target_id(info_[use.pool].target_id);
      g->set_amount(use.amount);
      g->set_kept(kept_in(use.pool));
    }
  }
  for (size_t h = 0; h < holdings_.size(); ++h) {
    if (holdings_[h].agent != static_cast<int32_t>(k) || allocation_->kept[h])
      continue;
    v1::ResourceGrant* r = out->add_released();
    r->set_resource(info_[holdings_[h].pool].resource);
    r->set_target_id(info_[holdings_[h].pool].target_id);
    r->set_amount(holdings_[h].amount);
    if (const int32_t by = allocation_->preempted_by[h]; by >= 0) {
      r->set_preempted_by(agents_[by].snapshot->agent_id());
    }
  }
  const engine::Denial& denial = allocation_->denied[k];
  if (denial.option >= 0) {
    const engine::Option& o = options_[a.first_option + denial.option];
    v1::ResourceDenial* x = out->mutable_denied();
    const std::string& target = TargetId(snapshot, o.target);
    x->set_action(cs.actions()[o.action].name);
    x->set_action_index(o.action);
    x->set_target_id(target);
    x->set_score(o.score);
    const PoolInfo& pool = info_[denial.pool];
    x->set_resource(pool.resource);
    x->set_pool_target_id(pool.target_id);
    x->set_capacity(pools_[denial.pool].capacity);
    std::string message = absl::StrCat(
        "denied ", CandidateName(cs, o.action, target), ": ", pool.resource,
        pool.target_id.empty() ? "" : absl::StrCat(" on ", pool.target_id),
        ", capacity ", pools_[denial.pool].capacity);
    const char* separator = ", held by ";
    for (const PoolHolder& h : holders_[denial.pool]) {
      const std::string& id = HolderId(h);
      x->add_holders(id);
      absl::StrAppend(&message, separator, id);
      separator = ", ";
    }
    x->set_message(std::move(message));
  }
  if (chosen != 0 && a.option_count > 0) {
    const engine::Option& first = options_[a.first_option];
    out->set_uncoordinated_action(cs.actions()[first.action].name);
    out->set_uncoordinated_target_id(TargetId(snapshot, first.target));
    out->set_uncoordinated_score(first.score);
  }
}

void Coordinator::DescribeRunnerUp(size_t k, v1::Decision* out) const {
  const Agent& a = agents_[k];
  const engine::BatchDecision& s = a.scored;
  if (allocation_->chosen[k] == 0 || !out->has_explanation() ||
      s.runner_up_action < 0) {
    return;
  }
  v1::Explanation* x = out->mutable_explanation();
  x->set_runner_up_action(a.set->compiled.actions()[s.runner_up_action].name);
  x->set_runner_up_target(TargetId(*a.snapshot, s.runner_up_target));
  x->set_runner_up_score(s.runner_up_score);
  x->set_margin(s.score - s.runner_up_score);
}

void Coordinator::WritePools(v1::DecideResponse* response) const {
  for (size_t p = 0; p < pools_.size(); ++p) {
    v1::PoolState* s = response->add_pools();
    s->set_resource(info_[p].resource);
    s->set_target_id(info_[p].target_id);
    s->set_capacity(pools_[p].capacity);
    const int32_t used = allocation_ != nullptr ? allocation_->used[p] : 0;
    s->set_used(used);
    s->set_remaining(std::max(0, pools_[p].capacity - used));
    if (allocation_ == nullptr) continue;
    for (const PoolHolder& h : holders_[p]) {
      v1::ResourceHolder* x = s->add_holders();
      x->set_agent_id(HolderId(h));
      x->set_amount(h.amount);
    }
  }
}

std::vector<Coordinator::Counts> Coordinator::CountsByResource() const {
  std::vector<Counts> out;
  if (allocation_ == nullptr) return out;
  for (size_t p = 0; p < pools_.size(); ++p) {
    if (!info_[p].declared) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const Counts& c) {
      return c.resource == info_[p].resource;
    });
    if (it == out.end()) {
      out.push_back({info_[p].resource});
      it = out.end() - 1;
    }
    it->grants += allocation_->grants[p];
    it->denials += allocation_->denials[p];
    it->preemptions += allocation_->preemptions[p];
  }
  return out;
}

}  // namespace utilityd::codec
