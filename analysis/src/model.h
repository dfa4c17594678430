// The analysis' view of a compiled set: the factor box, each
// consideration's exact range over an interval of its factor, each
// candidate's score bounds over a sub-box, and the engine's own decision
// at a point. Internal to the analysis.
#ifndef UTILITYD_ANALYSIS_SRC_MODEL_H_
#define UTILITYD_ANALYSIS_SRC_MODEL_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/decide.h"

namespace utilityd::analysis::internal {

struct Range {
  double lo = 0, hi = 0;
};

// A sub-box: an interval per dimension.
struct Box {
  std::vector<double> lo, hi;
};

// One dimension of the box: an agent factor, or a factor of the one target.
struct Dim {
  std::string name;
  double lo = 0, hi = 1;
  bool target = false;
  int index = 0;  // into the set's factors or target factors
};

// Interior points of raw values [a, b] where `cc`'s curve (its points in
// `points`) turns or jumps: a normal's mean, a sine's peaks and troughs, a
// piecewise curve's points, a step's threshold, the bookends.
void CurveBreakpoints(const engine::CompiledConsideration& cc,
                      absl::Span<const engine::CurvePoint> points, double a,
                      double b, std::vector<double>* out);

// A tree condition on the path to a node (tree_reach.cc): whenever the node
// is ticked, condition node `node` was ticked in the same tick with this
// outcome (`holds`: it succeeded; else it failed).
struct PathCondition {
  int node = -1;
  int dim = 0;  // the agent factor it reads
  const engine::CompiledConsideration* cc = nullptr;
  float threshold = 0.5f;
  absl::Span<const engine::CurvePoint> points;
  bool holds = true;

  // The condition's curve output at a raw value (as the tree's tick).
  float Output(double raw) const;
  // Whether the outcome is `holds` at a raw value.
  bool Met(double raw) const;
  // The lowest and highest curve output over raw values [a, b] (exact:
  // the ends, the breakpoints and the floats beside each).
  Range OutputRange(double a, double b) const;
  // Whether the outcome is `holds` somewhere (`can`) and everywhere
  // (`must`) in [a, b].
  void Over(double a, double b, bool* can, bool* must) const;
};

class Model {
 public:
  explicit Model(const engine::CompiledBehaviourSet& set);

  const engine::CompiledBehaviourSet& set() const { return set_; }
  // Agent factors, then (for sets with per-target actions) target factors.
  const std::vector<Dim>& dims() const { return dims_; }
  // The dimension consideration c reads.
  int DimOf(int c) const;
  // Whether some consideration reads dimension d.
  bool Read(int d) const { return read_[d]; }
  Box FullBox(bool with_target) const;

  // What consideration c gives over raw values [a, b] of its factor: its
  // contribution (product, min; per-consideration compensation included),
  // or its output (weighted sum).
  Range TermRange(int c, double a, double b) const;
  // The same at one raw value.
  double Term(int c, double raw) const;
  // Interior points of [a, b] (raw) where consideration c's curve turns or
  // jumps: a normal's mean, a sine's peaks and troughs, a piecewise
  // curve's points, a step's threshold, the bookends.
  void Breakpoints(int c, double a, double b, std::vector<double>* out) const;
  // Bounds of action a's score over `box` (its one target's factors where
  // per-target), with the commitment bonus when `current`.
  Range ScoreRange(int a, const Box& box, bool current) const;

  // The engine's decision at `point` (dims order; with one target when
  // `with_target`), from state `current` (-1 none). Returns the winning
  // action (-1 none); with `alive` for random strategies, whether action
  // `of` has a probability above 0.
  int Winner(const std::vector<double>& point, bool with_target, int current,
             int of, bool* alive) const;

 private:
  const engine::CompiledBehaviourSet& set_;
  std::vector<Dim> dims_;
  int agent_dims_ = 0;
  std::vector<int> siblings_;  // per consideration: its action's count
  std::vector<bool> read_;     // per dimension
  mutable engine::Decision decision_;
  mutable std::vector<float> factors_, target_factors_;
  mutable std::vector<engine::TargetInput> targets_;
};

}  // namespace utilityd::analysis::internal

#endif  // UTILITYD_ANALYSIS_SRC_MODEL_H_
