// A straightforward utility-AI scorer, written the way the seed documents
// sketch one: response curves as objects behind a virtual Evaluate, the
// aggregation as a std::function, and an agent as a map from factor name to
// value that every consideration looks its factor up in by name.
//
// It exists to be measured against (bench/engine_bench.cc): it implements
// the same scoring as utilityd::engine for the highest-score strategy
// (bookends, curves, output rescale, weights, product/min/weighted-sum,
// compensation, cooldowns, commitment, vetoes, ranks, ties, fallback), and
// tests/bench/baseline_test.cc checks that both pick the same action with
// the same score (within 1e-5: it calls the C library's maths). It keeps
// its working vectors from call to call instead of allocating per
// candidate; it does not batch, transpose, or vectorise, and it looks
// every factor up by name.
#ifndef UTILITYD_BENCH_BASELINE_ENGINE_H_
#define UTILITYD_BENCH_BASELINE_ENGINE_H_

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "utilityd/engine/definition.h"

namespace utilityd::baseline {

using FactorMap = std::unordered_map<std::string, float>;

struct Target {
  std::string id;
  FactorMap factors;
};

struct Snapshot {
  FactorMap factors;
  std::vector<Target> targets;
  std::string current_action;  // empty: none
  FactorMap seconds_since_action;
};

struct Choice {
  std::string action;  // empty: nothing eligible and no fallback
  std::string target;
  float score = 0;
};

class ResponseCurve {
 public:
  virtual ~ResponseCurve() = default;
  // Maps a normalised input in 0..1 to 0..1.
  virtual float Evaluate(float x) const = 0;
};

class Reasoner {
 public:
  explicit Reasoner(const engine::SetDefinition& set);
  ~Reasoner();
  Choice Decide(const Snapshot& agent) const;

 private:
  struct Consideration;
  struct Action;
  float Score(const Action& action, const Snapshot& agent,
              const Target* target) const;

  std::vector<Action> actions_;
  std::function<float(const std::vector<float>&)> aggregate_;
  engine::Aggregation aggregation_;
  engine::Compensation compensation_;
  float commitment_bonus_ = 0;
  float min_score_ = 0;
  std::string fallback_;
};

}  // namespace utilityd::baseline

#endif  // UTILITYD_BENCH_BASELINE_ENGINE_H_
