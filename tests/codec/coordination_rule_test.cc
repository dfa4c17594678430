// Coordination through DecideBatch against the rule of docs/COORDINATION.md
// written out in this file, on two squad sets that share resources by name
// with other capacities (the catalog's capacity is the smallest declared),
// one of them with a fallback action and ranks, the other with neither.
// Random batches mix both sets' agents in the request, list pools that no
// agent's options reach, report holders inside and outside the batch (some
// past their `until`), and override capacities; every answer is checked
// turn by turn against the rule's conditions — decision and preference
// order from each agent's own breakdown, capacities from the catalog, what
// stands reserved at each agent's turn — not against the allocator. Plus
// the named cases the rule's defects were found with.
#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "utilityd/codec/batch.h"

namespace utilityd::codec {
namespace {

using ::testing::ElementsAre;
using ::utilityd::testing::IsOk;

// Every score is one factor's value (a linear curve over 0..1), so a batch
// sets its agents' scores directly.
constexpr char kSquad[] = R"(
name: squad
factors: [{name: grenade_want}, {name: cover_want}, {name: hold_want}]
target_factors: [{name: melee_want}, {name: shoot_want}, {name: suppress_want}]
resources:
  - {name: grenade, per_target: false, capacity: 1}
  - {name: melee_slot, per_target: true, capacity: 2}
  - {name: fire_lane, per_target: true, capacity: 3}
actions:
  - name: grenade
    rank: 1
    uses: [{resource: grenade}]
    considerations: [{name: want, factor: grenade_want}]
  - name: melee
    per_target: true
    uses: [{resource: melee_slot}]
    considerations: [{name: want, factor: melee_want, per_target: true}]
  - name: shoot
    per_target: true
    uses: [{resource: fire_lane, amount: 2}]
    considerations: [{name: want, factor: shoot_want, per_target: true}]
  - name: suppress
    per_target: true
    uses: [{resource: fire_lane}, {resource: grenade}]
    considerations: [{name: want, factor: suppress_want, per_target: true}]
  - name: take_cover
    considerations: [{name: want, factor: cover_want}]
  - name: hold
    considerations: [{name: want, factor: hold_want}]
selection: {highest: {}, fallback_action: hold}
)";

// Shares melee_slot and fire_lane with other capacities; no fallback.
constexpr char kSquadB[] = R"(
name: squad_b
factors: [{name: cover_want}]
target_factors: [{name: melee_want}, {name: shoot_want}]
resources:
  - {name: melee_slot, per_target: true, capacity: 3}
  - {name: fire_lane, per_target: true, capacity: 4}
actions:
  - name: melee
    per_target: true
    uses: [{resource: melee_slot}]
    considerations: [{name: want, factor: melee_want, per_target: true}]
  - name: shoot
    per_target: true
    uses: [{resource: fire_lane}]
    considerations: [{name: want, factor: shoot_want, per_target: true}]
  - name: take_cover
    considerations: [{name: want, factor: cover_want}]
selection: {highest: {}}
)";

// The rule's inputs as the documents state them, written down here.
struct Use {
  std::string resource;
  int amount;
};
const std::map<std::string, std::map<std::string, std::vector<Use>>>&
UsesBySet() {
  static const auto* uses =
      new std::map<std::string, std::map<std::string, std::vector<Use>>>{
          {"squad",
           {{"grenade", {{"grenade", 1}}},
            {"melee", {{"melee_slot", 1}}},
            {"shoot", {{"fire_lane", 2}}},
            {"suppress", {{"fire_lane", 1}, {"grenade", 1}}}}},
          {"squad_b",
           {{"melee", {{"melee_slot", 1}}}, {"shoot", {{"fire_lane", 1}}}}}};
  return *uses;
}
// The smallest capacity any set of the catalog declares.
const std::map<std::string, int>& CatalogCapacity() {
  static const auto* c = new std::map<std::string, int>{
      {"grenade", 1}, {"melee_slot", 2}, {"fire_lane", 3}};
  return *c;
}
bool PerTarget(const std::string& resource) { return resource != "grenade"; }

using Pool = std::pair<std::string, std::string>;  // resource, target id

struct Option {
  std::string action, target;
  int action_index = -1, target_index = -1, rank = 0;
  float score = 0;
  std::vector<std::pair<Pool, int>> uses;
};

class CoordinationRuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::shared_ptr<const loader::LoadedSet>> sets;
    for (auto [text, source] : {std::pair{kSquad, "squad.yaml"},
                                std::pair{kSquadB, "squad_b.yaml"}}) {
      auto set = loader::LoadSetText(text, source);
      ASSERT_THAT(set, IsOk());
      sets.push_back(*set);
    }
    auto catalog = loader::Catalog::Of(std::move(sets));
    ASSERT_THAT(catalog, IsOk());
    catalog_ = *std::move(catalog);
  }

  v1::DecideResponse Run(const v1::DecideRequest& request) {
    v1::DecideResponse response;
    DecideBatch(catalog_, request, &response);
    return response;
  }

  static const v1::PoolState* FindPool(const v1::DecideResponse& r,
                                       const std::string& resource,
                                       const std::string& target) {
    for (const v1::PoolState& p : r.pools()) {
      if (p.resource() == resource && p.target_id() == target) return &p;
    }
    return nullptr;
  }
  static std::vector<std::string> Holders(const v1::PoolState& p) {
    std::vector<std::string> ids;
    for (const v1::ResourceHolder& h : p.holders()) ids.push_back(h.agent_id());
    return ids;
  }

  loader::Catalog catalog_;
};

v1::AgentSnapshot* AddAgent(v1::DecideRequest* r, const std::string& id,
                            const std::string& set,
                            std::map<std::string, float> factors,
                            std::vector<std::map<std::string, float>> targets) {
  // Factors not given are 0.
  const bool b = set == "squad_b";
  std::map<std::string, float> all =
      b ? std::map<std::string, float>{{"cover_want", 0}}
        : std::map<std::string, float>{
              {"grenade_want", 0}, {"cover_want", 0}, {"hold_want", 0}};
  for (const auto& [name, v] : factors) all[name] = v;
  v1::AgentSnapshot* a = r->add_agents();
  a->set_agent_id(id);
  a->set_behaviour_set(set);
  for (const auto& [name, v] : all) (*a->mutable_named_factors())[name] = v;
  for (size_t t = 0; t < targets.size(); ++t) {
    v1::TargetSnapshot* ts = a->add_targets();
    ts->set_target_id("e" + std::to_string(t));
    std::map<std::string, float> tf =
        b ? std::map<std::string, float>{{"melee_want", 0}, {"shoot_want", 0}}
          : std::map<std::string, float>{
                {"melee_want", 0}, {"shoot_want", 0}, {"suppress_want", 0}};
    for (const auto& [name, v] : targets[t]) tf[name] = v;
    for (const auto& [name, v] : tf) {
      (*ts->mutable_named_factors())[name] = v;
    }
  }
  return a;
}

void AddPool(v1::DecideRequest* r, const std::string& resource,
             const std::string& target, std::vector<std::string> holders,
             std::optional<int> capacity = std::nullopt) {
  v1::ResourcePool* p = r->add_pools();
  p->set_resource(resource);
  p->set_target_id(target);
  if (capacity) p->set_capacity(*capacity);
  for (const std::string& h : holders) p->add_holders()->set_agent_id(h);
}

// --- the named cases -------------------------------------------------------

TEST_F(CoordinationRuleTest,
       AListedPoolNoOptionReachesKeepsTheCatalogsCapacity) {
  v1::DecideRequest r;
  AddAgent(&r, "s0", "squad", {{"cover_want", 0.2f}}, {{{"shoot_want", 0.9f}}});
  AddPool(&r, "fire_lane", "e5", {"x1", "x2"});  // no capacity given
  const v1::DecideResponse out = Run(r);
  const v1::PoolState* lane = FindPool(out, "fire_lane", "e5");
  ASSERT_NE(lane, nullptr);
  EXPECT_EQ(lane->capacity(), 3);
  EXPECT_EQ(lane->used(), 2);
  EXPECT_EQ(lane->remaining(), 1);
  EXPECT_THAT(Holders(*lane), ElementsAre("x1", "x2"));
  // A pool only a holding names, of a declared resource, too.
  v1::DecideRequest held = r;
  held.clear_pools();
  v1::HeldResource* h = held.mutable_agents(0)->add_held();
  h->set_resource("melee_slot");
  h->set_target_id("e9");
  const v1::DecideResponse held_out = Run(held);
  const v1::PoolState* slot = FindPool(held_out, "melee_slot", "e9");
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(slot->capacity(), 2);
  // A name no set declares: 1.
  v1::DecideRequest unknown = r;
  unknown.mutable_pools(0)->set_resource("made_up");
  const v1::DecideResponse unknown_out = Run(unknown);
  const v1::PoolState* made_up = FindPool(unknown_out, "made_up", "e5");
  ASSERT_NE(made_up, nullptr);
  EXPECT_EQ(made_up->capacity(), 1);
  EXPECT_THAT(Holders(*made_up), ElementsAre("x1"));
}

TEST_F(CoordinationRuleTest, ASharedResourceHasOneCapacityWhateverTheBatch) {
  // Only squad_b's agents (which declare 3 melee slots) reach melee_slot/e0;
  // the catalog's capacity is squad's 2 all the same.
  v1::DecideRequest r;
  for (int i = 0; i < 3; ++i) {
    AddAgent(&r, "b" + std::to_string(i), "squad_b", {{"cover_want", 0.1f}},
             {{{"melee_want", 0.9f - 0.1f * i}}});
  }
  const v1::DecideResponse out = Run(r);
  const v1::PoolState* slot = FindPool(out, "melee_slot", "e0");
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(slot->capacity(), 2);
  EXPECT_EQ(out.decisions(0).action(), "melee");
  EXPECT_EQ(out.decisions(1).action(), "melee");
  EXPECT_EQ(out.decisions(2).action(), "take_cover");
  EXPECT_EQ(out.decisions(2).coordination().denied().capacity(), 2);
  // And with a squad agent in the batch, the same.
  AddAgent(&r, "s0", "squad", {{"cover_want", 0.05f}},
           {{{"melee_want", 0.1f}}});
  const v1::DecideResponse mixed = Run(r);
  ASSERT_NE(FindPool(mixed, "melee_slot", "e0"), nullptr);
  EXPECT_EQ(FindPool(mixed, "melee_slot", "e0")->capacity(), 2);
}

TEST_F(CoordinationRuleTest, AnEligibleFallbackCompetesInItsScorePlace) {
  // Melee is full; hold (the fallback, 0.1) scores above take_cover (0.05)
  // and shoot (0.08): the denied agent holds, as a candidate, not as the
  // last resort.
  v1::DecideRequest r;
  r.set_explain(v1::EXPLAIN_TOP);
  AddAgent(&r, "s0", "squad", {{"hold_want", 0.1f}, {"cover_want", 0.05f}},
           {{{"melee_want", 0.9f}, {"shoot_want", 0.08f}}});
  AddPool(&r, "melee_slot", "e0", {"x1", "x2"});
  const v1::DecideResponse out = Run(r);
  const v1::Decision& d = out.decisions(0);
  EXPECT_EQ(d.action(), "hold");
  EXPECT_FALSE(d.fallback());
  EXPECT_EQ(d.coordination().denied().action(), "melee");
  EXPECT_EQ(d.coordination().uncoordinated_action(), "melee");
  // Runner-up and margin are the scoring's, before allocation: melee 0.9
  // over hold 0.1.
  EXPECT_EQ(d.explanation().runner_up_action(), "hold");
  EXPECT_NEAR(d.explanation().margin(), 0.8f, 1e-6);
  // Nothing eligible fits: the fallback is the last resort.
  v1::DecideRequest last = r;
  (*last.mutable_agents(0)->mutable_named_factors())["hold_want"] = 0;
  (*last.mutable_agents(0)->mutable_named_factors())["cover_want"] = 0;
  (*last.mutable_agents(0)
        ->mutable_targets(0)
        ->mutable_named_factors())["shoot_want"] = 0;
  const v1::DecideResponse last_out = Run(last);
  const v1::Decision& resort = last_out.decisions(0);
  EXPECT_EQ(resort.action(), "hold");
  EXPECT_TRUE(resort.fallback());
}

TEST_F(CoordinationRuleTest, AHoldingIsFreeOnceItsHolderSettlesElsewhere) {
  // s0 holds the grenade and would suppress (lane and grenade), but the
  // lane on e0 is full: it takes cover and its grenade is released before
  // s1's turn, which throws it.
  v1::DecideRequest r;
  v1::AgentSnapshot* s0 = AddAgent(&r, "s0", "squad", {{"cover_want", 0.3f}},
                                   {{{"suppress_want", 0.9f}}});
  s0->add_held()->set_resource("grenade");
  AddAgent(&r, "s1", "squad", {{"grenade_want", 0.5f}, {"cover_want", 0.2f}},
           {});
  AddPool(&r, "fire_lane", "e0", {"x1", "x2", "x3"});
  // Turns go by the decision's score (ranks order only an agent's own
  // options): s0 (0.9) before s1 (0.5).
  const v1::DecideResponse out = Run(r);
  EXPECT_EQ(out.decisions(0).action(), "take_cover");
  ASSERT_EQ(out.decisions(0).coordination().released_size(), 1);
  EXPECT_EQ(out.decisions(1).action(), "grenade");
  EXPECT_FALSE(out.decisions(1).coordination().has_denied());
  const v1::PoolState* grenade = FindPool(out, "grenade", "");
  ASSERT_NE(grenade, nullptr);
  EXPECT_EQ(grenade->used(), 1);
  EXPECT_THAT(Holders(*grenade), ElementsAre("s1"));
}

// --- the rule, on random batches -------------------------------------------

// Agent i's options in order of preference, from its own breakdown: its
// decision (highest rank holding an eligible candidate, then score, ties to
// the lower action, then target; nothing eligible: the fallback), then its
// other eligible candidates in the same order, then the fallback when not
// among them; cut after the first that uses nothing.
std::vector<Option> OptionsOf(const v1::AgentSnapshot& agent,
                              const v1::Decision& d) {
  const std::string& set = agent.behaviour_set();
  const auto& uses = UsesBySet().at(set);
  std::vector<Option> eligible;
  for (const v1::ActionScore& a : d.explanation().actions()) {
    if (!(a.score() > 0)) continue;
    Option o{.action = a.action(),
             .target = a.target_id(),
             .action_index = a.action_index(),
             .rank = a.rank(),
             .score = a.score()};
    for (int t = 0; t < agent.targets_size(); ++t) {
      if (agent.targets(t).target_id() == a.target_id()) o.target_index = t;
    }
    eligible.push_back(o);
  }
  std::sort(eligible.begin(), eligible.end(),
            [](const Option& x, const Option& y) {
              return std::make_tuple(-x.rank, -x.score, x.action_index,
                                     x.target_index) <
                     std::make_tuple(-y.rank, -y.score, y.action_index,
                                     y.target_index);
            });
  const bool has_fallback = set == "squad";
  if (has_fallback &&
      std::none_of(eligible.begin(), eligible.end(),
                   [](const Option& o) { return o.action == "hold"; })) {
    eligible.push_back({.action = "hold", .action_index = 5, .score = 0});
  }
  std::vector<Option> options;
  for (Option& o : eligible) {
    if (auto it = uses.find(o.action); it != uses.end()) {
      for (const Use& u : it->second) {
        o.uses.push_back(
            {{u.resource, PerTarget(u.resource) ? o.target : ""}, u.amount});
      }
    }
    options.push_back(o);
    if (options.back().uses.empty()) break;
  }
  return options;
}

struct Holding {
  Pool pool;
  std::string agent_id;
  int batch_agent;  // -1: outside the batch
};

// Checks `out` against the rule for `request`; returns the number of agents
// denied something.
int CheckAgainstTheRule(const v1::DecideRequest& request,
                        const v1::DecideResponse& out) {
  const int n = request.agents_size();
  std::vector<std::vector<Option>> options(n);
  for (int i = 0; i < n; ++i) {
    options[i] = OptionsOf(request.agents(i), out.decisions(i));
  }
  // Capacities: the request's, else the catalog's, else 1.
  std::map<Pool, int> capacity;
  auto cap = [&](const Pool& p) {
    if (auto it = capacity.find(p); it != capacity.end()) return it->second;
    auto c = CatalogCapacity().find(p.first);
    return c == CatalogCapacity().end() ? 1 : c->second;
  };
  for (const v1::ResourcePool& p : request.pools()) {
    const Pool key{p.resource(), p.target_id()};
    if (p.has_capacity() && !capacity.contains(key))
      capacity[key] = p.capacity();
  }
  // Holdings, in the order given: the pools' holders, then what agents of
  // the batch report, in request order; a holding past its until is gone.
  std::map<std::string, int> by_id;
  for (int i = n - 1; i >= 0; --i) by_id[request.agents(i).agent_id()] = i;
  std::vector<Holding> holdings;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  auto hold = [&](const Pool& pool, const std::string& id) {
    if (!seen.insert({pool.first, pool.second, id}).second) return;
    auto it = by_id.find(id);
    holdings.push_back({pool, id, it == by_id.end() ? -1 : it->second});
  };
  for (const v1::ResourcePool& p : request.pools()) {
    for (const v1::ResourceHolder& h : p.holders()) {
      if (h.until() > 0 && h.until() <= request.game_time()) continue;
      hold({p.resource(), p.target_id()}, h.agent_id());
    }
  }
  for (int i = 0; i < n; ++i) {
    for (const v1::HeldResource& h : request.agents(i).held()) {
      hold({h.resource(), h.target_id()}, request.agents(i).agent_id());
    }
  }
  auto uses = [&](const Option& o, const Pool& p) {
    for (const auto& [q, amount] : o.uses) {
      if (q == p) return amount;
    }
    return 0;
  };
  // Reserved up to capacity; a batch agent's only while its decision uses
  // the pool.
  std::vector<bool> reserved(holdings.size(), false);
  std::map<Pool, int> reserved_units;
  for (size_t h = 0; h < holdings.size(); ++h) {
    const Holding& x = holdings[h];
    if (x.batch_agent >= 0 && (options[x.batch_agent].empty() ||
                               uses(options[x.batch_agent][0], x.pool) == 0)) {
      continue;
    }
    if (reserved_units[x.pool] + 1 > cap(x.pool)) continue;
    ++reserved_units[x.pool];
    reserved[h] = true;
  }
  // Turns: highest decision first, ties to the earlier agent.
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  auto first = [&](int i) {
    return options[i].empty() ? -1.0f : options[i][0].score;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return first(x) > first(y); });
  std::vector<int> chosen(n, -2);  // -2: not settled yet
  std::map<Pool, int> granted;     // beyond the agents' own reservations
  auto own = [&](int a, const Pool& p) {
    int units = 0;
    for (size_t h = 0; h < holdings.size(); ++h) {
      units +=
          reserved[h] && holdings[h].batch_agent == a && holdings[h].pool == p;
    }
    return units;
  };
  // What stands in pool p at agent a's turn: outside holders, holders not
  // settled yet (a included), settled holders whose option uses p, and
  // what was granted.
  auto standing = [&](const Pool& p) {
    int units = granted[p];
    for (size_t h = 0; h < holdings.size(); ++h) {
      const Holding& x = holdings[h];
      if (!reserved[h] || x.pool != p) continue;
      const int c = x.batch_agent;
      if (c < 0 || chosen[c] == -2 ||
          (chosen[c] >= 0 && uses(options[c][chosen[c]], p) > 0)) {
        ++units;
      }
    }
    return units;
  };
  int denied = 0;
  for (int a : order) {
    const v1::Decision& d = out.decisions(a);
    SCOPED_TRACE(::testing::Message() << request.agents(a).agent_id());
    int expected = -1;
    for (size_t k = 0; k < options[a].size() && expected < 0; ++k) {
      bool fits = true;
      for (const auto& [p, amount] : options[a][k].uses) {
        fits &= standing(p) + std::max(0, amount - own(a, p)) <= cap(p);
      }
      if (fits) expected = static_cast<int>(k);
    }
    if (expected < 0) {
      EXPECT_EQ(d.action(), "") << d.ShortDebugString();
    } else {
      const Option& o = options[a][expected];
      EXPECT_EQ(d.action(), o.action);
      EXPECT_EQ(d.target_id(), o.target);
      EXPECT_FLOAT_EQ(d.score(), o.score);
      for (const auto& [p, amount] : o.uses) {
        granted[p] += std::max(0, amount - own(a, p));
      }
    }
    if (expected != 0 && !options[a].empty()) {
      ++denied;
      EXPECT_EQ(d.coordination().denied().action(), options[a][0].action);
      EXPECT_EQ(d.coordination().denied().target_id(), options[a][0].target);
      EXPECT_EQ(d.coordination().uncoordinated_action(), options[a][0].action);
    } else {
      EXPECT_FALSE(d.coordination().has_denied());
    }
    chosen[a] = expected;
  }
  // The pools after allocation: what stands once everyone has settled.
  for (const v1::PoolState& s : out.pools()) {
    const Pool p{s.resource(), s.target_id()};
    SCOPED_TRACE(p.first + "/" + p.second);
    EXPECT_EQ(s.capacity(), cap(p));
    EXPECT_EQ(s.used(), standing(p));
    EXPECT_LE(s.used(), s.capacity());
    std::multiset<std::string> expected_holders, got;
    for (size_t h = 0; h < holdings.size(); ++h) {
      const Holding& x = holdings[h];
      if (reserved[h] && x.pool == p && x.batch_agent < 0) {
        expected_holders.insert(x.agent_id);
      }
    }
    for (int i = 0; i < n; ++i) {
      if (chosen[i] >= 0 && uses(options[i][chosen[i]], p) > 0) {
        expected_holders.insert(request.agents(i).agent_id());
      }
    }
    for (const v1::ResourceHolder& h : s.holders()) got.insert(h.agent_id());
    EXPECT_EQ(got, expected_holders);
  }
  // Every pool listed or held is answered.
  for (const Holding& h : holdings) {
    bool found = false;
    for (const v1::PoolState& s : out.pools()) {
      found |= s.resource() == h.pool.first && s.target_id() == h.pool.second;
    }
    EXPECT_TRUE(found) << h.pool.first << "/" << h.pool.second;
  }
  return denied;
}

v1::DecideRequest RandomSquadBatch(std::mt19937& rng) {
  auto pick = [&](int k) { return static_cast<int>(rng() % k); };
  // Coarse values, so that scores tie.
  auto value = [&] { return pick(3) == 0 ? 0.0f : pick(11) / 10.0f; };
  v1::DecideRequest r;
  r.set_explain(v1::EXPLAIN_FULL);
  r.set_game_time(100);
  const int agents = 1 + pick(6);
  const int enemies = 1 + pick(3);
  for (int i = 0; i < agents; ++i) {
    const bool b = pick(3) == 0;
    std::vector<std::map<std::string, float>> targets;
    const int seen = pick(enemies + 1);
    for (int t = 0; t < seen; ++t) {
      if (b) {
        targets.push_back({{"melee_want", value()}, {"shoot_want", value()}});
      } else {
        targets.push_back({{"melee_want", value()},
                           {"shoot_want", value()},
                           {"suppress_want", value()}});
      }
    }
    v1::AgentSnapshot* a =
        b ? AddAgent(&r, "a" + std::to_string(i), "squad_b",
                     {{"cover_want", value()}}, targets)
          : AddAgent(&r, "a" + std::to_string(i), "squad",
                     {{"grenade_want", pick(3) == 0 ? value() : 0.0f},
                      {"cover_want", value()},
                      {"hold_want", value()}},
                     targets);
    // Some hold what they may be doing.
    if (pick(3) == 0) {
      v1::HeldResource* h = a->add_held();
      const int kind = pick(3);
      h->set_resource(kind == 0   ? "grenade"
                      : kind == 1 ? "melee_slot"
                                  : "fire_lane");
      if (kind != 0) h->set_target_id("e" + std::to_string(pick(enemies)));
    }
  }
  // Pools listed: holders outside the batch (some expired), holders inside,
  // capacities sometimes given, some on targets no agent sees.
  const int pools = pick(4);
  for (int p = 0; p < pools; ++p) {
    v1::ResourcePool* pool = r.add_pools();
    const int kind = pick(4);
    pool->set_resource(kind == 0   ? "grenade"
                       : kind == 1 ? "melee_slot"
                       : kind == 2 ? "fire_lane"
                                   : "undeclared");
    if (kind != 0) pool->set_target_id("e" + std::to_string(pick(enemies + 3)));
    if (pick(4) == 0) pool->set_capacity(pick(4));
    const int holders = pick(4);
    for (int h = 0; h < holders; ++h) {
      v1::ResourceHolder* x = pool->add_holders();
      x->set_agent_id(pick(3) == 0 ? "a" + std::to_string(pick(agents))
                                   : "x" + std::to_string(pick(4)));
      if (pick(4) == 0) x->set_until(pick(2) == 0 ? 50 : 150);
    }
  }
  return r;
}

TEST_F(CoordinationRuleTest, RandomBatchesOfTwoSetsFollowTheRule) {
  std::mt19937 rng(24);
  int denied = 0, listed_alone = 0;
  for (int round = 0; round < 600; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const v1::DecideRequest request = RandomSquadBatch(rng);
    const v1::DecideResponse out = Run(request);
    ASSERT_EQ(out.decisions_size(), request.agents_size());
    for (const v1::Decision& d : out.decisions()) {
      ASSERT_FALSE(d.has_error()) << d.error().message();
    }
    denied += CheckAgainstTheRule(request, out);
    for (const v1::ResourcePool& p : request.pools()) {
      listed_alone += p.target_id() >= "e3";  // no agent sees e3..e5
    }
    if (HasFailure()) break;
  }
  // The batches exercise the rule.
  EXPECT_GT(denied, 200);
  EXPECT_GT(listed_alone, 50);
}

TEST_F(CoordinationRuleTest, SetsThatDisagreeOnPerTargetAreRefusedNamingBoth) {
  auto a = loader::LoadSetText(kSquad, "squad.yaml");
  auto b = loader::LoadSetText(R"(
name: squad_c
factors: [{name: want}]
resources: [{name: melee_slot, per_target: false, capacity: 1}]
actions:
  - name: melee
    uses: [{resource: melee_slot}]
    considerations: [{name: want, factor: want}]
)",
                               "squad_c.yaml");
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  auto catalog = loader::Catalog::Of({*a, *b});
  ASSERT_FALSE(catalog.ok());
  EXPECT_THAT(catalog.status().message(),
              ::testing::AllOf(::testing::HasSubstr("squad.yaml"),
                               ::testing::HasSubstr("squad_c.yaml"),
                               ::testing::HasSubstr("\"melee_slot\"")));
}

}  // namespace
}  // namespace utilityd::codec
