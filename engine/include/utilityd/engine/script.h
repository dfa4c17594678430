// Tree scripts: BehaviorTree.CPP 4's scripting language over numbers and
// booleans (docs/TREES.md, "Scripts").
//
//   A := 1; B := A + 2          statements, separated by ';'
//   hp < 30 && !alarmed         an expression: a condition
//
// A name a tree's scripts assign is a tree-local variable, kept in the
// tree state the agent's snapshot carries (the service stays stateless); a
// name they only read is one of the set's factors (read-only, the game's),
// or one of the set's `enums`. Values are numbers; true and false are 1 and
// 0, and a value holds when it is neither 0 nor NaN. Strings are refused.
//
//   ScriptNames names;
//   absl::Status s = ScanScript("A := hp * 2", ScriptUse::kStatements,
//                               &names);   // names.assigned: {"A"}
//   std::string t = RenameScript("hp < 30", [](absl::string_view n) {
//     return n == "hp" ? "health" : std::string(n); });
#ifndef UTILITYD_ENGINE_SCRIPT_H_
#define UTILITYD_ENGINE_SCRIPT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace utilityd::engine {

// The limits a script is held to when the set loads.
inline constexpr size_t kMaxScriptBytes = 1024;
inline constexpr int kMaxScriptDepth = 32;    // nested operators
inline constexpr int kMaxTreeVariables = 64;  // per tree
inline constexpr int kMaxSetEnums = 256;

// What a script may hold: statements (assignments and expressions; the
// `script` leaf, postconditions) or one expression that assigns nothing
// (preconditions, `script_condition`).
enum class ScriptUse { kStatements, kCondition };

// The names a script assigns and reads, each once, in order of appearance
// (a leading '@', BT.CPP's root blackboard, dropped).
struct ScriptNames {
  std::vector<std::string> assigned;
  std::vector<std::string> read;
};

// Checks a script's syntax and limits. The error's message starts with the
// line and column in the script ("1:7: ..."). `names` may be null.
[[nodiscard]] absl::Status ScanScript(absl::string_view text, ScriptUse use,
                                      ScriptNames* names);

// `text` with every name replaced by what `rename` gives for it (a
// subtree's remap); names with a leading '@', true and false are left
// alone.
[[nodiscard]] std::string RenameScript(
    absl::string_view text,
    const std::function<std::string(absl::string_view)>& rename);

// What a name in a script stands for (the compiler's resolver answers it).
struct ScriptRef {
  enum class Kind : uint8_t { kFactor, kVariable, kConstant };
  Kind kind = Kind::kConstant;
  int32_t index = 0;  // factor or variable
  double value = 0;   // constant
};

// One step of a compiled script: a stack machine with no jumps (nothing in
// an expression has an effect, so both sides of `?:` are computed).
struct ScriptOp {
  enum class Code : uint8_t {
    kConstant,
    kFactor,
    kLoad,
    kStore,
    kPop,
    kNeg,
    kNot,
    kBitNot,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kBitAnd,
    kBitOr,
    kBitXor,
    kEq,
    kNe,
    kLt,
    kLe,
    kGt,
    kGe,
    kAnd,
    kOr,
    kSelect,
  };
  Code code = Code::kConstant;
  int32_t index = 0;  // factor, variable
  double value = 0;   // constant
};

struct CompiledScript {
  std::vector<ScriptOp> ops;
  int stack = 0;  // the most values it holds at once
  bool empty() const { return ops.empty(); }
};

// Compiles a script that scans, resolving each name through `resolve`
// (nullopt: unknown, an error naming it at its line and column).
[[nodiscard]] absl::Status CompileScript(
    absl::string_view text, ScriptUse use,
    const std::function<std::optional<ScriptRef>(absl::string_view)>& resolve,
    CompiledScript* out);

// Runs `script` over the agent's factors and the tree's variables (which
// its assignments change); returns the value of its last statement.
double RunScript(const CompiledScript& script, const float* factors,
                 double* variables);

// Whether a script's value holds: neither 0 nor NaN.
inline bool ScriptHolds(double v) { return v == v && v != 0; }

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_SCRIPT_H_
