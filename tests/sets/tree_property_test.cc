// A plain, stateful behaviour-tree runtime written the way seed 001 writes
// one (node objects whose members remember what runs) against utilityd's
// stateless ticks, whose memory is only the bytes round-tripped between
// calls as the wire carries them. On random trees with random leaf outcomes,
// factor changes and game time, thousands of ticks: the same leaves run
// (started or continuing, with targets), the same leaves are halted, the
// same root status.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::engine {
namespace {

using S = NodeStatus;

struct World {
  const CompiledBehaviourSet* set = nullptr;
  std::vector<float> factors;
  int64_t now_ms = 0;
  std::map<int, S> outcomes;
  std::vector<TreeLeaf> run;
  std::vector<TreeLeaf> halted;
  uint64_t seed = 0;
  absl::Span<const TargetInput> targets;
};

class Node {
 public:
  virtual ~Node() = default;
  S Run(World& w, int target) {
    const S s = Tick(w, target);
    running_ = s == S::kRunning;
    return s;
  }
  // Abandons this subtree: stops what runs under it and forgets.
  void Halt(World& w) {
    if (!running_) return;
    for (auto& c : children_) c->Halt(w);
    OnHalt(w);
    running_ = false;
  }
  std::vector<std::unique_ptr<Node>> children_;
  int id_ = 0;
  const CompiledNode* def_ = nullptr;

 protected:
  virtual S Tick(World& w, int target) = 0;
  virtual void OnHalt(World&) {}
  bool running_ = false;
};

class Action : public Node {
  S Tick(World& w, int target) override {
    if (running_) {
      auto it = w.outcomes.find(id_);
      if (it != w.outcomes.end() && it->second != S::kRunning)
        return it->second;
      w.run.push_back({id_, def_->action, target_, false});
      return S::kRunning;
    }
    target_ = target;
    w.run.push_back({id_, def_->action, target_, true});
    return S::kRunning;
  }
  void OnHalt(World& w) override {
    for (auto it = w.run.begin(); it != w.run.end(); ++it) {
      if (it->node == id_) {
        const bool fresh = it->started;
        w.run.erase(it);
        if (fresh) return;
        break;
      }
    }
    auto o = w.outcomes.find(id_);
    if (o != w.outcomes.end() && o->second != S::kRunning) return;
    w.halted.push_back({id_, def_->action, target_, false});
  }
  int target_ = -1;
};

class Condition : public Node {
  S Tick(World& w, int) override {
    const CompiledConsideration& c = def_->condition;
    const float raw = w.factors[c.factor];
    const float x = std::clamp((raw - c.range_lo) / c.range_span, 0.0f, 1.0f);
    const float y = EvaluateCurve(c.curve, x, w.set->tree()->curve_points);
    return y >= def_->threshold ? S::kSuccess : S::kFailure;
  }
};

// sequence / fallback with memory of the running child.
class Ordered : public Node {
 public:
  explicit Ordered(S go_on) : go_on_(go_on) {}

 private:
  S Tick(World& w, int) override {
    if (!running_) current_ = 0;
    for (; current_ < children_.size(); ++current_) {
      const S s = children_[current_]->Run(w, -1);
      if (s == S::kRunning) return s;
      if (s != go_on_) return s;
    }
    return go_on_;
  }
  S go_on_;
  size_t current_ = 0;
};

class Reactive : public Node {
 public:
  explicit Reactive(S go_on) : go_on_(go_on) {}

 private:
  S Tick(World& w, int) override {
    for (size_t i = 0; i < children_.size(); ++i) {
      const S s = children_[i]->Run(w, -1);
      if (s == S::kRunning || s != go_on_) {
        for (size_t j = 0; j < children_.size(); ++j) {
          if (j != i) children_[j]->Halt(w);
        }
        return s;
      }
    }
    return go_on_;
  }
  S go_on_;
};

class Parallel : public Node {
  S Tick(World& w, int) override {
    if (!running_) done_.assign(children_.size(), S::kIdle);
    const int total = static_cast<int>(children_.size());
    for (size_t i = 0; i < children_.size(); ++i) {
      if (done_[i] != S::kIdle) continue;
      const S s = children_[i]->Run(w, -1);
      if (s != S::kRunning) done_[i] = s;
      int ok = 0, bad = 0;
      for (S d : done_) {
        ok += d == S::kSuccess;
        bad += d == S::kFailure;
      }
      if (ok >= def_->success_threshold || bad >= def_->failure_threshold ||
          total - bad < def_->success_threshold) {
        for (auto& c : children_) c->Halt(w);
        return ok >= def_->success_threshold ? S::kSuccess : S::kFailure;
      }
    }
    return S::kRunning;
  }
  std::vector<S> done_;
};

class Decorator : public Node {
  S Tick(World& w, int) override {
    switch (def_->kind) {
      case NodeKind::kInverter: {
        const S s = children_[0]->Run(w, -1);
        return s == S::kSuccess   ? S::kFailure
               : s == S::kFailure ? S::kSuccess
                                  : s;
      }
      case NodeKind::kForceSuccess: {
        const S s = children_[0]->Run(w, -1);
        return s == S::kRunning ? s : S::kSuccess;
      }
      case NodeKind::kForceFailure: {
        const S s = children_[0]->Run(w, -1);
        return s == S::kRunning ? s : S::kFailure;
      }
      case NodeKind::kRepeat:
      case NodeKind::kRetry: {
        const S again =
            def_->kind == NodeKind::kRepeat ? S::kSuccess : S::kFailure;
        if (!running_) count_ = 0;
        while (true) {
          const S s = children_[0]->Run(w, -1);
          if (s != again) return s;
          if (++count_ >= def_->count) return again;
        }
      }
      case NodeKind::kCooldown: {
        if (!running_ && w.now_ms < ready_at_) return S::kFailure;
        const S s = children_[0]->Run(w, -1);
        if (s != S::kRunning) ready_at_ = w.now_ms + def_->millis;
        return s;
      }
      case NodeKind::kTimeout: {
        if (!running_) {
          started_ = w.now_ms;
        } else if (w.now_ms - started_ >= def_->millis) {
          Halt(w);
          return S::kFailure;
        }
        return children_[0]->Run(w, -1);
      }
      default:
        return S::kFailure;
    }
  }
  int count_ = 0;
  int64_t ready_at_ = INT64_MIN;
  int64_t started_ = 0;
};

class Utility : public Node {
  S Tick(World& w, int) override {
    if (running_) {
      if (def_->rescore == Rescore::kEveryTick) {
        const Decision& d = Score(w, child_, target_);
        if (d.action < 0) {
          children_[child_]->Halt(w);
          return S::kFailure;
        }
        if (d.action != child_ || d.target != target_) {
          children_[child_]->Halt(w);
          child_ = d.action;
          target_ = d.target;
        }
      }
    } else {
      tried_.clear();
      const Decision& d = Score(w, -1, -1);
      if (d.action < 0) return S::kFailure;
      child_ = d.action;
      target_ = d.target;
    }
    while (true) {
      const S s = children_[child_]->Run(w, target_);
      if (s == S::kRunning || s == S::kSuccess ||
          def_->on_failure == OnChildFailure::kFail) {
        return s;
      }
      tried_.push_back(child_);
      const Decision& d = Score(w, -1, -1);
      int best = -1;
      for (size_t i = 0; i < d.candidates.size(); ++i) {
        const CandidateTrace& c = d.candidates[i];
        if (!c.eligible ||
            std::find(tried_.begin(), tried_.end(), c.action) != tried_.end()) {
          continue;
        }
        const auto& acts = def_->choices->actions();
        if (best < 0 ||
            acts[c.action].rank > acts[d.candidates[best].action].rank ||
            (acts[c.action].rank == acts[d.candidates[best].action].rank &&
             c.score > d.candidates[best].score)) {
          best = static_cast<int>(i);
        }
      }
      if (best < 0) return S::kFailure;
      child_ = d.candidates[best].action;
      target_ = d.candidates[best].target;
    }
  }
  const Decision& Score(World& w, int current, int current_target) {
    AgentInput in{.factors = w.factors,
                  .current_action = current,
                  .current_target = current < 0 ? -1 : current_target,
                  .targets = w.targets,
                  .seed = w.seed};
    EXPECT_TRUE(
        Decide(*def_->choices, in, ExplainLevel::kNone, &decision_).ok());
    return decision_;
  }
  int child_ = -1, target_ = -1;
  std::vector<int> tried_;
  Decision decision_;
};

std::unique_ptr<Node> Build(const CompiledTree& tree, int id) {
  const CompiledNode& n = tree.node(id);
  std::unique_ptr<Node> node;
  switch (n.kind) {
    case NodeKind::kSequence:
      node = std::make_unique<Ordered>(S::kSuccess);
      break;
    case NodeKind::kFallback:
      node = std::make_unique<Ordered>(S::kFailure);
      break;
    case NodeKind::kReactiveSequence:
      node = std::make_unique<Reactive>(S::kSuccess);
      break;
    case NodeKind::kReactiveFallback:
      node = std::make_unique<Reactive>(S::kFailure);
      break;
    case NodeKind::kParallel:
      node = std::make_unique<Parallel>();
      break;
    case NodeKind::kCondition:
      node = std::make_unique<Condition>();
      break;
    case NodeKind::kAction:
      node = std::make_unique<Action>();
      break;
    case NodeKind::kUtility:
      node = std::make_unique<Utility>();
      break;
    default:
      node = std::make_unique<Decorator>();
      break;
  }
  node->id_ = id;
  node->def_ = &n;
  for (uint32_t i = 0; i < n.child_count; ++i) {
    node->children_.push_back(Build(tree, tree.child(n, i)));
  }
  return node;
}

// A random tree in the format, `depth` levels at most.
std::string RandomNode(std::mt19937& rng, int depth,
                       const std::string& indent) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char* leaves[] = {"x", "y", "z", "w"};
  const char* factors[] = {"a", "b", "c"};
  const int kind = depth <= 1 ? 10 + pick(3) : pick(13);
  auto children = [&](int lo, int hi) {
    std::string out = absl::StrCat(indent, "  children:\n");
    const int n = lo + pick(hi - lo + 1);
    for (int i = 0; i < n; ++i) {
      out += absl::StrCat(indent, "    - ",
                          RandomNode(rng, depth - 1, indent + "      "));
    }
    return out;
  };
  auto child = [&]() {
    return absl::StrCat(indent, "  child:\n", indent, "    ",
                        RandomNode(rng, depth - 1, indent + "    "));
  };
  switch (kind) {
    case 0:
      return absl::StrCat("sequence:\n", children(1, 3));
    case 1:
      return absl::StrCat("fallback:\n", children(1, 3));
    case 2:
      return absl::StrCat("reactive_sequence:\n", children(1, 3));
    case 3:
      return absl::StrCat("reactive_fallback:\n", children(1, 3));
    case 4: {
      const int n = 1 + pick(3);
      std::string out = absl::StrCat(
          "parallel:\n", indent, "  success_threshold: ", 1 + pick(n), "\n",
          indent, "  failure_threshold: ", 1 + pick(n), "\n", indent,
          "  children:\n");
      for (int i = 0; i < n; ++i) {
        out += absl::StrCat(indent, "    - ",
                            RandomNode(rng, depth - 1, indent + "      "));
      }
      return out;
    }
    case 5:
      return absl::StrCat("inverter:\n", child());
    case 6:
      return absl::StrCat(pick(2) ? "force_success" : "force_failure", ":\n",
                          child());
    case 7: {
      const bool repeat = pick(2) == 1;
      return absl::StrCat(repeat ? "repeat:\n" : "retry:\n", indent,
                          repeat ? "  times: " : "  attempts: ", 1 + pick(3),
                          "\n", child());
    }
    case 8:
      return absl::StrCat(pick(2) ? "cooldown" : "timeout", ":\n", indent,
                          "  seconds: ", 1 + pick(3), "\n", child());
    case 9:
      return absl::StrCat(
          "utility:\n", indent,
          "  rescore: ", pick(2) ? "every_tick" : "on_enter", "\n", indent,
          "  on_failure: ", pick(2) ? "next_best" : "fail", "\n", indent,
          "  children: [{action: by_b}, {action: by_c}, {action: hit}]\n");
    case 10:
    case 11:
      return absl::StrCat("action: ", leaves[pick(4)], "\n");
    default:
      return absl::StrCat("condition: {factor: ", factors[pick(3)], "}\n");
  }
}

const char kSet[] = R"(
name: p
factors: [{name: a}, {name: b}, {name: c}]
target_factors: [{name: near}]
actions:
  - {name: x, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: y, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: z, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: w, considerations: [{name: k, factor: a, output: {min: 1}}]}
  - {name: by_b, considerations: [{name: k, factor: b}]}
  - {name: by_c, considerations: [{name: k, factor: c}]}
  - name: hit
    per_target: true
    considerations: [{name: n, factor: near, per_target: true}, {name: k, factor: a}]
selection: {commitment_bonus: 0.1}
)";

std::string Describe(const std::vector<TreeLeaf>& leaves) {
  std::string out;
  for (const TreeLeaf& l : leaves) {
    absl::StrAppend(&out, l.node, "/", l.action, "@", l.target,
                    l.started ? "+" : "", " ");
  }
  return out;
}

TEST(TreeProperty, StatelessTicksEqualAStatefulRuntime) {
  std::mt19937 rng(20261201);
  int trees = 0, ticks = 0, halts = 0, starts = 0;
  for (int t = 0; t < 300; ++t) {
    const std::string tree = RandomNode(rng, 4, "  ");
    const std::string yaml = absl::StrCat(kSet, "tree:\n  ", tree);
    auto loaded = loader::LoadSetText(yaml, "random.yaml");
    ASSERT_TRUE(loaded.ok()) << loaded.status() << "\n" << yaml;
    const CompiledBehaviourSet& set = (*loaded)->compiled;
    ++trees;
    std::unique_ptr<Node> root = Build(*set.tree(), 0);
    std::vector<float> near = {0.3f, 0.8f};
    std::vector<TargetInput> targets = {{absl::MakeConstSpan(&near[0], 1)},
                                        {absl::MakeConstSpan(&near[1], 1)}};
    World w{.set = &set,
            .factors = {0.5f, 0.5f, 0.5f},
            .seed = 9,
            .targets = targets};
    std::string state;
    std::vector<TreeLeaf> running;
    for (int k = 0; k < 40; ++k) {
      SCOPED_TRACE(absl::StrCat("tree ", t, " tick ", k, "\n", yaml));
      const float levels[] = {0.0f, 0.3f, 0.7f, 1.0f};
      for (float& f : w.factors) {
        if (rng() % 3 == 0) f = levels[rng() % 4];
      }
      if (rng() % 4 == 0) {
        near[0] = levels[rng() % 4];  // in place: the targets point here
        near[1] = levels[rng() % 4];
      }
      w.now_ms += 250 + static_cast<int64_t>(rng() % 1000);
      // Outcomes for what ran last tick: running, success or failure.
      std::vector<LeafOutcome> outcomes;
      w.outcomes.clear();
      for (const TreeLeaf& l : running) {
        const int r = static_cast<int>(rng() % 4);
        const S s = r < 2 ? S::kRunning : r == 2 ? S::kSuccess : S::kFailure;
        w.outcomes[l.node] = s;
        if (s != S::kRunning || rng() % 2) outcomes.push_back({l.node, s});
      }
      w.run.clear();
      w.halted.clear();
      const S expected = root->Run(w, -1);

      AgentInput agent{
          .factors = w.factors, .targets = targets, .seed = w.seed};
      TreeInput in{.game_time = static_cast<double>(w.now_ms) / 1000.0,
                   .state = state,
                   .outcomes = outcomes};
      TreeTick tick;
      ASSERT_TRUE(TickTree(set, agent, in, ExplainLevel::kNone, &tick).ok());
      ASSERT_EQ(tick.reset, TreeReset::kNone);
      ASSERT_EQ(NodeStatusName(tick.status),
                std::string(NodeStatusName(expected)));
      ASSERT_EQ(Describe(tick.run), Describe(w.run));
      ASSERT_EQ(Describe(tick.halted), Describe(w.halted));
      state = tick.state;  // the only memory utilityd has
      running = tick.run;
      ++ticks;
      halts += static_cast<int>(tick.halted.size());
      for (const TreeLeaf& l : tick.run) starts += l.started;
    }
  }
  // The walk exercised what it claims to.
  EXPECT_EQ(trees, 300);
  EXPECT_GT(halts, 100);
  EXPECT_GT(starts, 1000);
  std::printf("%d trees, %d ticks, %d leaves started, %d halted\n", trees,
              ticks, starts, halts);
}

}  // namespace
}  // namespace utilityd::engine
