// Coordination within a batch: agents share limited pools (attack tokens,
// melee slots) and a batch's decisions are allocated them together,
// deterministically (docs/COORDINATION.md).
//
//   std::vector<PoolSpec> pools = {{.capacity = 2}};   // e.g. tokens on one
//                                                      // player
//   std::vector<Use> uses = {{.pool = 0, .amount = 1}};
//   // Each agent's options in its order of preference:
//   std::vector<Option> goblin = {
//       {.action = 0, .target = 0, .score = 0.9f, .first_use = 0,
//        .use_count = 1},
//       {.action = 2, .score = 0.4f}};
//   std::vector<AllocationAgent> agents = {{goblin}, ...};
//   Allocator allocator;
//   const Allocation& a = allocator.Allocate(pools, {}, agents, uses);
//   // a.chosen[i]: the option agent i gets; a.denied[i]: what it was
//   // refused first, and where.
//
// The rule, per batch:
//   1. Holders keep. A holding of an agent outside the batch stays until
//      the game server stops reporting it. A holding of an agent in the
//      batch is reserved for it while its first option (its decision
//      without coordination) uses that pool: its action continues. A
//      holding whose agent's first option does not use the pool is
//      released. Holdings are reserved in the order given, up to capacity;
//      any beyond capacity are released.
//   2. Highest decision first. Agents go in order of their first option's
//      score (their decision's final score), highest first; ties to the
//      lower agent index. Each takes its first option that fits: every
//      pool the option uses has room for what it needs beyond the agent's
//      own reservation there. Options it passes over are denied (the first
//      is reported). An agent whose every option is denied gets none.
//   3. Preemption (a pool whose margin is finite): an option that does not
//      fit may take reservations of that pool from holders whose score is
//      lower than the option's by more than the margin, lowest score first,
//      when that makes it fit. A holder in the batch then competes for the
//      pool like anyone else; an outside holder loses its holding.
//   4. As soon as an agent has settled (on an option, or on none), the
//      reservations it holds in pools its option does not use are
//      released, so the agents after it may take them.
// Capacities are never exceeded: a pool's reservations and grants together
// never pass its capacity.
#ifndef UTILITYD_ENGINE_COORDINATION_H_
#define UTILITYD_ENGINE_COORDINATION_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/types/span.h"

namespace utilityd::engine {

inline constexpr float kNoPreemption = std::numeric_limits<float>::infinity();
// Capacities are taken as 0..kMaxUnits and amounts as 1..kMaxUnits, so
// that no sum can overflow.
inline constexpr int32_t kMaxUnits = 1000000;

struct PoolSpec {
  int32_t capacity = 1;
  // Preemption margin; kNoPreemption (infinity): off.
  float preemption_margin = kNoPreemption;
};

// One existing holding.
struct Holding {
  int32_t pool = 0;
  int32_t amount = 1;
  // The batch agent holding it, or -1 for an agent outside the batch.
  int32_t agent = -1;
  // An outside holder's score, for preemption; NaN: it cannot be preempted.
  float score = std::numeric_limits<float>::quiet_NaN();
};

// What an option takes from one pool.
struct Use {
  int32_t pool = 0;
  int32_t amount = 1;
};

// One candidate an agent could end with.
struct Option {
  int32_t action = -1;
  int32_t target = -1;
  float score = 0;
  // Its uses: uses[first_use .. first_use + use_count).
  uint32_t first_use = 0;
  uint32_t use_count = 0;
};

struct AllocationAgent {
  // In order of preference.
  absl::Span<const Option> options;
};

struct Denial {
  int32_t option = -1;  // -1: the agent was denied nothing
  int32_t pool = -1;    // the first pool without room
};

struct Allocation {
  // Per agent: the option granted (an index into its options); -1 when
  // every option was denied (or it has none).
  std::vector<int32_t> chosen;
  // Per agent: the first option it was denied, and where.
  std::vector<Denial> denied;
  // Per holding: kept (its agent ended with an option using the pool, or
  // it is held outside the batch and was not preempted).
  std::vector<uint8_t> kept;
  // Per holding: the agent that preempted it, or -1.
  std::vector<int32_t> preempted_by;
  // Per pool: held after allocation (kept holdings and new grants).
  std::vector<int32_t> used;
  // Per pool: granted to agents that did not hold it (new grants), denied
  // options, and preemptions, for metrics.
  std::vector<int32_t> grants, denials, preemptions;
};

class Allocator {
 public:
  // Allocates `pools` to `agents` under the rule above. `holdings` lists
  // what is held now. The result is valid until the next call.
  const Allocation& Allocate(absl::Span<const PoolSpec> pools,
                             absl::Span<const Holding> holdings,
                             absl::Span<const AllocationAgent> agents,
                             absl::Span<const Use> uses);

 private:
  // The steps of Allocate: clears the result for `agents` agents; reserves
  // the holdings (rule 1); gives agent `a` its first option that fits
  // (rules 2 and 3); takes option `o` for agent `a`, keeping what it holds.
  void Reset(size_t agents);
  void Reserve(absl::Span<const AllocationAgent> agents,
               absl::Span<const Use> uses);
  void Settle(int32_t a, absl::Span<const AllocationAgent> agents,
              absl::Span<const Use> uses);
  void Grant(int32_t a, const Option& o, absl::Span<const Use> uses);
  // Room the option of agent `a` lacks in pool `p` (0 when it fits there).
  int32_t Lacks(int32_t a, int32_t p, int32_t amount) const;
  // Pool p's capacity and holding h's amount, clamped (kMaxUnits).
  int32_t Capacity(int32_t p) const;
  int32_t Amount(int32_t h) const;
  // Frees reservations of pool `p` (lowest score first) from holders other
  // than `a` scoring more than `margin` below `score`, until `lack` is
  // covered; nothing when they cannot cover it. True when covered.
  bool Preempt(int32_t a, int32_t p, int32_t lack, float score, float margin,
               absl::Span<const AllocationAgent> agents);

  absl::Span<const PoolSpec> pools_;
  absl::Span<const Holding> holdings_;
  Allocation out_;
  // Per pool: reserved plus granted so far.
  std::vector<int32_t> taken_;
  // Per holding: still reserved.
  std::vector<uint8_t> reserved_;
  // Per agent: the holdings it has (indices into holdings_).
  std::vector<std::vector<int32_t>> held_by_;
  std::vector<int32_t> victims_;
  std::vector<int32_t> order_;  // agents, highest decision first
};

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_COORDINATION_H_
