// The vocabulary the BehaviorTree.CPP import and export share (bt_names.h).
#include "ctl/bt_names.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace utilityd::ctl {

using engine::FactorComparison;
// BT.CPP's built-ins without a counterpart, each with why.
const std::map<std::string, std::string>& Unsupported() {
  static const auto* m = new std::map<std::string, std::string>{
      {"UnsetBlackboard", "utilityd's factors come from the game, read-only"},
      {"ManualSelector", "needs a person at a terminal"},
      {"LoopString",
       "its values are strings: a tree's variables hold numbers and "
       "booleans"},
      {"SkipUnlessUpdated", "reacts to blackboard writes; factors are not"},
      {"WaitValueUpdate", "reacts to blackboard writes; factors are not"},
      {"WasEntryUpdated", "reacts to blackboard writes; factors are not"},
      {"EntryUpdatedAction", "reacts to blackboard writes; factors are not"},
      {"EntryUpdatedDecorator", "reacts to blackboard writes; factors are not"},
      {"ReactiveRepeat", "not a utilityd node kind"},
      {"ConsumeQueue", "loops over blackboard queues, which factors are not"},
  };
  return *m;
}

const std::map<std::string, std::string>& ChildrenKinds() {
  static const auto* m = new std::map<std::string, std::string>{
      {"Sequence", "sequence"},
      {"Fallback", "fallback"},
      {"ReactiveSequence", "reactive_sequence"},
      {"ReactiveFallback", "reactive_fallback"},
      {"SequenceWithMemory", "sequence_with_memory"},
      {"IfThenElse", "if_then_else"},
      {"WhileDoElse", "while_do_else"},
      {"TryCatch", "try_catch"},
  };
  return *m;
}

const std::map<std::string, std::string>& LeafKinds() {
  static const auto* m = new std::map<std::string, std::string>{
      {"AlwaysSuccess", "always_success"},
      {"AlwaysFailure", "always_failure"},
  };
  return *m;
}

const std::map<std::string, std::string>& ChildKinds() {
  static const auto* m = new std::map<std::string, std::string>{
      {"Inverter", "inverter"},
      {"ForceSuccess", "force_success"},
      {"ForceFailure", "force_failure"},
      {"KeepRunningUntilFailure", "keep_running_until_failure"},
  };
  return *m;
}

const std::array<ScriptAttr, 8>& ScriptAttrs() {
  using T = v1::TreeNode;
  using engine::ScriptUse;
  static const std::array<ScriptAttr, 8> kAttrs = {{
      {"_failureIf", &T::mutable_failure_if, &T::failure_if,
       ScriptUse::kCondition},
      {"_successIf", &T::mutable_success_if, &T::success_if,
       ScriptUse::kCondition},
      {"_skipIf", &T::mutable_skip_if, &T::skip_if, ScriptUse::kCondition},
      {"_while", &T::mutable_while_, &T::while_, ScriptUse::kCondition},
      {"_onSuccess", &T::mutable_on_success, &T::on_success,
       ScriptUse::kStatements},
      {"_onFailure", &T::mutable_on_failure, &T::on_failure,
       ScriptUse::kStatements},
      {"_post", &T::mutable_post, &T::post, ScriptUse::kStatements},
      {"_onHalted", &T::mutable_on_halted, &T::on_halted,
       ScriptUse::kStatements},
  }};
  return kAttrs;
}

// "{key}" -> "key" ("{@key}", BT.CPP's root blackboard, too); nullopt for
// a literal.
std::optional<std::string> BlackboardKey(absl::string_view v) {
  v = absl::StripAsciiWhitespace(v);
  if (v.size() < 3 || v.front() != '{' || v.back() != '}') return std::nullopt;
  v = v.substr(1, v.size() - 2);
  absl::ConsumePrefix(&v, "@");
  return std::string(v);
}

using Op = engine::FactorComparison::Op;

// The condition node for a comparison: bookends 1 either side of the
// constant (reversed for <= and >), a step at the middle, inverted for the
// strict ones; exact wherever `factor - constant` is (docs/TREES.md).
void SetComparison(const FactorComparison& c, v1::ConditionNode* n) {
  const bool down = c.op == Op::kLessEqual || c.op == Op::kGreater;
  n->set_factor(c.factor);
  n->mutable_range()->set_min(down ? c.value + 1 : c.value - 1);
  n->mutable_range()->set_max(down ? c.value - 1 : c.value + 1);
  n->mutable_curve()->mutable_step()->set_threshold(0.5);
  if (c.op == Op::kLess || c.op == Op::kGreater) {
    n->mutable_curve()->set_invert(true);
  }
}

// The comparison a condition node stands for, when it is one that
// SetComparison writes.
std::optional<FactorComparison> AsComparison(const v1::ConditionNode& n) {
  if (!n.range().has_min() || !n.range().has_max() || n.has_threshold() ||
      !n.curve().has_step() || n.curve().step().threshold() != 0.5 ||
      std::abs(n.range().max() - n.range().min()) != 2) {
    return std::nullopt;
  }
  const bool down = n.range().min() > n.range().max();
  const bool invert = n.curve().invert();
  FactorComparison c{.factor = n.factor(),
                     .op = down ? (invert ? Op::kGreater : Op::kLessEqual)
                                : (invert ? Op::kLess : Op::kGreaterEqual),
                     .value = (n.range().min() + n.range().max()) / 2};
  v1::ConditionNode again;
  SetComparison(c, &again);
  if (again.SerializeAsString() != n.SerializeAsString()) return std::nullopt;
  return c;
}
// A subtree port's literal as a script reads it: a number (negative ones
// in parentheses, so the text can stand where the name stood), true, false
// or an identifier (an enum's name); nullopt for anything else (strings).
std::optional<std::string> Literal(absl::string_view raw) {
  const absl::string_view v = absl::StripAsciiWhitespace(raw);
  double number = 0;
  if (absl::SimpleAtod(v, &number) && std::isfinite(number) &&
      v.find_first_of("xXnN") == absl::string_view::npos) {
    const std::string text(v);
    return number < 0 ? absl::StrCat("(", text, ")") : text;
  }
  if (v == "true" || v == "false") return std::string(v);
  const bool name = !v.empty() && absl::ascii_isalpha(v[0]) &&
                    std::all_of(v.begin(), v.end(), [](char c) {
                      return absl::ascii_isalnum(c) || c == '_';
                    });
  if (name) return std::string(v);
  return std::nullopt;
}

// utilityd's names are identifiers (a letter, then letters, digits, '_'
// or '-'); BehaviorTree.CPP's may hold spaces, dots and any letter. `raw`
// made one: each run of other characters becomes one '_', and a name that
// does not start with a letter gets an 'n' in front ("Main Tree" ->
// Main_Tree, "检查门" -> n_).
std::string AsIdentifier(absl::string_view raw) {
  std::string out;
  bool gap = false;
  for (const char c : raw) {
    if (absl::ascii_isalnum(c) || c == '_' || c == '-') {
      if (gap) out += '_';
      gap = false;
      out += c;
    } else {
      gap = true;
    }
  }
  if (gap) out += '_';
  if (out.empty() || !absl::ascii_isalpha(out[0])) out = "n" + out;
  return out.substr(0, 128);
}

// The IDs (of `ids`, one for each of `trees`) that no other tree names
// in a <SubTree ID>, in their order.
std::vector<std::string> TopTrees(
    const std::vector<const tinyxml2::XMLElement*>& trees,
    const std::vector<std::string>& ids) {
  std::set<std::string> used;
  for (size_t i = 0; i < trees.size(); ++i) {
    std::vector<const tinyxml2::XMLElement*> todo = {trees[i]};
    while (!todo.empty()) {
      const tinyxml2::XMLElement* e = todo.back();
      todo.pop_back();
      const char* id = e->Attribute("ID");
      if (e != trees[i] && std::string_view(e->Name()) == "SubTree" &&
          id != nullptr && AsIdentifier(id) != ids[i]) {
        used.insert(AsIdentifier(id));
      }
      for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c != nullptr;
           c = c->NextSiblingElement()) {
        todo.push_back(c);
      }
    }
  }
  std::vector<std::string> unused;
  for (const std::string& id : ids) {
    if (!used.contains(id)) unused.push_back(id);
  }
  return unused;
}

std::optional<v1::NodeStatus> AnsweredStatus(absl::string_view name) {
  if (name == "SUCCESS") return v1::NODE_STATUS_SUCCESS;
  if (name == "FAILURE") return v1::NODE_STATUS_FAILURE;
  if (name == "SKIPPED") return v1::NODE_STATUS_SKIPPED;
  return std::nullopt;
}

const char* AnsweredStatusName(v1::NodeStatus status) {
  return status == v1::NODE_STATUS_FAILURE   ? "FAILURE"
         : status == v1::NODE_STATUS_SKIPPED ? "SKIPPED"
                                             : "SUCCESS";
}

std::optional<std::string> LoopValues(absl::string_view id,
                                      absl::string_view queue,
                                      std::vector<double>* values) {
  for (absl::string_view part : absl::StrSplit(queue, ';', absl::SkipEmpty())) {
    const absl::string_view v = absl::StripAsciiWhitespace(part);
    double number = 0;
    bool ok = false;
    if (id == "LoopInt") {
      int integer = 0;
      ok = absl::SimpleAtoi(v, &integer);
      number = integer;
    } else if (id == "LoopBool") {
      bool b = false;
      ok = absl::SimpleAtob(v, &b);
      number = b ? 1 : 0;
    } else {
      ok = absl::SimpleAtod(v, &number);
    }
    if (!ok) {
      return absl::StrCat("\"", v, "\" is not ",
                          id == "LoopInt"    ? "an integer"
                          : id == "LoopBool" ? "true or false"
                                             : "a number");
    }
    values->push_back(number);
  }
  return std::nullopt;
}

}  // namespace utilityd::ctl
