// Tree scripts (utilityd/engine/script.h): a tokenizer, a precedence-
// climbing parser that emits the stack machine's steps as it goes, and the
// machine. Binding powers follow BT.CPP 4's parser: ?: < || < && <
// comparisons (chained: a < b < c is a < b && b < c) < | ^ < & < + - <
// * / < unary - ! ~.
#include "utilityd/engine/script.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace utilityd::engine {
namespace {

using Code = ScriptOp::Code;

constexpr int kMaxScriptStack = 64;

enum class Tok : uint8_t {
  kEnd,
  kNumber,
  kName,
  kAssign,
  kAssignOp,
  kQuestion,
  kColon,
  kOrOr,
  kAndAnd,
  kCompare,
  kPipe,
  kCaret,
  kAmp,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kBang,
  kTilde,
  kOpen,
  kClose,
  kSemicolon,
};

struct Token {
  Tok tok = Tok::kEnd;
  size_t at = 0;           // byte offset in the script
  absl::string_view text;  // as written (a name without its '@')
  double number = 0;
  Code code = Code::kAdd;  // a comparison's or compound assignment's op
};

// "line:column" of byte `at` in `text`, both from 1.
std::string Where(absl::string_view text, size_t at) {
  int line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat(line, ":", column);
}

bool NameStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
bool NameChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

class Parser {
 public:
  Parser(
      absl::string_view text, ScriptUse use,
      const std::function<std::optional<ScriptRef>(absl::string_view)>* resolve,
      ScriptNames* names)
      : text_(text), use_(use), resolve_(resolve), names_(names) {}

  absl::Status Run(std::vector<ScriptOp>* ops) {
    if (text_.size() > kMaxScriptBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("1:1: is ", text_.size(), " bytes long; a script may ",
                       "have at most ", kMaxScriptBytes));
    }
    Next();
    int statements = 0;
    while (error_.empty()) {
      while (tok_.tok == Tok::kSemicolon) Next();
      if (tok_.tok == Tok::kEnd) break;
      if (statements > 0 && use_ == ScriptUse::kCondition) {
        Fail(tok_.at, "a condition is one expression: no ';'");
        break;
      }
      if (statements > 0) ops->push_back({.code = Code::kPop});
      Statement(ops);
      ++statements;
      if (error_.empty() && tok_.tok != Tok::kSemicolon &&
          tok_.tok != Tok::kEnd) {
        Fail(tok_.at, absl::StrCat("unexpected '", tok_.text,
                                   "': statements are separated by ';'"));
      }
    }
    if (error_.empty() && statements == 0) Fail(0, "is empty");
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    return absl::OkStatus();
  }

 private:
  void Fail(size_t at, std::string message) {
    if (error_.empty()) error_ = absl::StrCat(Where(text_, at), ": ", message);
  }

  // Reads the next token into tok_.
  void Next() {
    size_t i = pos_;
    while (i < text_.size() && absl::ascii_isspace(text_[i])) ++i;
    tok_ = Token{.at = i};
    if (i >= text_.size()) {
      pos_ = i;
      return;
    }
    const char c = text_[i];
    const char d = i + 1 < text_.size() ? text_[i + 1] : '\0';
    auto op = [&](Tok t, size_t len, Code code = Code::kAdd) {
      tok_.tok = t;
      tok_.text = text_.substr(i, len);
      tok_.code = code;
      pos_ = i + len;
    };
    if (absl::ascii_isdigit(c) || (c == '.' && absl::ascii_isdigit(d))) {
      Number(i);
      return;
    }
    if (NameStart(c) || (c == '@' && NameStart(d))) {
      const size_t start = c == '@' ? i + 1 : i;
      size_t j = start;
      while (j < text_.size() && NameChar(text_[j])) ++j;
      tok_.tok = Tok::kName;
      tok_.text = text_.substr(start, j - start);
      pos_ = j;
      return;
    }
    switch (c) {
      case ':':
        return d == '=' ? op(Tok::kAssign, 2) : op(Tok::kColon, 1);
      case '=':
        return d == '=' ? op(Tok::kCompare, 2, Code::kEq) : op(Tok::kAssign, 1);
      case '!':
        return d == '=' ? op(Tok::kCompare, 2, Code::kNe) : op(Tok::kBang, 1);
      case '<':
        return d == '=' ? op(Tok::kCompare, 2, Code::kLe)
                        : op(Tok::kCompare, 1, Code::kLt);
      case '>':
        return d == '=' ? op(Tok::kCompare, 2, Code::kGe)
                        : op(Tok::kCompare, 1, Code::kGt);
      case '+':
        return d == '=' ? op(Tok::kAssignOp, 2, Code::kAdd) : op(Tok::kPlus, 1);
      case '-':
        return d == '=' ? op(Tok::kAssignOp, 2, Code::kSub)
                        : op(Tok::kMinus, 1);
      case '*':
        return d == '=' ? op(Tok::kAssignOp, 2, Code::kMul) : op(Tok::kStar, 1);
      case '/':
        return d == '=' ? op(Tok::kAssignOp, 2, Code::kDiv)
                        : op(Tok::kSlash, 1);
      case '|':
        return d == '|' ? op(Tok::kOrOr, 2) : op(Tok::kPipe, 1);
      case '&':
        return d == '&' ? op(Tok::kAndAnd, 2) : op(Tok::kAmp, 1);
      case '^':
        return op(Tok::kCaret, 1);
      case '~':
        return op(Tok::kTilde, 1);
      case '?':
        return op(Tok::kQuestion, 1);
      case '(':
        return op(Tok::kOpen, 1);
      case ')':
        return op(Tok::kClose, 1);
      case ';':
        return op(Tok::kSemicolon, 1);
      case '\'':
      case '"':
        Fail(i,
             "strings are not supported: a tree's variables hold numbers and "
             "booleans, a few bytes each in the tree state; name the values "
             "in the set's `enums` instead");
        break;
      case '.':
        if (d == '.') {
          Fail(i, "'..' joins strings, which are not supported");
          break;
        }
        [[fallthrough]];
      default:
        Fail(i, absl::StrCat("unexpected '", text_.substr(i, 1), "'"));
        break;
    }
    tok_.tok = Tok::kEnd;
    pos_ = text_.size();
  }

  void Number(size_t i) {
    size_t j = i;
    double v = 0;
    if (text_[i] == '0' && i + 1 < text_.size() &&
        (text_[i + 1] == 'x' || text_[i + 1] == 'X')) {
      j = i + 2;
      while (j < text_.size() && absl::ascii_isxdigit(text_[j])) ++j;
      const std::string hex(text_.substr(i + 2, j - i - 2));
      v = hex.empty()
              ? 0
              : static_cast<double>(std::strtoull(hex.c_str(), nullptr, 16));
      if (hex.empty()) Fail(i, "'0x' needs hexadecimal digits");
    } else {
      while (j < text_.size() &&
             (absl::ascii_isdigit(text_[j]) || text_[j] == '.')) {
        ++j;
      }
      if (j < text_.size() && (text_[j] == 'e' || text_[j] == 'E')) {
        size_t k = j + 1;
        if (k < text_.size() && (text_[k] == '+' || text_[k] == '-')) ++k;
        if (k < text_.size() && absl::ascii_isdigit(text_[k])) {
          j = k;
          while (j < text_.size() && absl::ascii_isdigit(text_[j])) ++j;
        }
      }
      const std::string s(text_.substr(i, j - i));
      char* end = nullptr;
      v = std::strtod(s.c_str(), &end);
      if (end != s.c_str() + s.size() || !std::isfinite(v)) {
        Fail(i, absl::StrCat("\"", s, "\" is not a number"));
      }
    }
    if (j < text_.size() && NameChar(text_[j])) {
      Fail(i, absl::StrCat("\"", text_.substr(i, j - i + 1),
                           "\" is not a number"));
    }
    tok_ = Token{.tok = Tok::kNumber,
                 .at = i,
                 .text = text_.substr(i, j - i),
                 .number = v};
    pos_ = j;
  }

  // Looks the name up; false (after failing) when it cannot be.
  bool Resolve(const Token& name, bool assigned, ScriptRef* ref) {
    if (names_ != nullptr) {
      std::vector<std::string>& list =
          assigned ? names_->assigned : names_->read;
      const std::string s(name.text);
      bool seen = false;
      for (const std::string& n : list) seen = seen || n == s;
      if (!seen) list.push_back(s);
    }
    if (resolve_ == nullptr) return true;
    const std::optional<ScriptRef> r = (*resolve_)(name.text);
    if (!r) {
      Fail(name.at, absl::StrCat("unknown name \"", name.text,
                                 "\": not a factor of the set, a variable "
                                 "the tree's scripts assign, or an enum"));
      return false;
    }
    if (assigned && r->kind != ScriptRef::Kind::kVariable) {
      Fail(name.at, absl::StrCat("cannot assign \"", name.text, "\": it is ",
                                 r->kind == ScriptRef::Kind::kConstant
                                     ? "an enum"
                                     : "a factor (the game's, read-only)"));
      return false;
    }
    *ref = *r;
    return true;
  }

  void Statement(std::vector<ScriptOp>* ops) {
    if (tok_.tok == Tok::kName && tok_.text != "true" && tok_.text != "false") {
      // An assignment, if a name is followed by one.
      const size_t save = pos_;
      const Token name = tok_;
      Next();
      if (tok_.tok == Tok::kAssign || tok_.tok == Tok::kAssignOp) {
        if (use_ == ScriptUse::kCondition) {
          Fail(tok_.at, "a condition cannot assign");
          return;
        }
        const Token assign = tok_;
        Next();
        ScriptRef ref;
        if (!Resolve(name, true, &ref)) return;
        if (assign.tok == Tok::kAssignOp) {
          ops->push_back({.code = Code::kLoad, .index = ref.index});
        }
        Expr(ops, 0, 0);
        if (assign.tok == Tok::kAssignOp) ops->push_back({.code = assign.code});
        ops->push_back({.code = Code::kStore, .index = ref.index});
        return;
      }
      pos_ = save;  // back to just past the name
      tok_ = name;
    }
    Expr(ops, 0, 0);
    if (tok_.tok == Tok::kAssign || tok_.tok == Tok::kAssignOp) {
      Fail(tok_.at, "only a name can be assigned");
    }
  }

  static int Power(const Token& t) {
    switch (t.tok) {
      case Tok::kQuestion:
        return 4;
      case Tok::kOrOr:
        return 6;
      case Tok::kAndAnd:
        return 8;
      case Tok::kCompare:
        return 10;
      case Tok::kPipe:
      case Tok::kCaret:
        return 12;
      case Tok::kAmp:
        return 14;
      case Tok::kPlus:
      case Tok::kMinus:
        return 16;
      case Tok::kStar:
      case Tok::kSlash:
        return 18;
      default:
        return -1;
    }
  }

  static Code Binary(Tok t) {
    switch (t) {
      case Tok::kOrOr:
        return Code::kOr;
      case Tok::kAndAnd:
        return Code::kAnd;
      case Tok::kPipe:
        return Code::kBitOr;
      case Tok::kCaret:
        return Code::kBitXor;
      case Tok::kAmp:
        return Code::kBitAnd;
      case Tok::kPlus:
        return Code::kAdd;
      case Tok::kMinus:
        return Code::kSub;
      case Tok::kStar:
        return Code::kMul;
      default:
        return Code::kDiv;
    }
  }

  // An expression whose operators bind at least `min`.
  void Expr(std::vector<ScriptOp>* ops, int min, int depth) {
    if (depth > kMaxScriptDepth) {
      Fail(tok_.at,
           absl::StrCat("nests deeper than ", kMaxScriptDepth, " operators"));
      return;
    }
    std::vector<ScriptOp> left;
    Prefix(&left, depth);
    while (error_.empty()) {
      const int power = Power(tok_);
      if (power < 0 || power < min) break;
      const Token op = tok_;
      Next();
      if (op.tok == Tok::kQuestion) {  // right-associative
        Expr(&left, 0, depth + 1);
        if (tok_.tok != Tok::kColon) {
          Fail(tok_.at, "expected ':' in a ?: expression");
          return;
        }
        Next();
        Expr(&left, power, depth + 1);
        left.push_back({.code = Code::kSelect});
        continue;
      }
      std::vector<ScriptOp> right;
      Expr(&right, power + 1, depth + 1);
      left.insert(left.end(), right.begin(), right.end());
      left.push_back(
          {.code = op.tok == Tok::kCompare ? op.code : Binary(op.tok)});
      // a < b < c is a < b && b < c (b computed twice: it has no effect).
      while (op.tok == Tok::kCompare && tok_.tok == Tok::kCompare &&
             error_.empty()) {
        const Token next = tok_;
        Next();
        std::vector<ScriptOp> third;
        Expr(&third, power + 1, depth + 1);
        left.insert(left.end(), right.begin(), right.end());
        left.insert(left.end(), third.begin(), third.end());
        left.push_back({.code = next.code});
        left.push_back({.code = Code::kAnd});
        right = std::move(third);
      }
    }
    ops->insert(ops->end(), left.begin(), left.end());
  }

  void Prefix(std::vector<ScriptOp>* ops, int depth) {
    const Token t = tok_;
    switch (t.tok) {
      case Tok::kMinus:
      case Tok::kBang:
      case Tok::kTilde:
        Next();
        Expr(ops, 20, depth + 1);
        ops->push_back({.code = t.tok == Tok::kMinus  ? Code::kNeg
                                : t.tok == Tok::kBang ? Code::kNot
                                                      : Code::kBitNot});
        return;
      case Tok::kOpen:
        Next();
        Expr(ops, 0, depth + 1);
        if (tok_.tok != Tok::kClose) {
          Fail(tok_.at, "expected ')'");
          return;
        }
        Next();
        return;
      case Tok::kNumber:
        Next();
        ops->push_back({.code = Code::kConstant, .value = t.number});
        return;
      case Tok::kName: {
        Next();
        if (t.text == "true" || t.text == "false") {
          ops->push_back(
              {.code = Code::kConstant, .value = t.text == "true" ? 1.0 : 0.0});
          return;
        }
        ScriptRef ref;
        if (!Resolve(t, false, &ref)) return;
        switch (ref.kind) {
          case ScriptRef::Kind::kFactor:
            ops->push_back({.code = Code::kFactor, .index = ref.index});
            break;
          case ScriptRef::Kind::kVariable:
            ops->push_back({.code = Code::kLoad, .index = ref.index});
            break;
          case ScriptRef::Kind::kConstant:
            ops->push_back({.code = Code::kConstant, .value = ref.value});
            break;
        }
        return;
      }
      case Tok::kEnd:
        Fail(t.at, "expected a value, got the end of the script");
        return;
      default:
        Fail(t.at, absl::StrCat("expected a value, got '", t.text, "'"));
        Next();
        return;
    }
  }

  absl::string_view text_;
  ScriptUse use_;
  const std::function<std::optional<ScriptRef>(absl::string_view)>* resolve_;
  ScriptNames* names_;
  size_t pos_ = 0;
  Token tok_;
  std::string error_;
};

// The most values `ops` holds at once.
int StackDepth(const std::vector<ScriptOp>& ops) {
  int depth = 0, most = 0;
  for (const ScriptOp& op : ops) {
    switch (op.code) {
      case Code::kConstant:
      case Code::kFactor:
      case Code::kLoad:
        ++depth;
        break;
      case Code::kStore:
      case Code::kNeg:
      case Code::kNot:
      case Code::kBitNot:
        break;
      case Code::kSelect:
        depth -= 2;
        break;
      default:  // binary operators, pop
        --depth;
        break;
    }
    most = std::max(most, depth);
  }
  return most;
}

int64_t AsInteger(double v) {
  return std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<int64_t>(v)
                                                   : 0;
}

}  // namespace

absl::Status ScanScript(absl::string_view text, ScriptUse use,
                        ScriptNames* names) {
  std::vector<ScriptOp> ops;
  return Parser(text, use, nullptr, names).Run(&ops);
}

std::string RenameScript(
    absl::string_view text,
    const std::function<std::string(absl::string_view)>& rename) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '@' || NameStart(c)) {
      size_t j = i + 1;
      while (j < text.size() && NameChar(text[j])) ++j;
      const absl::string_view name = text.substr(i, j - i);
      if (c == '@' || name == "true" || name == "false") {
        out.append(name.data(), name.size());
      } else {
        out += rename(name);
      }
      i = j;
    } else if (absl::ascii_isdigit(c)) {
      // A number, hexadecimal or with an exponent: its letters are no name.
      size_t j = i + 1;
      while (j < text.size() && (NameChar(text[j]) || text[j] == '.')) ++j;
      out.append(text.data() + i, j - i);
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

absl::Status CompileScript(
    absl::string_view text, ScriptUse use,
    const std::function<std::optional<ScriptRef>(absl::string_view)>& resolve,
    CompiledScript* out) {
  out->ops.clear();
  const absl::Status s = Parser(text, use, &resolve, nullptr).Run(&out->ops);
  if (!s.ok()) {
    out->ops.clear();
    return s;
  }
  out->stack = StackDepth(out->ops);
  if (out->stack > kMaxScriptStack) {
    out->ops.clear();
    return absl::InvalidArgumentError(
        absl::StrCat("1:1: needs ", out->stack,
                     " values at once; a script may "
                     "hold at most ",
                     kMaxScriptStack));
  }
  return absl::OkStatus();
}

double RunScript(const CompiledScript& script, const float* factors,
                 double* variables) {
  // A script needing more never compiles.
  double stack[kMaxScriptStack];
  int top = -1;
  for (const ScriptOp& op : script.ops) {
    switch (op.code) {
      case Code::kConstant:
        stack[++top] = op.value;
        break;
      case Code::kFactor:
        stack[++top] = factors[op.index];
        break;
      case Code::kLoad:
        stack[++top] = variables[op.index];
        break;
      case Code::kStore:
        variables[op.index] = stack[top];
        break;
      case Code::kPop:
        --top;
        break;
      case Code::kNeg:
        stack[top] = -stack[top];
        break;
      case Code::kNot:
        stack[top] = ScriptHolds(stack[top]) ? 0.0 : 1.0;
        break;
      case Code::kBitNot:
        stack[top] = static_cast<double>(~AsInteger(stack[top]));
        break;
      case Code::kSelect:
        top -= 2;
        stack[top] = ScriptHolds(stack[top]) ? stack[top + 1] : stack[top + 2];
        break;
      default: {
        const double b = stack[top--];
        double& a = stack[top];
        switch (op.code) {
          case Code::kAdd:
            a = a + b;
            break;
          case Code::kSub:
            a = a - b;
            break;
          case Code::kMul:
            a = a * b;
            break;
          case Code::kDiv:
            a = a / b;
            break;
          case Code::kBitAnd:
            a = static_cast<double>(AsInteger(a) & AsInteger(b));
            break;
          case Code::kBitOr:
            a = static_cast<double>(AsInteger(a) | AsInteger(b));
            break;
          case Code::kBitXor:
            a = static_cast<double>(AsInteger(a) ^ AsInteger(b));
            break;
          case Code::kEq:
            a = a == b ? 1.0 : 0.0;
            break;
          case Code::kNe:
            a = a != b ? 1.0 : 0.0;
            break;
          case Code::kLt:
            a = a < b ? 1.0 : 0.0;
            break;
          case Code::kLe:
            a = a <= b ? 1.0 : 0.0;
            break;
          case Code::kGt:
            a = a > b ? 1.0 : 0.0;
            break;
          case Code::kGe:
            a = a >= b ? 1.0 : 0.0;
            break;
          case Code::kAnd:
            a = ScriptHolds(a) && ScriptHolds(b) ? 1.0 : 0.0;
            break;
          case Code::kOr:
            a = ScriptHolds(a) || ScriptHolds(b) ? 1.0 : 0.0;
            break;
          default:
            break;
        }
        break;
      }
    }
  }
  return top >= 0 ? stack[top] : 0.0;
}

}  // namespace utilityd::engine
