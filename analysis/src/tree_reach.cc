// A tree's reach (docs/ANALYSIS.md, "Trees"): for every node, the conditions
// that hold in every tick that enters it, whether they can all hold at once
// (so the node is ever entered), conditions no value of their factor
// passes (or fails), and children of utility nodes that never win over the
// part of the box their path allows.
#include "tree_reach.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "reach.h"
#include "report.h"
#include "utilityd/engine/node_traits.h"
#include "utilityd/engine/tree.h"

namespace utilityd::analysis::internal {
namespace {

using engine::NodeKind;
using engine::NodeStatus;

enum class Feasible { kYes, kNo, kUnknown };

// Whether some point of the box meets every condition of `conds` (each
// reads one agent factor, so each factor is searched on its own: interval
// halving with the conditions' exact ranges over each interval). `point`
// gets one such point, the middle of a factor no condition reads.
Feasible Conjunction(const Model& model,
                     const std::vector<PathCondition>& conds,
                     std::vector<double>* point) {
  const Box box = model.FullBox(false);
  point->assign(box.lo.size(), 0);
  Feasible all = Feasible::kYes;
  for (size_t d = 0; d < box.lo.size(); ++d) {
    std::vector<const PathCondition*> mine;
    for (const PathCondition& p : conds) {
      if (p.dim == static_cast<int>(d)) mine.push_back(&p);
    }
    (*point)[d] = 0.5 * (box.lo[d] + box.hi[d]);
    if (mine.empty()) continue;
    const double smallest = 1e-7 * (box.hi[d] - box.lo[d]);
    std::vector<std::pair<double, double>> stack = {{box.lo[d], box.hi[d]}};
    Feasible here = Feasible::kNo;
    for (int budget = 20000; !stack.empty() && budget > 0; --budget) {
      const auto [a, b] = stack.back();
      stack.pop_back();
      bool possible = true;
      for (const PathCondition* p : mine) {
        bool can = false, must = false;
        p->Over(a, b, &can, &must);
        possible &= can;
      }
      if (!possible) continue;
      const double middle = 0.5 * (a + b);
      for (double x : {a, middle, b}) {
        if (std::all_of(mine.begin(), mine.end(),
                        [x](const PathCondition* p) { return p->Met(x); })) {
          here = Feasible::kYes;
          (*point)[d] = x;
          break;
        }
      }
      if (here == Feasible::kYes) break;
      if (b - a < smallest) {
        here = Feasible::kUnknown;
        continue;
      }
      stack.push_back({middle, b});
      stack.push_back({a, middle});
    }
    if (here == Feasible::kNo && !stack.empty()) here = Feasible::kUnknown;
    if (here == Feasible::kNo) return Feasible::kNo;
    if (here == Feasible::kUnknown) all = Feasible::kUnknown;
  }
  return all;
}

class TreeWalk {
 public:
  TreeWalk(const Model& model, const AnalysisOptions& o, v1::SetAnalysis* out)
      : model_(model),
        set_(model.set()),
        tree_(*set_.tree()),
        options_(o),
        out_(out),
        count_(static_cast<int>(tree_.nodes.size())),
        instant_(count_, true),
        tick_(count_),
        entry_(count_),
        dead_(count_, false),
        why_(count_) {}

  void Run() {
    // A subtree is instant when nothing in it can run across ticks.
    for (int id = count_ - 1; id >= 0; --id) {
      const engine::CompiledNode& n = tree_.node(id);
      if (engine::NodeKindInfo(n.kind).answers_running) instant_[id] = false;
      if (n.parent >= 0 && !instant_[id]) instant_[n.parent] = false;
    }
    for (int id = 0; id < count_; ++id) Children(id);
    for (int id = 0; id < count_; ++id) Report(id);
  }

 private:
  std::string Label(int id) const {
    const engine::CompiledNode& n = tree_.node(id);
    if (!n.name.empty()) return n.name;
    if (n.kind == NodeKind::kAction) return set_.actions()[n.action].name;
    return absl::StrCat("node ", id);
  }

  // Whether node `id` has a precondition (failure_if, success_if, skip_if,
  // while): the engine may then answer for it without ticking it.
  bool Guarded(int id) const {
    const engine::CompiledNode& n = tree_.node(id);
    return n.Guarded();
  }

  // Whether node `id` may answer skipped: a skip_if or while under it (its
  // own included), a run_once that skips or a loop that skips when no value
  // is left. Its parent then passes it over whatever it otherwise answers,
  // so nothing is ruled out from it.
  bool MaySkip(int id) const {
    const engine::CompiledNode& n = tree_.node(id);
    if (n.skip_if >= 0 || n.while_holds >= 0 || n.then_skip ||
        (n.kind == NodeKind::kLoop && n.if_empty == NodeStatus::kSkipped)) {
      return true;
    }
    for (uint32_t i = 0; i < n.child_count; ++i) {
      if (MaySkip(tree_.child(n, static_cast<int>(i)))) return true;
    }
    return false;
  }

  // The condition a child stands for when it succeeds (`success`) or fails:
  // a condition node, or an inverter of one, neither with a precondition
  // (which can answer either way without the curve).
  bool AsCondition(int id, bool success, PathCondition* p) const {
    const engine::CompiledNode* n = &tree_.node(id);
    int at = id;
    if (Guarded(id)) return false;
    if (n->kind == NodeKind::kInverter) {
      at = tree_.child(*n, 0);
      n = &tree_.node(at);
      success = !success;
      if (Guarded(at)) return false;
    }
    if (n->kind != NodeKind::kCondition) return false;
    CurveOf(at, success, p);
    return true;
  }

  // The condition node `at`'s curve and threshold, as holding (`success`)
  // or failing, whatever its preconditions.
  void CurveOf(int at, bool success, PathCondition* p) const {
    const engine::CompiledNode* n = &tree_.node(at);
    p->node = at;
    p->dim = n->condition.factor;
    p->cc = &n->condition;
    p->threshold = n->threshold;
    p->points = tree_.curve_points;
    p->holds = success;
  }

  // Whether child `id` can return `status` (success, else failure) in a
  // tick where `given` holds; an empty reason when it can (or may).
  std::string Cannot(int id, bool success,
                     const std::vector<PathCondition>& given) const {
    const engine::CompiledNode& n = tree_.node(id);
    const char* status = success ? "succeeds" : "fails";
    // A precondition answers without ticking the node: success_if can make
    // any node succeed, failure_if fail.
    if ((success ? n.success_if : n.failure_if) >= 0) return "";
    if (MaySkip(id)) return "";
    if (!engine::NodeMayAnswer(
            n, success ? NodeStatus::kSuccess : NodeStatus::kFailure)) {
      return absl::StrCat(Label(id), " never ", status, " (",
                          engine::NodeKindName(n.kind), ")");
    }
    PathCondition p;
    if (!AsCondition(id, success, &p)) return "";
    std::vector<PathCondition> all = given;
    all.push_back(p);
    std::vector<double> point;
    if (Conjunction(model_, all, &point) != Feasible::kNo) return "";
    return absl::StrCat(Label(id), " never ", status,
                        given.empty() ? "" : " on this path");
  }

  static void Append(std::vector<PathCondition>* to,
                     const std::vector<PathCondition>& from) {
    for (const PathCondition& p : from) {
      const bool seen =
          std::any_of(to->begin(), to->end(), [&](const PathCondition& q) {
            return q.node == p.node && q.holds == p.holds;
          });
      if (!seen) to->push_back(p);
    }
  }

  // What holds when each child of `id` is ticked (tick_) and entered
  // (entry_, ticked while not running), and which children are never
  // ticked.
  void Children(int id) {
    const engine::CompiledNode& n = tree_.node(id);
    const engine::NodeKindTraits& kind = engine::NodeKindInfo(n.kind);
    const int m = static_cast<int>(n.child_count);
    const bool ordered = kind.order != engine::NodeOrder::kNone;
    const bool reactive = kind.order == engine::NodeOrder::kReactive;
    // Ordered nodes: the children before k returned `pass` in the tick
    // that enters k. A reactive node ticks all of them every tick; one
    // that resumes only those after the last child that can run (an
    // instant child never runs, so the node cannot have resumed past it);
    // one that keeps its place none (it may start at k, kept from a tick
    // in which the ones before k succeeded).
    const bool pass = kind.go_on == NodeStatus::kSuccess;
    const bool siblings_hold = kind.order != engine::NodeOrder::kKeepsPlace;
    std::string blocked;
    bool all_instant = true;
    for (int k = 0; k < m; ++k) {
      const int c = tree_.child(n, k);
      tick_[c] = tick_[id];
      entry_[c] = tick_[id];
      if (!blocked.empty()) {
        dead_[c] = true;
        why_[c] = blocked;
      }
      if (kind.child_entered_with_it) {
        Append(&entry_[c], entry_[id]);  // entered together
      }
      if (!engine::NodeTicksChildren(n)) {
        dead_[c] = true;
        why_[c] = absl::StrCat(Label(id), " never ticks its child (", kind.name,
                               " 0)");
      }
      if (!ordered) continue;
      std::vector<PathCondition> before;
      for (int j = k - 1; siblings_hold && j >= 0; --j) {
        const int s = tree_.child(n, j);
        if (!instant_[s] && !reactive) break;
        PathCondition p;
        if (AsCondition(s, pass, &p)) before.push_back(p);
      }
      Append(&entry_[c], before);
      if (reactive) Append(&tick_[c], before);
      if (all_instant && !reactive) Append(&entry_[c], entry_[id]);
      all_instant &= instant_[c];
      if (blocked.empty()) blocked = Cannot(c, pass, tick_[id]);
    }
  }

  std::vector<std::string> PathText(const std::vector<PathCondition>& path) {
    std::vector<std::string> text;
    for (const PathCondition& p : path) {
      text.push_back(
          absl::StrCat(Label(p.node), p.holds ? " holds" : " fails"));
    }
    return text;
  }

  void Report(int id) {
    const engine::CompiledNode& n = tree_.node(id);
    v1::TreeNodeReach* x = out_->add_tree();
    x->set_node(id);
    x->set_kind(engine::NodeKindName(n.kind));
    x->set_label(Label(id));
    for (const std::string& t : PathText(entry_[id])) x->add_path(t);
    x->set_reach(v1::REACH_ALIVE);
    if (n.kind == NodeKind::kCondition) Condition(id, x);
    const bool parent_dead = n.parent >= 0 && dead_[n.parent];
    if (parent_dead) {
      dead_[id] = true;
      x->set_reach(v1::REACH_DEAD);
      x->set_reason(
          absl::StrCat("inside ", Label(n.parent), ", which is never entered"));
      return;
    }
    std::vector<double> point;
    const Feasible f =
        dead_[id] ? Feasible::kNo : Conjunction(model_, entry_[id], &point);
    if (f == Feasible::kNo) {
      dead_[id] = true;
      if (why_[id].empty()) {
        why_[id] = absl::StrCat(
            "the conditions that hold whenever it is entered cannot all "
            "hold at once: ",
            absl::StrJoin(PathText(entry_[id]), ", "));
      }
      x->set_reach(v1::REACH_DEAD);
      x->set_reason(why_[id]);
      AddFinding(out_, "never_entered", Label(id),
                 absl::StrCat("is never entered: ", why_[id]));
      return;
    }
    if (f == Feasible::kUnknown) x->set_reach(v1::REACH_UNDECIDED);
    if (n.parent >= 0 && tree_.node(n.parent).kind == NodeKind::kUtility) {
      Choice(n.parent, id, x);
    }
  }

  void Condition(int id, v1::TreeNodeReach* x) {
    const engine::CompiledNode& n = tree_.node(id);
    PathCondition p;
    CurveOf(id, true, &p);
    const Dim& dim = model_.dims()[p.dim];
    const Range r = p.OutputRange(dim.lo, dim.hi);
    x->set_min_output(static_cast<float>(r.lo));
    x->set_max_output(static_cast<float>(r.hi));
    const std::string where = absl::StrCat(
        "its curve gives ", Number(r.lo), "..", Number(r.hi), " over ",
        dim.name, " ", Number(dim.lo), "..", Number(dim.hi),
        ", against a threshold of ", Number(n.threshold));
    if (r.hi < n.threshold) {
      AddFinding(out_, "never_holds", Label(id),
                 absl::StrCat("no value of ", dim.name, " passes it: ", where));
    } else if (r.lo >= n.threshold) {
      AddFinding(out_, "always_holds", Label(id),
                 absl::StrCat("every value of ", dim.name,
                              " passes it (a test that never fails): ", where));
    }
  }

  // Child `id` of utility node `u`: is it ever chosen where its path
  // allows? A node that tries the next best child on a failure reaches
  // every eligible one.
  void Choice(int u, int id, v1::TreeNodeReach* x) {
    const engine::CompiledNode& un = tree_.node(u);
    const Model choices(*un.choices);
    int child = 0;
    while (tree_.child(un, child) != id) ++child;
    x->set_utility(u);
    // Every-tick rescoring chooses while the node runs too, where only the
    // conditions of any tick hold; a child that wins against a running
    // rival's bonus also wins from a fresh state there.
    const std::vector<PathCondition>& path =
        un.rescore == engine::Rescore::kEveryTick ? tick_[u] : entry_[u];
    const ReachGoal goal = un.on_failure == engine::OnChildFailure::kNextBest
                               ? ReachGoal::kEligible
                               : ReachGoal::kSelected;
    const ReachResult r = Reach(choices, child, -1, options_.max_boxes,
                                options_.min_width, &path, goal);
    const std::string subject =
        absl::StrCat(Label(u), ".", un.choices->actions()[child].name);
    switch (r.kind) {
      case ReachKind::kAlive:
        *x->mutable_witness() =
            AsScenario(choices, r.witness, r.witness_has_target, child, -1);
        break;
      case ReachKind::kDead: {
        x->set_reach(v1::REACH_DEAD);
        std::vector<std::string> why;
        for (const Part& p : r.certificate) {
          std::string w = p.reason;
          if (p.by >= 0) {
            absl::StrAppend(&w, " by ", un.choices->actions()[p.by].name);
          }
          if (std::find(why.begin(), why.end(), w) == why.end())
            why.push_back(w);
        }
        x->set_reason(absl::StrCat(
            goal == ReachGoal::kEligible ? "never eligible" : "never chosen",
            ": ", absl::StrJoin(why, ", ")));
        AddFinding(
            out_, "never_chosen", subject,
            absl::StrCat(Label(u), " never ",
                         goal == ReachGoal::kEligible ? "finds it eligible"
                                                      : "chooses it",
                         " where its path allows (", absl::StrJoin(why, ", "),
                         ")"));
        break;
      }
      case ReachKind::kUndecided:
        x->set_reach(v1::REACH_UNDECIDED);
        AddFinding(out_, "undecided", subject,
                   absl::StrCat("neither a situation where ", Label(u),
                                " chooses it nor a proof that there is none "
                                "within ",
                                r.boxes, " boxes (raise --budget)"));
        break;
    }
  }

  const Model& model_;
  const engine::CompiledBehaviourSet& set_;
  const engine::CompiledTree& tree_;
  const AnalysisOptions& options_;
  v1::SetAnalysis* out_;
  int count_;
  std::vector<bool> instant_;
  std::vector<std::vector<PathCondition>> tick_, entry_;
  std::vector<bool> dead_;
  std::vector<std::string> why_;
};

}  // namespace

void AnalyseTree(const Model& model, const AnalysisOptions& options,
                 v1::SetAnalysis* out) {
  TreeWalk(model, options, out).Run();
}

}  // namespace utilityd::analysis::internal
