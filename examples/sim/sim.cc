// utilityd-sim: a small game server. It keeps a seeded world of agents,
// streams every agent's snapshot to utilityd each tick through the client
// SDK, applies the chosen actions to the world, and sends the current action
// and the time since each action back on the next tick (the service keeps no
// state). It reports decisions per second, switches per agent per minute and,
// for the arena, how long mages survive.
//
// With --form=columnar every world sends its agents as one block of
// columns, through the SDK's WriteBlock, ReadBlock, CarryTreeState and (the
// goblins' attack tokens) CarryHeld, as an ECS game server would; the same
// seed then runs the same game.
//
//   utilityd-sim --target=localhost:50051 --world=all --agents=100 --hz=10
//   utilityd-sim --world=forager --realtime=false --duration=300s --seed=3
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "utilityd/base/usage.h"
#include "utilityd/client/block.h"
#include "utilityd/client/client.h"
#include "utilityd/client/tree_tracker.h"

ABSL_FLAG(std::string, target, "localhost:50051", "utilityd to ask.");
ABSL_FLAG(std::string, world, "all",
          "villager, arena, guard (a behaviour tree), forager, goblins "
          "(attack tokens), or all (villager, arena and guard).");
ABSL_FLAG(std::string, form, "snapshots",
          "How worlds send their agents: snapshots (a message per agent) or "
          "columnar (a block of columns per world).");
ABSL_FLAG(bool, tokens, true,
          "goblins: two attack tokens per mage, allocated by the service; "
          "false offers as many tokens as there are goblins.");
ABSL_FLAG(int, agents, 100, "Agents per world.");
ABSL_FLAG(double, hz, 10, "Decisions per agent per second (world ticks).");
ABSL_FLAG(absl::Duration, duration, absl::ZeroDuration(),
          "Simulated time to run; 0 runs until Ctrl-C.");
ABSL_FLAG(bool, realtime, true,
          "Tick on the wall clock; false runs simulated time as fast as the "
          "service answers.");
ABSL_FLAG(uint64_t, seed, 1, "World seed: the same seed replays the same run.");
ABSL_FLAG(double, noise, 0.03,
          "Standard deviation of sensor noise on the forager's inputs.");
ABSL_FLAG(int, trace, 0,
          "Print agent 0 of each world (action, score, runner-up, summary) for "
          "this many ticks.");
ABSL_FLAG(absl::Duration, report_every, absl::Seconds(2),
          "Wall-clock interval between progress lines.");

namespace utilityd::sim {
namespace {

std::atomic<bool> stop_requested{false};
extern "C" void OnSignal(int) { stop_requested.store(true); }

using Rng = std::mt19937_64;

float Uniform(Rng& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}
float Clamp(float v, float lo, float hi) {
  return std::max(lo, std::min(hi, v));
}

// One agent's memory, kept by the game server and sent in each snapshot.
struct Memory {
  std::string current_action;
  std::string current_target;
  double started = 0;            // when the current action started
  std::vector<double> last_ran;  // simulated time each action last ended
  int switches = 0;
};

// A world: fills a batch from its agents and applies decisions.
class World {
 public:
  World(std::string set, int agents, uint64_t seed)
      : set_(std::move(set)), rng_(seed), memory_(agents) {}
  virtual ~World() = default;

  const std::string& set() const { return set_; }
  int agents() const { return static_cast<int>(memory_.size()); }
  int64_t switches() const {
    int64_t n = 0;
    for (const Memory& m : memory_) n += m.switches;
    return n;
  }
  virtual std::string Extra() const { return ""; }

  void Bind(std::shared_ptr<const client::SetSchema> schema) {
    schema_ = std::move(schema);
    for (Memory& m : memory_) {
      m.last_ran.assign(schema_->summary().actions_size(), -1e9);
    }
  }

  // Appends one snapshot per agent at simulated time `now`.
  void Fill(double now, uint64_t tick, v1::DecideRequest* batch) {
    Pools(batch);
    for (int i = 0; i < agents(); ++i) {
      v1::AgentSnapshot* a = batch->add_agents();
      a->set_agent_id(absl::StrFormat("%s-%d", set_, i));
      a->set_behaviour_set(set_);
      a->set_expected_revision(schema_->revision());
      a->mutable_factors()->Resize(schema_->summary().factors_size(), 0.0f);
      Sense(i, a);
      a->set_seed(tick * 1000003 + i);
      if (tree_) {
        // A tree agent's memory is its tree state, kept by the tracker.
        a->set_game_time(now);
        trees_.Prepare(a);
        continue;
      }
      const Memory& m = memory_[i];
      a->set_current_action(m.current_action);
      a->set_current_target(m.current_target);
      for (int k = 0; k < schema_->summary().actions_size(); ++k) {
        const double since = now - m.last_ran[k];
        if (since < 3600) {
          (*a->mutable_seconds_since_action())[schema_->summary().actions(k)] =
              static_cast<float>(since);
        }
      }
    }
  }

  // Applies the decisions for agents [first, first + agents()).
  void Apply(const v1::DecideResponse& r, int first, double now, double dt) {
    for (int i = 0; i < agents(); ++i) {
      const v1::Decision& d = r.decisions(first + i);
      if (d.has_error()) {
        std::fprintf(stderr, "agent %s: %s\n", d.agent_id().c_str(),
                     d.error().message().c_str());
        continue;
      }
      if (tree_) {
        trees_.Update(d);
        TakeTick(i, d, dt);
        continue;
      }
      Take(i, d, now, dt);
    }
    Step(dt);
  }

  // The block form (--form=columnar): the world's agents as one block,
  // sensed as for snapshots and laid out as an ECS holds its components
  // (factors factor-major, running actions and targets by index; a tree's
  // state and leaf outcomes as columns; held resources as the last
  // answer's grants). Targets are entities with integer ids (EntityId).
  virtual bool SharesResources() const { return false; }
  void set_columnar(bool on) { columnar_ = on; }
  bool columnar() const { return columnar_; }

  void FillBlock(double now, uint64_t tick, v1::DecideRequest* batch) {
    const v1::BehaviourSetSummary& s = schema_->summary();
    const int n = agents(), nf = s.factors_size(), na = s.actions_size();
    Columns& c = columns_;
    c.ids.resize(n);
    c.factors.assign(static_cast<size_t>(nf) * n, 0.0f);
    c.current.resize(n);
    c.seconds.resize(static_cast<size_t>(na) * n);
    c.seeds.resize(n);
    c.offsets.assign(1, 0);
    c.target_factors.clear();
    c.current_target.resize(n);
    c.target_ids.resize(n);
    c.target_entities.clear();
    c.outcomes.resize(n);
    for (int i = 0; i < n; ++i) {
      sensed_.Clear();
      sensed_.mutable_factors()->Resize(nf, 0.0f);
      Sense(i, &sensed_);
      c.ids[i] = static_cast<uint64_t>(i);
      for (int f = 0; f < nf; ++f) c.factors[f * n + i] = sensed_.factors(f);
      const Memory& m = memory_[i];
      c.current[i] = ActionIndex(m.current_action);
      for (int k = 0; k < na; ++k) {
        const double since = now - m.last_ran[k];
        c.seconds[i * na + k] = since < 3600 ? static_cast<float>(since)
                                             : std::nanf("");  // not recently
      }
      c.seeds[i] = tick * 1000003 + i;
      if (tree_) {  // a tree's memory is its state, as for snapshots
        c.current[i] = -1;
        std::fill_n(c.seconds.begin() + i * na, na, std::nanf(""));
      }
      c.target_ids[i].clear();
      c.current_target[i] =
          m.current_target.empty() || tree_ ? -1 : -2;  // -2: gone
      for (const v1::TargetSnapshot& t : sensed_.targets()) {
        if (t.target_id() == m.current_target) {
          c.current_target[i] = static_cast<int32_t>(c.target_ids[i].size());
        }
        c.target_ids[i].push_back(t.target_id());
        c.target_entities.push_back(EntityId(t.target_id()));
        c.target_factors.insert(c.target_factors.end(), t.factors().begin(),
                                t.factors().end());
      }
      c.offsets.push_back(c.offsets.back() +
                          static_cast<uint32_t>(sensed_.targets_size()));
    }
    // A tree's memory: the last answer's state columns, and the outcomes
    // reported since, by row.
    c.outcome_offsets.assign(tree_ ? 1 : 0, 0);
    c.outcome_leaves.clear();
    c.outcome_statuses.clear();
    for (int i = 0; tree_ && i < n; ++i) {
      for (const v1::LeafOutcome& o : c.outcomes[i]) {
        c.outcome_leaves.push_back(o.leaf());
        c.outcome_statuses.push_back(o.status());
      }
      c.outcome_offsets.push_back(
          static_cast<uint32_t>(c.outcome_leaves.size()));
    }
    if (SharesResources()) Pools(batch);
    client::WriteBlock(
        {.behaviour_set = set_,
         .expected_revision = schema_->revision(),
         .agent_ids = c.ids,
         .factors = c.factors,
         .layout = v1::FACTOR_LAYOUT_COLUMNS,
         .current_action = c.current,
         .seconds_since_action = c.seconds,
         .seeds = c.seeds,
         .target_offsets = c.offsets,
         .target_factors = c.target_factors,
         // Coordination names pools by their target's id.
         .target_ids = SharesResources()
                           ? absl::MakeConstSpan(c.target_entities)
                           : absl::Span<const uint64_t>(),
         .current_target = c.current_target,
         .game_time = now,
         .outcome_offsets = c.outcome_offsets,
         .outcome_leaves = c.outcome_leaves,
         .outcome_statuses = c.outcome_statuses},
        batch->add_blocks());
    v1::AgentBlock* block = batch->mutable_blocks(batch->blocks_size() - 1);
    if (tree_) client::CarryTreeState(c.last, block);
    if (SharesResources()) client::CarryHeld(c.last, block);
  }

  // Applies the block's answers, read into columns, as Apply applies
  // decisions: each row's action and target named again for Act.
  void ApplyBlock(const v1::DecisionBlock& block, double now, double dt) {
    const int n = agents();
    Columns& c = columns_;
    c.action.resize(n);
    c.target.resize(n);
    std::vector<client::RowError> errors;
    if (absl::Status s =
            client::ReadBlock(block, n,
                              {.action_index = absl::MakeSpan(c.action),
                               .target_index = absl::MakeSpan(c.target)},
                              &errors);
        !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", set_.c_str(),
                   std::string(s.message()).c_str());
      return;
    }
    c.failed.assign(n, 0);
    for (const client::RowError& e : errors) {
      std::fprintf(stderr, "%s row %d: %s\n", set_.c_str(), e.row,
                   std::string(e.status.message()).c_str());
      c.failed[e.row] = 1;
    }
    const v1::BehaviourSetSummary& s = schema_->summary();
    if (tree_) {
      // As TreeTracker::Update: the outcomes were taken (a failed row sends
      // its own again), the state comes back next tick.
      for (int i = 0; i < n; ++i) {
        if (!c.failed[i]) c.outcomes[i].clear();
      }
      *c.last.mutable_tree_state_offsets() = block.tree_state_offsets();
      *c.last.mutable_tree_states() = block.tree_states();
    }
    if (SharesResources()) {  // what each row holds now, for next tick
      *c.last.mutable_grant_offsets() = block.grant_offsets();
      *c.last.mutable_grant_resources() = block.grant_resources();
      *c.last.mutable_grant_target_ids() = block.grant_target_ids();
      *c.last.mutable_grant_amounts() = block.grant_amounts();
    }
    for (int i = 0; i < n; ++i) {
      if (c.failed[i]) continue;
      decision_.Clear();
      if (c.action[i] >= 0) decision_.set_action(s.actions(c.action[i]));
      if (c.target[i] >= 0)
        decision_.set_target_id(c.target_ids[i][c.target[i]]);
      if (tree_) {
        LeavesOf(block, i, &decision_);
        TakeTick(i, decision_, dt);
        continue;
      }
      for (uint32_t k = block.grant_offsets_size() > 0 ? block.grant_offsets(i)
                                                       : 0;
           k <
           (block.grant_offsets_size() > 0 ? block.grant_offsets(i + 1) : 0);
           ++k) {
        v1::ResourceGrant* g = decision_.mutable_coordination()->add_granted();
        g->set_resource(s.resources(block.grant_resources(k)));
        g->set_target_id(EntityName(block.grant_target_ids(k)));
        g->set_amount(static_cast<int32_t>(block.grant_amounts(k)));
      }
      Take(i, decision_, now, dt);
    }
    Step(dt);
  }

 private:
  // The columns of the block form, kept from tick to tick.
  struct Columns {
    std::vector<uint64_t> ids, seeds;
    std::vector<float> factors, seconds, target_factors;
    std::vector<int32_t> current, current_target, action, target;
    std::vector<uint32_t> offsets;
    std::vector<uint8_t> failed;  // per row
    // Trees: outcomes reported since the last tick, by row, as columns;
    // the last answer's state columns.
    std::vector<std::vector<v1::LeafOutcome>> outcomes;
    std::vector<uint32_t> outcome_offsets;
    std::vector<int32_t> outcome_leaves;
    std::vector<v1::NodeStatus> outcome_statuses;
    v1::DecisionBlock last;
    std::vector<std::vector<std::string>> target_ids;  // per row
    std::vector<uint64_t> target_entities;  // per target, the block's
  };

  int ActionIndex(const std::string& action) const {
    const auto& names = schema_->summary().actions();
    for (int k = 0; k < names.size(); ++k) {
      if (names[k] == action) return k;
    }
    return -1;
  }

  // Takes agent i's decision of a flat set: like a game server, keeps
  // running an action until its minimum time is up (a cast or a recharge is
  // not interrupted halfway); the decision is then simply not taken up.
  void Take(int i, const v1::Decision& d, double now, double dt) {
    Memory& m = memory_[i];
    if (!m.current_action.empty() && d.action() != m.current_action &&
        now - m.started < MinDuration(m.current_action)) {
      v1::Decision keep = d;
      keep.set_action(m.current_action);
      keep.set_target_id(m.current_target);
      Act(i, keep, dt);
      return;
    }
    if (d.action() != m.current_action) m.started = now;
    if (d.action() != m.current_action && !m.current_action.empty()) {
      ++m.switches;
      // The action that stops now starts its cooldown.
      for (int k = 0; k < schema_->summary().actions_size(); ++k) {
        if (schema_->summary().actions(k) == m.current_action)
          m.last_ran[k] = now;
      }
    }
    m.current_action = d.action();
    m.current_target = d.target_id();
    Act(i, d, dt);
  }

  // Takes agent i's tick of a tree set: a leaf switch is a leaf starting
  // while another was running.
  void TakeTick(int i, const v1::Decision& d, double dt) {
    Memory& m = memory_[i];
    for (const v1::TreeLeaf& leaf : d.run_leaves()) {
      if (leaf.started() && !m.current_action.empty()) ++m.switches;
    }
    m.current_action = d.action();
    Act(i, d, dt);
  }

  // Row i's run and halted leaves from a tree block's columns, named for
  // Act.
  void LeavesOf(const v1::DecisionBlock& block, int i, v1::Decision* d) const {
    const v1::BehaviourSetSummary& s = schema_->summary();
    auto leaf = [&](int32_t node, int32_t action, int32_t target,
                    v1::TreeLeaf* l) {
      l->set_node(node);
      l->set_action_index(action);
      l->set_action(s.actions(action));
      if (target >= 0) l->set_target_id(columns_.target_ids[i][target]);
    };
    for (uint32_t k = block.run_offsets(i); k < block.run_offsets(i + 1); ++k) {
      v1::TreeLeaf* l = d->add_run_leaves();
      leaf(block.run_nodes(k), block.run_actions(k), block.run_targets(k), l);
      l->set_started(block.run_started()[k] != 0);
    }
    for (uint32_t k = block.halted_offsets(i); k < block.halted_offsets(i + 1);
         ++k) {
      leaf(block.halted_nodes(k), block.halted_actions(k),
           block.halted_targets(k), d->add_halted_leaves());
    }
  }

  bool columnar_ = false;
  Columns columns_;
  std::map<std::string, uint64_t> entity_ids_;
  std::vector<std::string> entity_names_;
  v1::AgentSnapshot sensed_;  // one agent, sensed for its columns
  v1::Decision decision_;     // one row, as Act reads it

 protected:
  // The entity id of a target named `name` (numbered as first seen), and
  // back.
  uint64_t EntityId(const std::string& name) {
    auto [it, added] = entity_ids_.try_emplace(name, entity_names_.size());
    if (added) entity_names_.push_back(name);
    return it->second;
  }
  const std::string& EntityName(uint64_t id) const {
    static const std::string kNone;
    return id < entity_names_.size() ? entity_names_[id] : kNone;
  }
  // How agent i's leaf went, for its next tick: through the tree tracker,
  // or into the block's outcome columns.
  void ReportOutcome(int i, const v1::Decision& d, int32_t leaf,
                     v1::NodeStatus status) {
    if (!columnar_) return trees_.Report(d.agent_id(), leaf, status);
    v1::LeafOutcome& o = columns_.outcomes[i].emplace_back();
    o.set_leaf(leaf);
    o.set_status(status);
  }
  void Set(v1::AgentSnapshot* a, const char* factor, float value) {
    const int index = schema_->FactorIndex(factor);
    if (index >= 0) a->set_factors(index, value);
  }
  // How long an action runs before the game server lets it be interrupted.
  virtual double MinDuration(const std::string& /*action*/) const { return 0; }
  virtual void Sense(int i, v1::AgentSnapshot* a) = 0;
  virtual void Act(int i, const v1::Decision& d, double dt) = 0;
  // Coordination: the pools this world's agents share (none by default).
  virtual void Pools(v1::DecideRequest* /*batch*/) {}
  virtual void Step(double /*dt*/) {}

  std::string set_;
  Rng rng_;
  std::vector<Memory> memory_;
  std::shared_ptr<const client::SetSchema> schema_;
  bool tree_ = false;  // the set is a tree: leaves, not actions
  client::TreeTracker trees_;
};

// Seed 003's villagers: needs rise; walking to a thing and using it
// satisfies the need it serves.
class VillagerWorld final : public World {
 public:
  VillagerWorld(int agents, uint64_t seed)
      : World("villager_needs", agents, seed), v_(agents) {
    for (V& v : v_) {
      for (float& n : v.need) n = Uniform(rng_, 0, 0.6f);
      for (float& r : v.rate) r = Uniform(rng_, 0.005f, 0.02f);
      for (float& d : v.dist) d = Uniform(rng_, 1, 20);
    }
  }

 private:
  double MinDuration(const std::string&) const override { return 2.0; }

  static constexpr const char* kNeeds[4] = {"hunger", "tiredness", "loneliness",
                                            "boredom"};
  static constexpr const char* kDist[4] = {"food_distance", "bed_distance",
                                           "friend_distance", "toy_distance"};
  struct V {
    float need[4], rate[4], dist[4];
  };

  void Sense(int i, v1::AgentSnapshot* a) override {
    for (int k = 0; k < 4; ++k) {
      Set(a, kNeeds[k], v_[i].need[k]);
      Set(a, kDist[k], v_[i].dist[k]);
    }
  }

  void Act(int i, const v1::Decision& d, double dt) override {
    V& v = v_[i];
    static constexpr const char* kActions[4] = {"eat", "sleep", "socialise",
                                                "play"};
    for (int k = 0; k < 4; ++k) {
      v.need[k] = Clamp(v.need[k] + v.rate[k] * static_cast<float>(dt), 0, 1);
      if (d.action() != kActions[k]) continue;
      if (v.dist[k] > 1) {
        v.dist[k] = std::max(0.5f, v.dist[k] - 2.0f * static_cast<float>(dt));
      } else {
        v.need[k] = Clamp(v.need[k] - 0.04f * static_cast<float>(dt), 0, 1);
        if (v.need[k] < 0.05f) v.dist[k] = Uniform(rng_, 5, 20);  // wander off
      }
    }
  }

  std::vector<V> v_;
};

// Seed 002's arena: each mage fights waves of goblins; a dead mage is
// replaced and its survival time recorded.
class ArenaWorld final : public World {
 public:
  ArenaWorld(int agents, uint64_t seed)
      : World("arena_mage", agents, seed), m_(agents) {
    for (Mage& m : m_) Respawn(m);
  }

  std::string Extra() const override {
    if (deaths_ == 0) return absl::StrFormat(" survival>%.0fs", MinAlive());
    return absl::StrFormat(" survival avg %.0fs over %d deaths",
                           total_life_ / deaths_, deaths_);
  }

 private:
  struct Goblin {
    std::string id;
    float distance, health;
  };
  struct Mage {
    float health, charges, crystals, potion, shrine_distance, cover, damage;
    bool shrine_has_potion;
    double born, shrine_refill_at;
    std::vector<Goblin> goblins;
    int next_goblin;
  };

  double MinDuration(const std::string& action) const override {
    if (action == "attack") return 0.6;    // a cast
    if (action == "recharge") return 1.5;  // draining a crystal
    if (action == "heal") return 1.0;
    if (action == "take_cover" || action == "patrol") return 1.0;
    return 0.5;
  }

  void Respawn(Mage& m) {
    m = Mage{100, 6, 3, 1, Uniform(rng_, 10, 40), 0, 0, true, now_, 0, {}, 0};
  }

  double MinAlive() const {
    double oldest = 0;
    for (const Mage& m : m_) oldest = std::max(oldest, now_ - m.born);
    return oldest;
  }

  void Sense(int i, v1::AgentSnapshot* a) override {
    Mage& m = m_[i];
    float nearest = 30;
    for (const Goblin& g : m.goblins) nearest = std::min(nearest, g.distance);
    Set(a, "health", m.health);
    Set(a, "charges", m.charges);
    Set(a, "crystals", m.crystals);
    Set(a, "enemy_distance", nearest);
    Set(a, "enemies_visible", static_cast<float>(m.goblins.size()));
    Set(a, "damage_taken", m.damage);
    Set(a, "in_cover", m.cover >= 1 ? 1 : 0);
    Set(a, "has_potion", m.potion);
    Set(a, "potion_at_shrine", m.shrine_has_potion ? 1 : 0);
    Set(a, "shrine_distance", m.shrine_distance);
    for (const Goblin& g : m.goblins) {
      v1::TargetSnapshot* t = a->add_targets();
      t->set_target_id(g.id);
      t->add_factors(g.distance);
      t->add_factors(g.health);
    }
  }

  void Act(int i, const v1::Decision& d, double dt) override {
    Mage& m = m_[i];
    const float s = static_cast<float>(dt);
    const std::string& act = d.action();
    if (act == "patrol" || act == "get_potion" || act == "flee") {
      m.cover = 0;  // moving leaves cover; casting and drinking do not
    }
    if (act == "attack") {
      for (Goblin& g : m.goblins) {
        if (g.id == d.target_id() && m.charges >= 1 && g.distance < 25) {
          g.health -= 12;
          m.charges -= 1;
        }
      }
    } else if (act == "take_cover") {
      m.cover = std::min(1.0f, m.cover + s);
    } else if (act == "recharge" && m.crystals >= 1) {
      m.charges = std::min(6.0f, m.charges + 4 * s);
      if (m.charges >= 6) m.crystals -= 1;
    } else if (act == "heal" && m.potion >= 1) {
      m.health = std::min(100.0f, m.health + 50);
      m.potion = 0;
    } else if (act == "get_potion") {
      m.shrine_distance = std::max(0.0f, m.shrine_distance - 4 * s);
      if (m.shrine_distance <= 0.5f && m.shrine_has_potion) {
        m.potion = 1;
        m.shrine_has_potion = false;
        m.shrine_refill_at = now_ + 30;
      }
    } else if (act == "flee") {
      for (Goblin& g : m.goblins) g.distance += 5 * s;
    }
    if (act != "get_potion") {
      m.shrine_distance = std::min(40.0f, m.shrine_distance + 0.5f * s);
    }
    // The goblins' turn.
    m.damage = std::max(0.0f, m.damage - 10 * s);
    for (Goblin& g : m.goblins) {
      g.distance = std::max(1.0f, g.distance - 1.5f * s);
      if (g.distance <= 2) {
        const float hit = (m.cover >= 1 ? 3.0f : 8.0f) * s;
        m.health -= hit;
        m.damage += hit;
      }
    }
    m.goblins.erase(std::remove_if(m.goblins.begin(), m.goblins.end(),
                                   [](const Goblin& g) {
                                     return g.health <= 0 || g.distance > 30;
                                   }),
                    m.goblins.end());
    if (m.goblins.size() < 5 && Uniform(rng_, 0, 1) < 0.5f * s) {
      m.goblins.push_back({absl::StrFormat("goblin-%d", m.next_goblin++),
                           Uniform(rng_, 15, 30), Uniform(rng_, 10, 30)});
    }
    if (!m.shrine_has_potion && now_ >= m.shrine_refill_at) {
      m.shrine_has_potion = true;
    }
    if (Uniform(rng_, 0, 1) < 0.02f * s)
      m.crystals = std::min(5.0f, m.crystals + 1);
    if (m.health <= 0) {
      total_life_ += now_ - m.born;
      ++deaths_;
      Respawn(m);
    }
  }

  void Step(double dt) override { now_ += dt; }

  std::vector<Mage> m_;
  double now_ = 0;
  double total_life_ = 0;
  int deaths_ = 0;
};

// The arena's goblins (arena_goblin.yaml), six to a mage, sharing attack
// tokens: the game server is the source of truth for who holds one, sends
// every mage's pool with its holders each tick, and takes the service's
// grants back. With --tokens=false the pools offer a token per goblin, so
// every goblin that wants to attack does: the difference is the point.
class GoblinWorld final : public World {
 public:
  GoblinWorld(int agents, uint64_t seed, bool tokens)
      : World("arena_goblin", agents, seed),
        tokens_(tokens),
        g_(agents),
        mages_(std::max(1, agents / 6)) {
    for (size_t k = 0; k < mages_.size(); ++k) {
      const double angle = 2 * 3.14159265 * k / mages_.size();
      mages_[k] = {static_cast<float>(12 * std::cos(angle)),
                   static_cast<float>(12 * std::sin(angle)), 100};
    }
    for (Goblin& g : g_) Respawn(g);
  }

  bool SharesResources() const override { return true; }

  // Attackers per mage: the mean over ticks and mages, and the most ever.
  std::string Extra() const override {
    return absl::StrFormat(" attackers/mage mean=%.2f max=%d",
                           samples_ > 0 ? attackers_ / samples_ : 0.0,
                           max_attackers_);
  }

 private:
  struct Goblin {
    float x, y, health, courage;
    int attacking = -1;  // the mage attacked, or -1
    int token = -1;      // the mage whose token it holds, or -1
  };
  struct Mage {
    float x, y, health;
  };

  void Respawn(Goblin& g) {
    const float angle = Uniform(rng_, 0, 6.2831853f);
    g = Goblin{25 * std::cos(angle), 25 * std::sin(angle), 30,
               Uniform(rng_, 0.2f, 1.0f)};
  }
  float Distance(const Goblin& g, const Mage& m) const {
    return std::hypot(g.x - m.x, g.y - m.y);
  }
  static std::string MageId(int k) { return absl::StrFormat("mage-%d", k); }

  // As snapshots the pools list their holders; as a block each row says
  // what it holds (CarryHeld), and pools are named by the mage's entity id.
  void Pools(v1::DecideRequest* batch) override {
    for (size_t k = 0; k < mages_.size(); ++k) {
      v1::ResourcePool* p = batch->add_pools();
      p->set_resource("attack_token");
      const std::string mage = MageId(static_cast<int>(k));
      p->set_target_id(columnar() ? absl::StrCat(EntityId(mage)) : mage);
      if (!tokens_) p->set_capacity(agents());
      for (int i = 0; i < agents() && !columnar(); ++i) {
        if (g_[i].token == static_cast<int>(k)) {
          p->add_holders()->set_agent_id(absl::StrFormat("%s-%d", set_, i));
        }
      }
    }
  }

  void Sense(int i, v1::AgentSnapshot* a) override {
    const Goblin& g = g_[i];
    Set(a, "health", g.health);
    Set(a, "courage", g.courage);
    for (size_t k = 0; k < mages_.size(); ++k) {
      v1::TargetSnapshot* t = a->add_targets();
      t->set_target_id(MageId(static_cast<int>(k)));
      t->add_factors(std::min(30.0f, Distance(g, mages_[k])));
      t->add_factors(mages_[k].health);
    }
  }

  void Act(int i, const v1::Decision& d, double dt) override {
    Goblin& g = g_[i];
    const float s = static_cast<float>(dt);
    g.token = -1;
    for (const v1::ResourceGrant& grant : d.coordination().granted()) {
      if (grant.resource() == "attack_token") {
        g.token = std::atoi(grant.target_id().c_str() + 5);  // "mage-k"
      }
    }
    g.attacking = -1;
    int target = -1;
    if (!d.target_id().empty()) target = std::atoi(d.target_id().c_str() + 5);
    auto move_to = [&](const Mage& m, float stop) {
      const float dist = Distance(g, m);
      if (dist <= stop) return;
      const float step = std::min(dist - stop, 4 * s);
      g.x += (m.x - g.x) / dist * step;
      g.y += (m.y - g.y) / dist * step;
    };
    if (d.action() == "attack" && target >= 0) {
      Mage& m = mages_[target];
      g.attacking = target;
      move_to(m, 1);
      if (Distance(g, m) <= 1.5f) {
        m.health -= 6 * s;
        g.health -= 3 * s;  // the mage hits back
      }
    } else if (d.action() == "circle" && target >= 0) {
      move_to(mages_[target], 5);
    } else if (d.action() == "flee") {
      g.x *= 1 + 0.2f * s;
      g.y *= 1 + 0.2f * s;
      g.health = std::min(30.0f, g.health + 2 * s);
    }
    if (g.health <= 0) Respawn(g);
  }

  void Step(double /*dt*/) override {
    std::vector<int> per_mage(mages_.size(), 0);
    for (const Goblin& g : g_) {
      if (g.attacking >= 0) ++per_mage[g.attacking];
    }
    for (size_t k = 0; k < mages_.size(); ++k) {
      attackers_ += per_mage[k];
      ++samples_;
      max_attackers_ = std::max(max_attackers_, per_mage[k]);
      if (mages_[k].health <= 0) mages_[k].health = 100;  // the next mage
    }
  }

  bool tokens_;
  std::vector<Goblin> g_;
  std::vector<Mage> mages_;
  double attackers_ = 0, samples_ = 0;
  int max_attackers_ = 0;
};

// Seed 001's guards, driven by guard_tree.yaml: the player wanders in and out
// of sight; leaves take time (moving closes a few metres a second, a
// fireball takes a second to cast and can miss), so the tree's state travels
// from tick to tick and aborts interrupt running leaves.
class GuardWorld final : public World {
 public:
  GuardWorld(int agents, uint64_t seed)
      : World("guard_tree", agents, seed), g_(agents) {
    tree_ = true;
    for (Guard& g : g_) {
      g = {Uniform(rng_, 5, 35), 100, 100, Uniform(rng_, 0, 1) < 0.5f, {}};
    }
  }

  std::string Extra() const override {
    return absl::StrFormat(" (leaf switches) kills=%d", kills_);
  }

 private:
  struct Guard {
    float distance, health, mana;
    bool visible;
    std::map<int32_t, double> running;  // leaf node -> seconds it has run
  };

  void Sense(int i, v1::AgentSnapshot* a) override {
    const Guard& g = g_[i];
    Set(a, "player_visible", g.visible ? 1 : 0);
    Set(a, "player_distance", g.distance);
    Set(a, "health", g.health);
    Set(a, "mana", g.mana);
    v1::TargetSnapshot* t = a->add_targets();
    t->set_target_id("player");
    t->add_factors(g.distance);
    t->add_factors(player_health_);
  }

  void Act(int i, const v1::Decision& d, double dt) override {
    Guard& g = g_[i];
    const float s = static_cast<float>(dt);
    for (const v1::TreeLeaf& leaf : d.halted_leaves())
      g.running.erase(leaf.node());
    for (const v1::TreeLeaf& leaf : d.run_leaves()) {
      double& ran = g.running[leaf.node()];
      if (leaf.started()) ran = 0;
      ran += dt;
      v1::NodeStatus outcome = v1::NODE_STATUS_RUNNING;
      const std::string& act = leaf.action();
      if (act == "patrol") {
        g.distance = Clamp(g.distance + Uniform(rng_, -2, 3) * s, 2, 40);
      } else if (act == "move_to_player") {
        g.distance = std::max(2.0f, g.distance - 4 * s);
        if (g.distance <= 6) outcome = v1::NODE_STATUS_SUCCESS;
        if (Uniform(rng_, 0, 1) < 0.02f) outcome = v1::NODE_STATUS_FAILURE;
      } else if (act == "fireball" && ran >= 1.0) {
        g.mana -= 20;
        const bool hit = Uniform(rng_, 0, 1) < 0.8f;
        if (hit) player_health_ -= 10;
        outcome = hit ? v1::NODE_STATUS_SUCCESS : v1::NODE_STATUS_FAILURE;
      } else if (act == "staff_strike" && ran >= 0.5) {
        player_health_ -= 4;
        outcome = v1::NODE_STATUS_SUCCESS;
      } else if (act == "drink_potion" && ran >= 1.0) {
        g.health = std::min(100.0f, g.health + 40);
        outcome = v1::NODE_STATUS_SUCCESS;
      }
      if (outcome != v1::NODE_STATUS_RUNNING) {
        g.running.erase(leaf.node());
        ReportOutcome(i, d, leaf.node(), outcome);
      }
    }
    // The world's turn: the player slips in and out of sight, hits back
    // when close, and respawns when beaten; mana comes back slowly.
    if (Uniform(rng_, 0, 1) < 0.1f * s) g.visible = !g.visible;
    if (g.visible && g.distance < 4) g.health -= 5 * s;
    g.mana = std::min(100.0f, g.mana + 4 * s);
    if (g.health <= 0) g = {30, 100, 100, false, {}};
    if (player_health_ <= 0) {
      player_health_ = 100;
      ++kills_;
    }
  }

  std::vector<Guard> g_;
  float player_health_ = 100;
  int kills_ = 0;
};

// Seed 004's forager with noisy senses: the commitment experiment's world.
class ForagerWorld final : public World {
 public:
  ForagerWorld(int agents, uint64_t seed, float noise)
      : World("eat_hide_wander", agents, seed), noise_(noise), f_(agents) {
    for (F& f : f_)
      f = {Uniform(rng_, 0, 0.6f), Uniform(rng_, 0, 0.3f), Uniform(rng_, 2, 20),
           0};
  }

 private:
  struct F {
    float hunger, danger, food_distance, idle;
  };

  float Noisy(float v, float lo, float hi) {
    return Clamp(
        v + std::normal_distribution<float>(0, noise_)(rng_) * (hi - lo), lo,
        hi);
  }

  void Sense(int i, v1::AgentSnapshot* a) override {
    const F& f = f_[i];
    Set(a, "hunger", Noisy(f.hunger, 0, 1));
    Set(a, "danger", Noisy(f.danger, 0, 1));
    Set(a, "food_distance", Noisy(f.food_distance, 0, 25));
    Set(a, "idle_time", Noisy(f.idle, 0, 20));
  }

  void Act(int i, const v1::Decision& d, double dt) override {
    F& f = f_[i];
    const float s = static_cast<float>(dt);
    f.hunger = Clamp(f.hunger + 0.02f * s, 0, 1);
    f.idle = Clamp(f.idle + s, 0, 20);
    // A predator wanders near and away.
    f.danger =
        Clamp(f.danger + std::normal_distribution<float>(0, 0.08f)(rng_) *
                             std::sqrt(s),
              0, 1);
    if (d.action() == "eat") {
      if (f.food_distance > 1) {
        f.food_distance = std::max(0.5f, f.food_distance - 3 * s);
      } else {
        f.hunger = Clamp(f.hunger - 0.04f * s, 0, 1);
      }
      f.idle = 0;
    } else if (d.action() == "hide") {
      f.danger = Clamp(f.danger - 0.05f * s, 0, 1);
      f.idle = 0;
    } else if (d.action() == "wander") {
      f.food_distance =
          Clamp(f.food_distance + Uniform(rng_, -2, 2) * s, 0, 25);
      f.idle = std::max(0.0f, f.idle - 2 * s);
    }
  }

  float noise_;
  std::vector<F> f_;
};

// The worlds --world names, each seeded from --seed; empty for an unknown
// name.
std::vector<std::unique_ptr<World>> MakeWorlds(const std::string& which,
                                               int agents, uint64_t seed) {
  std::vector<std::unique_ptr<World>> worlds;
  if (which == "villager" || which == "all") {
    worlds.push_back(std::make_unique<VillagerWorld>(agents, seed));
  }
  if (which == "arena" || which == "all") {
    worlds.push_back(std::make_unique<ArenaWorld>(agents, seed + 1));
  }
  if (which == "guard" || which == "all") {
    worlds.push_back(std::make_unique<GuardWorld>(agents, seed + 2));
  }
  if (which == "goblins") {
    worlds.push_back(std::make_unique<GoblinWorld>(
        agents, seed + 3, absl::GetFlag(FLAGS_tokens)));
  }
  if (which == "forager") {
    worlds.push_back(std::make_unique<ForagerWorld>(
        agents, seed, static_cast<float>(absl::GetFlag(FLAGS_noise))));
  }
  return worlds;
}

// Waits (up to 30 s) for the service, then learns each set's factor order
// once. False, with the reason printed, when a set's schema never came.
bool BindWorlds(client::Client& client,
                std::vector<std::unique_ptr<World>>& worlds) {
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  for (auto& w : worlds) {
    absl::StatusOr<std::shared_ptr<const client::SetSchema>> schema;
    while (!(schema = client.Schema(w->set())).ok()) {
      if (absl::Now() > give_up || stop_requested.load()) {
        std::fprintf(stderr, "%s: %s\n", w->set().c_str(),
                     std::string(schema.status().message()).c_str());
        return false;
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    w->Bind(*schema);
  }
  return true;
}

// The progress lines: decisions per second since the last line and each
// world's switches per agent per minute; the final line's totals.
class Reporter {
 public:
  explicit Reporter(const std::vector<std::unique_ptr<World>>& worlds)
      : worlds_(worlds), start_(absl::Now()), last_(start_) {}

  void Count(int64_t decisions) {
    decisions_ += decisions;
    since_last_ += decisions;
  }
  absl::Time start() const { return start_; }

  void Print(double now, bool final) {
    const absl::Time t = absl::Now();
    const double wall = absl::ToDoubleSeconds(t - last_);
    std::string line = absl::StrFormat("      t=%.0fs decisions/s=%.0f", now,
                                       wall > 0 ? since_last_ / wall : 0.0);
    if (final) {
      line = absl::StrFormat(
          "final: %.0fs simulated, %d decisions, %.0f "
          "decisions/s overall",
          now, decisions_, decisions_ / absl::ToDoubleSeconds(t - start_));
    }
    for (const auto& w : worlds_) {
      const double minutes = now / 60.0;
      line += absl::StrFormat(
          " | %s switches/agent/min=%.1f%s", w->set(),
          minutes > 0 ? w->switches() / (minutes * w->agents()) : 0.0,
          w->Extra());
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    since_last_ = 0;
    last_ = t;
  }

 private:
  const std::vector<std::unique_ptr<World>>& worlds_;
  const absl::Time start_;
  absl::Time last_;
  int64_t decisions_ = 0, since_last_ = 0;
};

// --form: which worlds send blocks. False, with the reason printed, for a
// flag that does not fit.
bool ChooseForms(std::vector<std::unique_ptr<World>>& worlds) {
  const std::string form = absl::GetFlag(FLAGS_form);
  if (form != "snapshots" && form != "columnar") {
    std::fprintf(stderr, "--form: expected snapshots or columnar\n");
    return false;
  }
  if (form == "columnar" && absl::GetFlag(FLAGS_trace) > 0) {
    std::fprintf(stderr,
                 "--trace: blocks answer numbers only; use --form=snapshots\n");
    return false;
  }
  for (auto& w : worlds) {
    w->set_columnar(form == "columnar");
  }
  return true;
}

// Hands each world its part of one answer (its block, or its decisions in
// request order) and counts them.
void ApplyAnswer(const v1::DecideResponse& response, bool trace, double now,
                 double dt, std::vector<std::unique_ptr<World>>& worlds,
                 Reporter& reporter) {
  int first = 0, block = 0;
  for (auto& w : worlds) {
    if (w->columnar()) {
      w->ApplyBlock(response.blocks(block++), now, dt);
      reporter.Count(w->agents());
      continue;
    }
    if (trace) {
      const v1::Decision& d = response.decisions(first);
      std::printf("t=%.1f %s: %s\n", now, d.agent_id().c_str(),
                  d.explanation().summary().c_str());
    }
    w->Apply(response, first, now, dt);
    first += w->agents();
  }
  reporter.Count(response.decisions_size());
}

int Run() {
  client::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  options.deadline = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<client::Client>> client =
      client::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(client.status().message()).c_str());
    return 2;
  }
  const int agents = absl::GetFlag(FLAGS_agents);
  std::vector<std::unique_ptr<World>> worlds =
      MakeWorlds(absl::GetFlag(FLAGS_world), agents, absl::GetFlag(FLAGS_seed));
  if (worlds.empty()) {
    std::fprintf(stderr,
                 "--world: expected villager, arena, guard, forager, goblins "
                 "or all\n");
    return 2;
  }
  if (!BindWorlds(**client, worlds)) return 1;

  const double hz = absl::GetFlag(FLAGS_hz);
  const double dt = 1.0 / hz;
  const bool realtime = absl::GetFlag(FLAGS_realtime);
  const double end = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_duration));
  if (!ChooseForms(worlds)) return 2;
  std::unique_ptr<client::DecisionStream> stream = (*client)->OpenStream();
  Reporter reporter(worlds);
  const absl::Time start = reporter.start();
  absl::Time next_report = start + absl::GetFlag(FLAGS_report_every);
  double now = 0;
  std::string blocks;
  for (auto& w : worlds) {
    if (w->columnar())
      absl::StrAppend(&blocks, blocks.empty() ? " (as blocks: " : ", ",
                      w->set());
  }
  std::printf(
      "utilityd-sim: %zu world(s) x %d agents at %.0f Hz against %s%s\n",
      worlds.size(), agents, hz, options.target.c_str(),
      blocks.empty() ? "" : (blocks + ")").c_str());
  std::fflush(stdout);
  for (uint64_t tick = 0; !stop_requested.load(); ++tick) {
    if (end > 0 && now >= end) break;
    // A batch the stream lends and reuses: no allocation per tick on
    // this thread once warm (docs/CLIENTS.md, "The game thread").
    client::StreamBatch* lent = stream->Borrow();
    v1::DecideRequest& batch = lent->request();
    for (auto& w : worlds) {
      if (w->columnar()) {
        w->FillBlock(now, tick, &batch);
      } else {
        w->Fill(now, tick, &batch);
      }
    }
    const bool trace = tick < static_cast<uint64_t>(absl::GetFlag(FLAGS_trace));
    if (trace) batch.set_explain(v1::EXPLAIN_FULL);
    stream->Send(lent);
    const client::BatchResult& result = stream->Wait(lent);
    if (!result.status.ok()) {
      std::fprintf(stderr, "tick %llu: %s\n",
                   static_cast<unsigned long long>(tick),
                   std::string(result.status.message()).c_str());
      stream->Return(lent);
      continue;
    }
    ApplyAnswer(result.response, trace, now, dt, worlds, reporter);
    stream->Return(lent);
    now += dt;
    if (realtime) {
      absl::SleepFor(start + absl::Seconds(now) - absl::Now());
    }
    if (absl::Now() >= next_report) {
      reporter.Print(now, false);
      next_report += absl::GetFlag(FLAGS_report_every);
    }
  }
  stream->Close();
  reporter.Print(now, true);
  return 0;
}

}  // namespace
}  // namespace utilityd::sim

int main(int argc, char** argv) {
  utilityd::SetUsage(
      "examples/sim/sim.cc", "utilityd-sim",
      "A game server that streams its agents to utilityd every tick.");
  absl::ParseCommandLine(argc, argv);
  signal(SIGINT, utilityd::sim::OnSignal);
  signal(SIGTERM, utilityd::sim::OnSignal);
  return utilityd::sim::Run();
}
