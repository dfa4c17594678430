// The simulator's worlds: each keeps seeded agents of one behaviour set,
// fills a batch from them (snapshots or a block) and applies the decisions
// that come back. worlds.cc holds the concrete worlds.
#ifndef UTILITYD_EXAMPLES_SIM_WORLD_H_
#define UTILITYD_EXAMPLES_SIM_WORLD_H_

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "utilityd/client/block.h"
#include "utilityd/client/client.h"
#include "utilityd/client/tree_tracker.h"

namespace utilityd::sim {

using Rng = std::mt19937_64;

inline float Uniform(Rng& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}
inline float Clamp(float v, float lo, float hi) {
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

// The worlds --world names (villager, arena, guard, all; goblins, with
// --tokens; forager, with --noise), each seeded from `seed`; empty for an
// unknown name.
std::vector<std::unique_ptr<World>> MakeWorlds(const std::string& which,
                                               int agents, uint64_t seed,
                                               bool tokens, float noise);

}  // namespace utilityd::sim

#endif  // UTILITYD_EXAMPLES_SIM_WORLD_H_
