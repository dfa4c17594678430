// The allocator against brute force: on thousands of random small batches
// (pools of capacity 0-3, agents with up to four options using up to two
// pools, holdings inside and outside the batch), every assignment of
// options to agents is enumerated and those that satisfy the stated rule
// written as conditions — feasible, and each agent has its first option
// not blocked by the choices of the agents that go before it and by the
// reservations still standing at its turn — are kept.
// Exactly one must satisfy it, and it must be the allocator's. Plus the rule's
// named cases: holders keep, the order of ties, preemption by margin,
// capacities never exceeded with preemption on.
#include "utilityd/engine/coordination.h"

#include <cmath>
#include <functional>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace utilityd::engine {
namespace {

struct Batch {
  std::vector<PoolSpec> pools;
  std::vector<Holding> holdings;
  std::vector<std::vector<Option>> options;  // per agent
  std::vector<Use> uses;
  std::vector<AllocationAgent> agents;

  void Link() {
    agents.clear();
    for (const auto& o : options) agents.push_back({o});
  }
  absl::Span<const Use> UsesOf(const Option& o) const {
    return absl::MakeConstSpan(uses).subspan(o.first_use, o.use_count);
  }
  // Appends an option using `pools` (pool, amount pairs).
  void Add(int agent, int action, float score,
           std::vector<std::pair<int, int>> pools_used) {
    Option o{.action = action, .score = score};
    o.first_use = static_cast<uint32_t>(uses.size());
    for (auto [p, amount] : pools_used) uses.push_back({p, amount});
    o.use_count = static_cast<uint32_t>(pools_used.size());
    if (options.size() <= static_cast<size_t>(agent)) {
      options.resize(agent + 1);
    }
    options[agent].push_back(o);
  }
};

Batch RandomBatch(std::mt19937& rng) {
  Batch b;
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const int pools = 1 + pick(3);
  for (int p = 0; p < pools; ++p) b.pools.push_back({.capacity = pick(4)});
  const int agents = 1 + pick(5);
  for (int a = 0; a < agents; ++a) {
    const int count = 1 + pick(4);
    for (int k = 0; k < count; ++k) {
      std::vector<std::pair<int, int>> used;
      const int n_uses = pick(3);
      for (int u = 0; u < n_uses && u < pools; ++u) {
        const int p = (pick(pools) + u) % pools;
        bool dup = false;
        for (auto& x : used) dup |= x.first == p;
        if (!dup) used.push_back({p, 1 + pick(2)});
      }
      // Scores on a coarse grid, so that ties happen.
      b.Add(a, k, static_cast<float>(pick(6)) / 5.0f, used);
    }
  }
  const int holdings = pick(4);
  for (int h = 0; h < holdings; ++h) {
    b.holdings.push_back({.pool = pick(pools),
                          .amount = 1 + pick(2),
                          .agent = pick(3) == 0 ? -1 : pick(agents)});
  }
  b.Link();
  return b;
}

// The rule as conditions on a whole assignment (x[a]: option index, -1
// none); true when `x` satisfies it.
bool SatisfiesTheRule(const Batch& b, const std::vector<int>& x) {
  const int pools = static_cast<int>(b.pools.size());
  const int n = static_cast<int>(b.options.size());
  auto uses = [&](const Option& o, int p) {
    for (const Use& u : b.UsesOf(o)) {
      if (u.pool == p) return true;
    }
    return false;
  };
  // Holders keep: the reservations (holding indices), and each agent's own.
  std::vector<const Holding*> reserved;
  std::vector<int> reserved_in(pools, 0);
  std::vector<std::vector<int>> own(n, std::vector<int>(pools, 0));
  for (const Holding& h : b.holdings) {
    if (h.agent >= 0 && !uses(b.options[h.agent][0], h.pool)) continue;
    if (reserved_in[h.pool] + h.amount > b.pools[h.pool].capacity) continue;
    reserved_in[h.pool] += h.amount;
    reserved.push_back(&h);
    if (h.agent >= 0) own[h.agent][h.pool] += h.amount;
  }
  auto need = [&](int a, const Option& o, int p) {
    for (const Use& u : b.UsesOf(o)) {
      if (u.pool == p) return std::max(0, u.amount - own[a][p]);
    }
    return 0;
  };
  // Agent c goes before agent a: its decision scores higher (ties: the
  // lower index).
  auto before = [&](int c, int a) {
    const float sc = b.options[c][0].score, sa = b.options[a][0].score;
    return sc != sa ? sc > sa : c < a;
  };
  // Agent c ended with an option that uses pool p.
  auto ends_using = [&](int c, int p) {
    return x[c] >= 0 && uses(b.options[c][x[c]], p);
  };
  // What holdings still reserve in pool p when agent a takes its turn: an
  // outside holder's, a's own, and those of the agents after a; an agent
  // before a has settled, and keeps only where its option uses the pool.
  auto reserved_at = [&](int a, int p) {
    int units = 0;
    for (const Holding* h : reserved) {
      if (h->pool != p) continue;
      if (h->agent < 0 || h->agent == a || !before(h->agent, a) ||
          ends_using(h->agent, p)) {
        units += h->amount;
      }
    }
    return units;
  };
  // Does option y of agent a fit beside the agents that go before it?
  auto blocked = [&](int a, const Option& y) {
    for (const Use& u : b.UsesOf(y)) {
      int taken = reserved_at(a, u.pool) + need(a, y, u.pool);
      for (int c = 0; c < n; ++c) {
        if (c == a || x[c] < 0) continue;
        const Option& oc = b.options[c][x[c]];
        if (before(c, a)) taken += need(c, oc, u.pool);
      }
      if (taken > b.pools[u.pool].capacity) return true;
    }
    return false;
  };
  // Feasible: what is held at the end (outside holders, holders whose
  // option uses the pool, and every option's need) fits.
  for (int p = 0; p < pools; ++p) {
    int taken = 0;
    for (const Holding* h : reserved) {
      if (h->pool == p && (h->agent < 0 || ends_using(h->agent, p))) {
        taken += h->amount;
      }
    }
    for (int a = 0; a < n; ++a) {
      if (x[a] >= 0) taken += need(a, b.options[a][x[a]], p);
    }
    if (taken > b.pools[p].capacity) return false;
  }
  // Each agent has its first option that is not blocked at its turn.
  for (int a = 0; a < n; ++a) {
    if (x[a] >= 0 && blocked(a, b.options[a][x[a]])) return false;
    const int end = x[a] < 0 ? static_cast<int>(b.options[a].size()) : x[a];
    for (int y = 0; y < end; ++y) {
      if (!blocked(a, b.options[a][y])) return false;
    }
  }
  return true;
}

TEST(CoordinationTest, EqualsTheOnlyAssignmentTheRuleAllowsByBruteForce) {
  std::mt19937 rng(16);
  Allocator allocator;
  int denied = 0, none = 0;
  for (int round = 0; round < 3000; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const Batch b = RandomBatch(rng);
    const Allocation& got =
        allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
    const int n = static_cast<int>(b.options.size());
    std::vector<int> x(n, -1);
    std::vector<std::vector<int>> satisfying;
    // Every assignment: each agent one of its options, or none.
    std::function<void(int)> walk = [&](int a) {
      if (a == n) {
        if (SatisfiesTheRule(b, x)) satisfying.push_back(x);
        return;
      }
      for (int k = -1; k < static_cast<int>(b.options[a].size()); ++k) {
        x[a] = k;
        walk(a + 1);
      }
    };
    walk(0);
    if (satisfying.size() != 1) {
      std::string text;
      for (size_t p = 0; p < b.pools.size(); ++p)
        text += "pool " + std::to_string(p) + " cap " +
                std::to_string(b.pools[p].capacity) + "\n";
      for (const Holding& h : b.holdings)
        text += "holding pool " + std::to_string(h.pool) + " amount " +
                std::to_string(h.amount) + " agent " + std::to_string(h.agent) +
                "\n";
      for (int a = 0; a < n; ++a) {
        for (const Option& o : b.options[a]) {
          text += "agent " + std::to_string(a) + " score " +
                  std::to_string(o.score) + " uses";
          for (const Use& u : b.UsesOf(o))
            text +=
                " " + std::to_string(u.pool) + "x" + std::to_string(u.amount);
          text += "\n";
        }
      }
      text += "got:";
      for (int c : got.chosen) text += " " + std::to_string(c);
      ADD_FAILURE() << text;
    }
    ASSERT_EQ(satisfying.size(), 1u);
    EXPECT_EQ(got.chosen, satisfying[0]);
    for (size_t p = 0; p < b.pools.size(); ++p) {
      EXPECT_LE(got.used[p], b.pools[p].capacity);
      EXPECT_GE(got.used[p], 0);
    }
    for (int a = 0; a < n; ++a) {
      denied += got.denied[a].option >= 0;
      none += got.chosen[a] < 0;
      // A denial is reported exactly when the agent did not get its first
      // option.
      EXPECT_EQ(got.denied[a].option >= 0, got.chosen[a] != 0);
    }
  }
  // The batches exercise the rule: many denials, some agents left with
  // nothing.
  EXPECT_GT(denied, 1000);
  EXPECT_GT(none, 50);
}

TEST(CoordinationTest, HighestDecisionFirstAndTiesToTheLowerIndex) {
  Batch b;
  b.pools = {{.capacity = 2}};
  for (int a = 0; a < 4; ++a) {
    b.Add(a, 0, a == 3 ? 0.9f : 0.5f, {{0, 1}});  // attack
    b.Add(a, 1, 0.2f, {});                        // circle
  }
  b.Link();
  Allocator allocator;
  const Allocation& got =
      allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
  // Agent 3 scores highest; then agents 0 and 1 tie with 2, the lower
  // index first.
  EXPECT_THAT(got.chosen, ::testing::ElementsAre(0, 1, 1, 0));
  EXPECT_EQ(got.denied[1].option, 0);
  EXPECT_EQ(got.denied[1].pool, 0);
  EXPECT_EQ(got.used[0], 2);
  EXPECT_EQ(got.grants[0], 2);
  EXPECT_EQ(got.denials[0], 2);
}

TEST(CoordinationTest, HoldersKeepWhileTheirActionContinues) {
  Batch b;
  b.pools = {{.capacity = 1}};
  b.Add(0, 0, 0.3f, {{0, 1}});  // holds; keeps attacking at a low score
  b.Add(0, 1, 0.1f, {});
  b.Add(1, 0, 0.9f, {{0, 1}});  // scores higher, but the token is taken
  b.Add(1, 1, 0.2f, {});
  b.Add(2, 1, 0.8f, {});  // held one, does something else now
  b.Add(2, 0, 0.7f, {{0, 1}});
  b.Link();
  b.holdings = {{.pool = 0, .agent = 0}, {.pool = 0, .agent = 2}};
  Allocator allocator;
  const Allocation& got =
      allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
  EXPECT_THAT(got.chosen, ::testing::ElementsAre(0, 1, 0));
  EXPECT_THAT(got.kept, ::testing::ElementsAre(1, 0));
  EXPECT_EQ(got.grants[0], 0);  // agent 0 kept its own
  EXPECT_EQ(got.used[0], 1);

  // Outside holders keep too, and a full pool refuses everyone else.
  b.holdings = {{.pool = 0, .agent = -1}};
  const Allocation& outside =
      allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
  EXPECT_THAT(outside.chosen, ::testing::ElementsAre(1, 1, 0));
  EXPECT_THAT(outside.kept, ::testing::ElementsAre(1));
}

TEST(CoordinationTest, AHoldingIsReleasedAsSoonAsItsHolderSettlesElsewhere) {
  Batch b;
  b.pools = {{.capacity = 1}, {.capacity = 0}};
  // Agent 0 holds pool 0 and its decision uses it, but also pool 1, which
  // has no room: it settles on an option that uses nothing.
  b.Add(0, 0, 0.9f, {{0, 1}, {1, 1}});
  b.Add(0, 1, 0.3f, {});
  // Agent 1 goes after it and wants pool 0: the holding is free by then.
  b.Add(1, 0, 0.5f, {{0, 1}});
  b.Add(1, 1, 0.1f, {});
  b.holdings = {{.pool = 0, .agent = 0}};
  b.Link();
  Allocator allocator;
  const Allocation& got =
      allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
  EXPECT_THAT(got.chosen, ::testing::ElementsAre(1, 0));
  EXPECT_THAT(got.kept, ::testing::ElementsAre(0));
  EXPECT_EQ(got.denied[0].pool, 1);
  EXPECT_EQ(got.denied[1].option, -1);
  EXPECT_EQ(got.used[0], 1);
  EXPECT_EQ(got.grants[0], 1);
}

TEST(CoordinationTest, PreemptionTakesFromTheLowestHolderBeyondTheMargin) {
  Batch b;
  b.pools = {{.capacity = 2, .preemption_margin = 0.25f}};
  b.Add(0, 0, 0.7f, {{0, 1}});  // holder at 0.7: 0.9 beats it by only 0.2
  b.Add(0, 1, 0.1f, {});
  b.Add(1, 0, 0.9f, {{0, 1}});  // beats the outside holder at 0.6 by 0.3
  b.Add(1, 1, 0.2f, {});
  b.Add(2, 0, 0.8f, {{0, 1}});  // beats nobody by more than 0.25 now
  b.Add(2, 1, 0.3f, {});
  b.Link();
  b.holdings = {{.pool = 0, .agent = 0},
                {.pool = 0, .agent = -1, .score = 0.6f}};
  Allocator allocator;
  const Allocation& got =
      allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
  EXPECT_THAT(got.chosen, ::testing::ElementsAre(0, 0, 1));
  EXPECT_THAT(got.preempted_by, ::testing::ElementsAre(-1, 1));
  EXPECT_THAT(got.kept, ::testing::ElementsAre(1, 0));
  EXPECT_EQ(got.preemptions[0], 1);
  EXPECT_EQ(got.used[0], 2);

  // Lowest score first: with the holder inside the batch at 0.5, it is
  // the one taken from; it then competes for the pool like anyone else,
  // after the agents that score higher, and finds it full.
  b.options[0][0].score = 0.5f;
  b.Link();
  const Allocation& inside =
      allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
  EXPECT_THAT(inside.preempted_by, ::testing::ElementsAre(1, -1));
  EXPECT_THAT(inside.chosen, ::testing::ElementsAre(1, 0, 1));
  EXPECT_EQ(inside.used[0], 2);

  // Off by default: nobody takes anything, and the holders keep.
  b.pools[0].preemption_margin = kNoPreemption;
  const Allocation& off =
      allocator.Allocate(b.pools, b.holdings, b.agents, b.uses);
  EXPECT_THAT(off.preempted_by, ::testing::ElementsAre(-1, -1));
  EXPECT_THAT(off.chosen, ::testing::ElementsAre(0, 1, 1));
  EXPECT_THAT(off.kept, ::testing::ElementsAre(1, 1));
}

TEST(CoordinationTest, NeverExceedsCapacityAndIsDeterministicWithPreemption) {
  std::mt19937 rng(61);
  Allocator first, second;
  for (int round = 0; round < 3000; ++round) {
    Batch b = RandomBatch(rng);
    for (PoolSpec& p : b.pools) p.preemption_margin = (rng() % 3) * 0.1f;
    for (Holding& h : b.holdings) {
      if (h.agent < 0) h.score = static_cast<float>(rng() % 6) / 5.0f;
    }
    const Allocation a = first.Allocate(b.pools, b.holdings, b.agents, b.uses);
    const Allocation& again =
        second.Allocate(b.pools, b.holdings, b.agents, b.uses);
    EXPECT_EQ(a.chosen, again.chosen);
    EXPECT_EQ(a.preempted_by, again.preempted_by);
    // Recount what is held from the outcome: kept holdings plus what each
    // agent's option needs beyond its own kept holdings.
    std::vector<int> held(b.pools.size(), 0);
    for (size_t h = 0; h < b.holdings.size(); ++h) {
      if (a.kept[h]) held[b.holdings[h].pool] += b.holdings[h].amount;
    }
    for (size_t i = 0; i < b.options.size(); ++i) {
      if (a.chosen[i] < 0) continue;
      for (const Use& u : b.UsesOf(b.options[i][a.chosen[i]])) {
        int own = 0;
        for (size_t h = 0; h < b.holdings.size(); ++h) {
          const Holding& x = b.holdings[h];
          if (a.kept[h] && x.agent == static_cast<int>(i) && x.pool == u.pool)
            own += x.amount;
        }
        held[u.pool] += std::max(0, u.amount - own);
      }
    }
    for (size_t p = 0; p < b.pools.size(); ++p) {
      EXPECT_EQ(held[p], a.used[p]) << "round " << round;
      EXPECT_LE(a.used[p], b.pools[p].capacity) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace utilityd::engine
