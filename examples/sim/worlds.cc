// The simulator's worlds (world.h): villagers, the arena's mage and
// goblins, guards with a tree, and foragers.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "world.h"

namespace utilityd::sim {
namespace {

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

}  // namespace

// The worlds --world names, each seeded from --seed; empty for an unknown
// name.
std::vector<std::unique_ptr<World>> MakeWorlds(const std::string& which,
                                               int agents, uint64_t seed,
                                               bool tokens, float noise) {
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
    worlds.push_back(std::make_unique<GoblinWorld>(agents, seed + 3, tokens));
  }
  if (which == "forager") {
    worlds.push_back(std::make_unique<ForagerWorld>(agents, seed, noise));
  }
  return worlds;
}

}  // namespace utilityd::sim
