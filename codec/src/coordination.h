// Coordination in DecideBatch (docs/COORDINATION.md): agents of sets with
// resources are decided as usual, then held back; once every set of the
// batch is decided, their pools are allocated across the whole batch and
// their decisions become the allocated ones. Internal to the codec.
#ifndef UTILITYD_CODEC_SRC_COORDINATION_H_
#define UTILITYD_CODEC_SRC_COORDINATION_H_

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "target_id.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/coordination.h"
#include "utilityd/engine/decide.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/v1/decision_service.pb.h"

namespace utilityd::codec {

class Coordinator {
 public:
  // One agent held back for allocation.
  struct Agent {
    int index = 0;  // request position (block rows after the snapshots)
    // Its snapshot: the request's, or a block row's made for it (which
    // outlives the batch's allocation).
    const v1::AgentSnapshot* snapshot = nullptr;
    int block = -1, row = -1;  // a block row's place; -1 for a snapshot
    const loader::LoadedSet* set = nullptr;
    engine::AgentInput input;
    engine::BatchDecision decision;  // the engine's; then the allocated one
    engine::BatchDecision scored;    // the engine's, before allocation
    engine::Decision trace;          // explain full only
    uint32_t first_option = 0, option_count = 0;
    uint32_t fallback_option = UINT32_MAX;  // the fallback entry, if any
  };

  // Starts a batch of `request`, whose sets come from `catalog` (its
  // resources' capacities and margins).
  void Clear(const v1::DecideRequest& request, const loader::Catalog& catalog);
  bool empty() const { return agents_.empty(); }

  // Holds back input `g` of the group `decider` just decided (with
  // set_keep_candidates on): its decision, its trace when given, and its
  // options in order of preference.
  void Hold(int index, const loader::LoadedSet& set,
            const engine::AgentInput& input, const engine::BatchDecision& d,
            const engine::Decision* trace, const engine::BatchDecider& decider,
            size_t g, const v1::AgentSnapshot& snapshot);

  // Allocates; afterwards agents() hold the allocated decisions and
  // Describe writes each one's Coordination.
  void Allocate(const v1::DecideRequest& request);
  std::vector<Agent>& agents() { return agents_; }
  const std::vector<Agent>& agents() const { return agents_; }
  void Describe(size_t k, v1::Coordination* out) const;
  // Where allocation changed agent k's decision, writes the scoring's
  // runner-up and margin (before allocation) into out's explanation, if it
  // has one.
  void DescribeRunnerUp(size_t k, v1::Decision* out) const;
  // After allocation: agent k's allocated option (null when it got none),
  // and whether its scored choice was denied.
  const engine::Option* Chosen(size_t k) const;
  bool Denied(size_t k) const;
  // After allocation: the agent at request position `index`, or -1 when it
  // is not held.
  int Find(int index) const;
  // Every pool touched, after allocation.
  void WritePools(v1::DecideResponse* response) const;
  // Per resource name a set declares (names only the request gives are
  // never counted: they are client input): new grants, denials and
  // preemptions of this batch.
  struct Counts {
    std::string resource;
    int grants = 0, denials = 0, preemptions = 0;
  };
  std::vector<Counts> CountsByResource() const;

  // Frees the working memory when a batch left more than `keep_pools`
  // pools or `keep_holdings` holdings' worth of it (one thread keeps one
  // coordinator across batches: without this, one large request's memory
  // would stay with the thread for good).
  void ReleaseIfLarge(size_t keep_pools, size_t keep_holdings);

 private:
  struct PoolInfo {
    std::string resource, target_id;
    bool capacity_given = false;
    bool declared = false;  // a set of the catalog declares the resource
  };
  // One holder of a pool after allocation: a batch agent (index into
  // agents_) or an outside holding (index into holdings_).
  struct PoolHolder {
    int32_t agent, holding, amount;
  };
  using PoolKey = std::pair<absl::string_view, absl::string_view>;
  static bool ByIndex(const Agent& x, const Agent& y) {
    return x.index < y.index;
  }

  // The pool (resource, target): listed by the request, else added with the
  // catalog's capacity (1 for a name no set declares).
  int32_t PoolFor(absl::string_view resource, absl::string_view target_id);
  // Appends option (action, target, score) of the agent being held, with its
  // uses; true when it uses nothing (no later option is ever reached).
  bool AddOption(const engine::CompiledBehaviourSet& cs,
                 const v1::AgentSnapshot& snapshot, int action, int target,
                 float score);
  // The agent's other eligible candidates into sort_ (all but its decision).
  void CollectCandidates(const engine::CompiledBehaviourSet& cs,
                         const engine::AgentInput& input,
                         const engine::BatchDecision& d,
                         const engine::BatchDecider& decider, size_t g);
  // The holdings the request and the batch's agents report.
  void CollectHoldings(const v1::DecideRequest& request);
  // Who holds each pool after allocation, and the allocated decisions.
  void ApplyAllocation();
  const std::string& HolderId(const PoolHolder& x) const;

  const loader::Catalog* catalog_ = nullptr;
  std::vector<Agent> agents_;
  std::vector<engine::Option> options_;
  std::vector<engine::Use> uses_;
  std::vector<engine::PoolSpec> pools_;
  std::vector<PoolInfo> info_;
  absl::flat_hash_map<PoolKey, int32_t> pool_index_;
  absl::flat_hash_map<absl::string_view, int32_t> by_id_;  // agent id -> k
  absl::flat_hash_set<
      std::tuple<absl::string_view, absl::string_view, absl::string_view>>
      seen_;  // (resource, target, agent id) already holding
  std::vector<std::vector<PoolHolder>> holders_;  // per pool
  std::vector<engine::Holding> holdings_;
  std::vector<std::string> holding_agent_ids_;  // per holding
  std::vector<engine::AllocationAgent> allocation_agents_;
  engine::Allocator allocator_;
  const engine::Allocation* allocation_ = nullptr;
  std::vector<std::pair<float, engine::Option>> sort_;  // scratch
};

}  // namespace utilityd::codec

#endif  // UTILITYD_CODEC_SRC_COORDINATION_H_
