#include "reach.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "utilityd/engine/scoring_rules.h"

namespace utilityd::analysis::internal {
namespace {

// Bounds are computed in double from float terms in another order than the
// engine's; a rival "beats" a candidate only by more than this.
constexpr double kSlack = 1e-6;

bool Beats(double rival_low, double high) {
  return rival_low > high * (1 + kSlack) + 1e-12;
}

struct Node {
  Box box;
  double promise = 0;  // A's best case over its strongest rival's worst
  bool operator<(const Node& o) const { return promise < o.promise; }
};

class Search {
 public:
  Search(const Model& model, int a, int current,
         const std::vector<PathCondition>* path, ReachGoal goal)
      : goal_(goal),
        model_(model),
        set_(model.set()),
        a_(a),
        current_(current),
        with_target_(set_.actions()[a].per_target),
        read_(model.dims().size()) {
    if (path != nullptr) path_ = *path;
    for (size_t d = 0; d < read_.size(); ++d) {
      read_[d] = model.Read(static_cast<int>(d));
    }
    for (const PathCondition& p : path_) read_[p.dim] = true;
  }

  ReachResult Run(int64_t max_boxes, double min_width) {
    ReachResult result;
    std::priority_queue<Node> queue;
    queue.push({model_.FullBox(with_target_), 0});
    bool undecided = false;
    while (!queue.empty()) {
      if (result.boxes >= max_boxes) {
        undecided = true;
        break;
      }
      Node node = queue.top();
      queue.pop();
      ++result.boxes;
      Part part;
      double promise = 0;
      if (Prune(node.box, &part, &promise)) {
        part.box = node.box;
        result.certificate.push_back(std::move(part));
        continue;
      }
      std::vector<double> middle(node.box.lo.size());
      for (size_t d = 0; d < middle.size(); ++d) {
        middle[d] = 0.5 * (node.box.lo[d] + node.box.hi[d]);
      }
      bool alive = std::all_of(
          path_.begin(), path_.end(),
          [&](const PathCondition& p) { return p.Met(middle[p.dim]); });
      if (alive && goal_ == ReachGoal::kEligible) {
        alive = Eligible(model_.ScoreRange(a_, {middle, middle}, false).lo);
      } else if (alive) {
        model_.Winner(middle, with_target_, current_, a_, &alive);
      }
      if (alive) {
        result.kind = ReachKind::kAlive;
        result.witness = std::move(middle);
        result.witness_has_target = with_target_;
        result.certificate.clear();
        return result;
      }
      // Split the widest dimension that some consideration reads.
      int widest = -1;
      double width = 0;
      for (size_t d = 0; d < node.box.lo.size(); ++d) {
        const Dim& dim = model_.dims()[d];
        const double full = dim.hi - dim.lo;
        const double w =
            full > 0 ? (node.box.hi[d] - node.box.lo[d]) / full : 0;
        if (read_[d] && w > width) {
          width = w;
          widest = static_cast<int>(d);
        }
      }
      if (widest < 0 || width < min_width) {
        undecided = true;  // too small to split, neither shown
        continue;
      }
      const double cut = 0.5 * (node.box.lo[widest] + node.box.hi[widest]);
      Node low = node, high = node;
      low.box.hi[widest] = cut;
      high.box.lo[widest] = cut;
      low.promise = high.promise = promise;
      queue.push(std::move(low));
      queue.push(std::move(high));
    }
    result.kind = undecided ? ReachKind::kUndecided : ReachKind::kDead;
    if (undecided) result.certificate.clear();
    return result;
  }

 private:
  // Whether A cannot be selected anywhere in `box`; if so, why.
  bool Prune(const Box& box, Part* part, double* promise) const {
    for (const PathCondition& p : path_) {
      bool can = false, must = false;
      p.Over(box.lo[p.dim], box.hi[p.dim], &can, &must);
      if (!can) {
        part->reason = "path_condition";
        part->condition = p.node;
        *promise = 0;
        return true;  // never ticked here
      }
    }
    const engine::SelectionDefinition& sel = set_.selection();
    const Range mine = model_.ScoreRange(a_, box, a_ == current_);
    if (goal_ == ReachGoal::kEligible && !Eligible(mine.hi)) {
      part->reason = mine.hi <= 0 ? "vetoed" : "below_min_score";
      return true;
    }
    if (goal_ == ReachGoal::kEligible) return false;
    const int rank = set_.actions()[a_].rank;
    // Rivals: every other candidate at this situation (per-target rivals
    // only with the one target).
    int beaten = 0, beater = -1, always_eligible = -1;
    double strongest = 0;
    for (int b = 0; b < set_.action_count(); ++b) {
      if (b == a_) continue;
      if (set_.actions()[b].per_target && !with_target_) continue;
      const Range r = model_.ScoreRange(b, box, b == current_);
      const bool eligible = r.lo > 0 && r.lo >= sel.min_score;
      if (eligible && always_eligible < 0) always_eligible = b;
      const int rb = set_.actions()[b].rank;
      if (rb > rank && eligible) {
        part->reason = "outranked";
        part->by = b;
        *promise = 0;
        return NotFallback(always_eligible, part);
      }
      if (rb == rank) {
        strongest = std::max(strongest, r.lo);
        if (Beats(r.lo, mine.hi)) {
          ++beaten;
          if (beater < 0) beater = b;
        }
      }
    }
    *promise = strongest > 0 ? mine.hi / strongest : mine.hi * 1e9;
    if (mine.hi <= 0) {
      part->reason = "vetoed";
      return NotFallback(always_eligible, part);
    }
    if (mine.hi < sel.min_score) {
      part->reason = "below_min_score";
      return NotFallback(always_eligible, part);
    }
    int needed = 1;
    if (sel.strategy == engine::Strategy::kTopK) needed = sel.top_k;
    if (sel.strategy == engine::Strategy::kSoftmax ||
        sel.strategy == engine::Strategy::kWeightedRandom) {
      needed = std::numeric_limits<int>::max();  // any eligible may be drawn
    }
    if (beaten >= needed) {
      part->reason = needed > 1 ? "not_in_top_k" : "outscored";
      part->by = beater;
      return NotFallback(always_eligible, part);
    }
    return false;
  }

  bool Eligible(double score) const {
    return score > 0 && score >= set_.selection().min_score;
  }

  // The fallback is also chosen when nothing is eligible: it cannot be
  // ruled out unless some rival is eligible throughout.
  bool NotFallback(int always_eligible, Part* part) const {
    if (set_.fallback_action() != a_) return true;
    if (always_eligible < 0) return false;
    if (part->by < 0) part->by = always_eligible;
    return true;
  }

  ReachGoal goal_;
  const Model& model_;
  const engine::CompiledBehaviourSet& set_;
  int a_, current_;
  bool with_target_;
  std::vector<PathCondition> path_;
  std::vector<bool> read_;  // per dimension: a term or a condition reads it
};

// Grid points per dimension for one-factor maxima, besides breakpoints.
constexpr int kGrid = 2048;

}  // namespace

ReachResult Reach(const Model& model, int a, int current, int64_t max_boxes,
                  double min_width, const std::vector<PathCondition>* path,
                  ReachGoal goal) {
  return Search(model, a, current, path, goal).Run(max_boxes, min_width);
}

std::optional<bool> NeverAbove(const Model& model, int a, int b) {
  const engine::CompiledBehaviourSet& set = model.set();
  const bool sum = set.aggregation() == engine::Aggregation::kWeightedSum;
  if (!sum && (set.aggregation() != engine::Aggregation::kProduct ||
               set.compensation() == engine::Compensation::kOnProduct)) {
    return std::nullopt;
  }
  const engine::CompiledAction& A = set.actions()[a];
  const engine::CompiledAction& B = set.actions()[b];
  // The difference (log scores, or scores for the weighted sum) is a sum
  // of one-factor terms plus a constant: its maximum is the sum of their
  // maxima.
  auto exponent = [&](const engine::CompiledAction& x) {
    if (set.compensation() != engine::Compensation::kGeometricMean) return 1.0;
    return double{
        engine::GeometricMeanExponent(static_cast<int>(x.compensated_count))};
  };
  auto total_weight = [&](const engine::CompiledAction& x) {
    double w = 0;
    for (uint32_t k = 0; k < x.consideration_count; ++k) {
      w += set.considerations()[x.first_consideration + k].weight;
    }
    return w;
  };
  const double wa = total_weight(A), wb = total_weight(B);
  if (sum && (wa <= 0 || wb <= 0)) return std::nullopt;  // a constant 1
  if (A.weight <= 0) return true;
  if (B.weight <= 0) return false;
  double total = sum ? 0 : std::log(A.weight) - std::log(B.weight);
  for (size_t d = 0; d < model.dims().size(); ++d) {
    // The terms of A and B on dimension d.
    std::vector<std::pair<int, double>> terms;  // consideration, sign*scale
    auto collect = [&](const engine::CompiledAction& x, double sign) {
      for (uint32_t k = 0; k < x.consideration_count; ++k) {
        const int c = static_cast<int>(x.first_consideration + k);
        if (model.DimOf(c) != static_cast<int>(d)) continue;
        // Weighted sum: the action's weight times the consideration's
        // share of its weights; product: the geometric-mean exponent.
        const double scale = sum ? x.weight * set.considerations()[c].weight /
                                       (&x == &A ? wa : wb)
                                 : exponent(x);
        terms.push_back({c, sign * scale});
      }
    };
    collect(A, 1);
    collect(B, -1);
    if (terms.empty()) continue;
    const Dim& dim = model.dims()[d];
    std::vector<double> points;
    for (int g = 0; g <= kGrid; ++g) {
      points.push_back(dim.lo + (dim.hi - dim.lo) * g / kGrid);
    }
    for (const auto& [c, s] : terms)
      model.Breakpoints(c, dim.lo, dim.hi, &points);
    double best = -std::numeric_limits<double>::infinity();
    for (double x : points) {
      double g = 0;
      bool a_zero = false, b_zero = false;
      for (const auto& [c, s] : terms) {
        const double t = model.Term(c, x);
        if (sum) {
          g += s * t;
        } else if (t <= 0) {
          (s > 0 ? a_zero : b_zero) = true;
        } else {
          g += s * std::log(t);
        }
      }
      if (!sum && a_zero)
        g = -std::numeric_limits<double>::infinity();
      else if (!sum && b_zero)
        g = std::numeric_limits<double>::infinity();
      best = std::max(best, g);
    }
    total += best;
  }
  return total <= 1e-9;
}

}  // namespace utilityd::analysis::internal
