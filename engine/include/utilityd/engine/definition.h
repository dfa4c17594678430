// Plain C++ definition of a behaviour set: the engine's input before
// compilation. Member initialisers are the documented defaults of the
// behaviour-set format; the file loader applies exactly these when a field is
// absent, so this header is the one place the defaults live.
//
//   utilityd::engine::SetDefinition def;
//   def.name = "guard";
//   def.factors.push_back({.name = "health", .min = 0, .max = 100});
//   utilityd::engine::ActionDefinition heal{.name = "heal"};
//   heal.considerations.push_back({.name = "hurt", .factor = "health",
//                                  .range_min = 100, .range_max = 0});
//   def.actions.push_back(heal);
//   absl::StatusOr<CompiledBehaviourSet> set = Compile(def);
#ifndef UTILITYD_ENGINE_DEFINITION_H_
#define UTILITYD_ENGINE_DEFINITION_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace utilityd::engine {

enum class CurveKind {
  kLinear,
  kPolynomial,
  kInverseQuadratic,
  kExponential,
  kLogistic,
  kLogit,
  kNormal,
  kSine,
  kSmoothstep,
  kStep,
  kPiecewiseLinear,
};

struct CurvePoint {
  double x = 0;
  double y = 0;
};

// A response curve. Only the parameters of `kind` are read.
struct CurveDefinition {
  CurveKind kind = CurveKind::kLinear;
  double slope = 1;                // linear
  double intercept = 0;            // linear
  double exponent = 2;             // polynomial
  double k = 4;                    // exponential
  double steepness = 10;           // logistic, logit
  double midpoint = 0.5;           // logistic, logit
  bool rescale = false;            // logistic
  double mean = 0.5;               // normal
  double stddev = 0.15;            // normal
  double frequency = 0.25;         // sine
  double phase = 0;                // sine
  double threshold = 0.5;          // step
  std::vector<CurvePoint> points;  // piecewise_linear
  bool invert = false;
};

// One parameter of a curve kind: its name in the format (the field of the
// kind's proto message) and the CurveDefinition member that holds it; its
// default is that member's initial value. Exactly one pointer is set.
struct CurveParam {
  const char* name;
  double CurveDefinition::*number = nullptr;
  bool CurveDefinition::*flag = nullptr;
  std::vector<CurvePoint> CurveDefinition::*points = nullptr;
  // A place on the normalised input (a midpoint, a mean, a threshold): the
  // curve editor drags it along the factor's axis.
  bool on_input = false;
};

// Returns the format's name of a curve kind, e.g. "piecewise_linear" (the
// field of utilityd.v1.Curve's `kind` oneof).
[[nodiscard]] const char* CurveKindName(CurveKind kind);

// Returns the kind named `name` in the format, or nullopt.
[[nodiscard]] std::optional<CurveKind> FindCurveKind(absl::string_view name);

// Returns the parameters of `kind`, in the format's order.
[[nodiscard]] absl::Span<const CurveParam> CurveParams(CurveKind kind);

// Returns every curve kind, in the order of the CurveKind enumerators.
[[nodiscard]] absl::Span<const CurveKind> AllCurveKinds();

struct FactorDefinition {
  std::string name;
  double min = 0;
  double max = 1;
  std::string unit;
  std::string description;
};

struct ConsiderationDefinition {
  std::string name;
  std::string factor;
  // Bookends; unset means the factor's declared min (max).
  std::optional<double> range_min;
  std::optional<double> range_max;
  CurveDefinition curve;
  double weight = 1;
  double output_min = 0;
  double output_max = 1;
  bool per_target = false;
  // A yes/no condition (docs/FORMAT.md): 0 vetoes, 1 leaves the score
  // alone; not counted in the compensation's n.
  bool gate = false;
};

// What an action takes while it runs (coordination).
struct ResourceUseDefinition {
  std::string resource;
  int amount = 1;
};

struct ActionDefinition {
  std::string name;
  std::string description;
  double weight = 1;
  int rank = 0;
  double cooldown_seconds = 0;
  std::vector<ConsiderationDefinition> considerations;
  bool per_target = false;
  std::vector<ResourceUseDefinition> uses;
};

// A limited thing the agents of a batch share, in pools (one per target, or
// one per batch). docs/COORDINATION.md.
struct ResourceDefinition {
  std::string name;
  std::string description;
  bool per_target = false;
  int capacity = 1;  // units in a pool the request does not list
  std::optional<double> preemption_margin;  // none: no preemption
};

enum class Aggregation { kProduct, kWeightedSum, kMin };

enum class Compensation {
  kDefault,  // per-consideration for the product, none otherwise
  kNone,
  kPerConsideration,
  kOnProduct,
  kGeometricMean,
};

enum class Strategy { kHighest, kWeightedRandom, kTopK, kSoftmax };

// Returns the format's name of a strategy, e.g. "top_k".
const char* StrategyName(Strategy strategy);

struct SelectionDefinition {
  Strategy strategy = Strategy::kHighest;
  int top_k = 2;
  double temperature = 0.2;
  double commitment_bonus = 0;
  double min_score = 0;
  std::string fallback_action;  // empty: none
};

struct PersonalityDefinition {
  std::string name;
  std::string description;
  // Multipliers on action weights, by action name.
  std::vector<std::pair<std::string, double>> action_weights;
  // Replacement consideration weights, keyed "action.consideration" or by a
  // consideration name (every consideration so named).
  std::vector<std::pair<std::string, double>> consideration_weights;
};

// Behaviour-tree nodes (docs/TREES.md). The names in the format are those of
// NodeKindName: "sequence", "reactive_fallback", "force_success", ...
enum class NodeKind {
  kSequence,
  kFallback,
  kReactiveSequence,
  kReactiveFallback,
  kParallel,
  kInverter,
  kForceSuccess,
  kForceFailure,
  kRepeat,
  kRetry,
  kCooldown,
  kTimeout,
  kCondition,
  kAction,
  kUtility,
  // BehaviorTree.CPP's IfThenElse, WhileDoElse, KeepRunningUntilFailure,
  // Delay and Switch2..Switch6 (docs/TREES.md).
  kIfThenElse,
  kWhileDoElse,
  kKeepRunningUntilFailure,
  kDelay,
  kSwitch,
  // BehaviorTree.CPP's SequenceWithMemory and RunOnce (then_skip false).
  kSequenceWithMemory,
  kRunOnce,
  // BehaviorTree.CPP's AlwaysSuccess, AlwaysFailure and Sleep.
  kAlwaysSuccess,
  kAlwaysFailure,
  kSleep,
  // BehaviorTree.CPP's ParallelAll and TryCatch.
  kParallelAll,
  kTryCatch,
  // BehaviorTree.CPP's Script and ScriptCondition (utilityd/engine/script.h).
  kScript,
  kScriptCondition,
  // BehaviorTree.CPP's LoopInt, LoopDouble and LoopBool over a literal
  // queue: the child once per value, the value in a tree variable.
  kLoop,
};

// Returns the format's name of a node kind, e.g. "reactive_sequence".
[[nodiscard]] const char* NodeKindName(NodeKind kind);

// When a utility node scores its children again.
enum class Rescore {
  kOnEnter,    // once when entered; the chosen child runs to completion
  kEveryTick,  // every tick; a better child aborts the running one
};

// What a failed child of a utility node means.
enum class OnChildFailure {
  kFail,      // the utility node fails
  kNextBest,  // the best remaining child runs, in the same tick
};

// A condition leaf: one consideration's curve output against a threshold.
struct ConditionDefinition {
  std::string factor;
  std::optional<double> range_min;  // unset: the factor's min
  std::optional<double> range_max;  // unset: the factor's max
  CurveDefinition curve;
  double threshold = 0.5;  // succeeds when curve output >= threshold
};

// One node of a behaviour tree. Only the members of `kind` are read.
// A factor compared with a constant, "health < 30": BehaviorTree.CPP's
// script conditions as utilityd reads them (preconditions, import-bt).
struct FactorComparison {
  enum class Op { kLess, kLessEqual, kGreater, kGreaterEqual };
  std::string factor;
  Op op = Op::kLess;
  double value = 0;
};

// Parses "factor OP number" (OP <, <=, > or >=; spaces optional; a leading
// '@' on the factor, BT.CPP's root blackboard, is dropped); nullopt for
// anything else.
[[nodiscard]] std::optional<FactorComparison> ParseFactorComparison(
    absl::string_view text);
// "health < 30".
[[nodiscard]] std::string FactorComparisonText(const FactorComparison& c);
// Whether `v` passes; false for NaN.
[[nodiscard]] bool ComparisonHolds(FactorComparison::Op op, float v,
                                   float value);

// kSkipped: BehaviorTree.CPP 4's SKIPPED, a node passed over (skip_if,
// while, run_once's then_skip); its parent goes on as it says
// (docs/TREES.md, "Skipped").
enum class NodeStatus : uint8_t {
  kIdle,
  kRunning,
  kSuccess,
  kFailure,
  kSkipped
};

struct TreeNodeDefinition {
  NodeKind kind = NodeKind::kSequence;
  std::string name;  // optional label; required for utility children
  // Preconditions (BT.CPP's _failureIf, _successIf): checked when the node
  // is ticked while not running; when one holds, the node answers failure
  // (success) without being ticked. Empty: none.
  std::string failure_if;
  std::string success_if;
  // BT.CPP's _skipIf and _while: skip_if holding, or while not holding,
  // the node answers SKIPPED (a running node is halted when `while` stops
  // holding). Empty: none. All four are script conditions
  // (utilityd/engine/script.h).
  std::string skip_if;
  std::string while_holds;
  // Postconditions, BT.CPP's _onSuccess, _onFailure, _post (after either)
  // and _onHalted: scripts run when the node answers success or failure,
  // or is halted. Empty: none.
  std::string post_success;                  // on_success
  std::string post_failure;                  // on_failure
  std::string post_always;                   // post
  std::string post_halted;                   // on_halted
  std::string code;                          // script, script_condition
  std::vector<TreeNodeDefinition> children;  // composites, decorators (one)
  int success_threshold = -1;     // parallel; negative: from all (-1 = all)
  int failure_threshold = 1;      // parallel
  int max_failures = 1;           // parallel_all; negative: from all
  int times = 1;                  // repeat
  int attempts = 1;               // retry
  double seconds = 0;             // cooldown, timeout, delay, sleep
  bool then_skip = false;         // run_once
  ConditionDefinition condition;  // condition
  std::string action;             // action: one of the set's
  std::string factor;             // switch: the factor it reads
  std::vector<double> cases;      // switch: the values of its children
  // loop: the values, the tree variable each is written to (empty: none),
  // and what it answers with no value left to start (success, failure or
  // skipped)
  std::vector<double> values;
  std::string variable;
  NodeStatus if_empty = NodeStatus::kSuccess;
  Rescore rescore = Rescore::kOnEnter;                // utility
  OnChildFailure on_failure = OnChildFailure::kFail;  // utility
  // A utility node's child that is not an action leaf is scored by these
  // (an action leaf is scored by its action's considerations).
  std::vector<ConsiderationDefinition> considerations;
  double weight = 1;
  int rank = 0;
};

// How many children a node kind takes: none (a leaf), one (its message's
// `child`: a decorator) or at least one (`children`).
enum class NodeArity { kLeaf, kChild, kChildren };

// A node kind's numeric parameter: its name (a field of the kind's proto
// message) and the TreeNodeDefinition member that holds it; its default is
// that member's initial value. Exactly one pointer is set. (Parameters that
// are not numbers, such as a condition's curve, are the loader's own.)
struct NodeParam {
  const char* name;
  int TreeNodeDefinition::*integer = nullptr;
  double TreeNodeDefinition::*number = nullptr;
};

// Returns the kind named `name` in the format, or nullopt.
[[nodiscard]] std::optional<NodeKind> FindNodeKind(absl::string_view name);

// Returns how many children `kind` takes.
[[nodiscard]] NodeArity NodeKindArity(NodeKind kind);

// Returns the numeric parameters of `kind`, in the format's order.
[[nodiscard]] absl::Span<const NodeParam> NodeParams(NodeKind kind);

// Returns every node kind, in the order of the NodeKind enumerators.
[[nodiscard]] absl::Span<const NodeKind> AllNodeKinds();

struct SetDefinition {
  std::string name;
  std::string description;
  std::string version;
  std::string revision;  // content hash, set by whoever loads the set
  std::vector<FactorDefinition> factors;
  std::vector<FactorDefinition> target_factors;
  std::vector<ActionDefinition> actions;
  Aggregation aggregation = Aggregation::kProduct;
  Compensation compensation = Compensation::kDefault;
  SelectionDefinition selection;
  std::vector<PersonalityDefinition> personalities;
  std::vector<ResourceDefinition> resources;
  // A behaviour tree over the actions; none: a flat set (one action per
  // decision).
  std::optional<TreeNodeDefinition> tree;
  // Named whole numbers the tree's scripts read (BT.CPP's scripting
  // enums), in the file's order.
  std::vector<std::pair<std::string, int32_t>> enums;
};

// One problem found in a definition: a field path such as
// "actions[2].considerations[0].factor" and what is wrong with it.
struct ValidationIssue {
  std::string path;
  std::string message;
};

// Returns whether `v` is finite and representable as a float, the type the
// engine computes in. Every number of a definition must be.
inline bool IsFiniteFloat(double v) {
  return std::isfinite(v) && std::abs(v) <= std::numeric_limits<float>::max();
}

// Limits on a set's size. A set beyond them is rejected by validation.
inline constexpr int kMaxFactors = 1024;
inline constexpr int kMaxActions = 4096;
inline constexpr int kMaxConsiderationsPerAction = 64;
inline constexpr int kMaxCurvePoints = 256;
inline constexpr int kMaxPersonalities = 1024;
inline constexpr int kMaxTreeNodes = 1024;
inline constexpr int kMaxTreeDepth = 16;
inline constexpr int kMaxParallelChildren = 32;
inline constexpr int kMaxUtilityChildren = 32;
inline constexpr int kMaxRepeat = 1000;

// The count a parallel threshold `v` stands for among `children`, as in
// BehaviorTree.CPP: a negative value counts back from all of them
// (children + v + 1: -1 = all, -2 = all but one).
constexpr int ParallelThreshold(int v, int children) {
  return v < 0 ? children + v + 1 : v;
}

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_DEFINITION_H_
