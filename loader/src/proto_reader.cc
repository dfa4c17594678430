#include "utilityd/loader/proto_reader.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "utilityd/engine/compiled_set.h"

namespace utilityd::loader {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

class Reader {
 public:
  Reader(absl::string_view source, const ReadLimits& limits,
         std::vector<ReadIssue>* issues, PositionMap* positions)
      : source_(source),
        limits_(limits),
        issues_(issues),
        positions_(positions) {}

  bool failed() const { return failed_; }

  void Fail(const YAML::Node& at, const std::string& path,
            std::string message) {
    ReadIssue issue{
        .source = source_, .path = path, .message = std::move(message)};
    if (at.IsDefined()) {
      issue.line = at.Mark().line + 1;
      issue.column = at.Mark().column + 1;
    }
    issues_->push_back(std::move(issue));
    failed_ = true;
  }

  // Counts a visited node; false once the document is over its budget.
  bool Visit(const YAML::Node& node, const std::string& path, int depth) {
    if (aborted_) return false;
    if (positions_ != nullptr && !path.empty()) {
      (*positions_)[path] = {node.Mark().line + 1, node.Mark().column + 1};
    }
    if (++nodes_ > limits_.max_nodes) {
      Fail(node, path,
           absl::StrCat("document has more than ", limits_.max_nodes,
                        " nodes after alias expansion; refusing to read on"));
      aborted_ = true;
      return false;
    }
    if (depth > limits_.max_depth) {
      Fail(node, path,
           absl::StrCat("nesting deeper than ", limits_.max_depth, " levels"));
      aborted_ = true;
      return false;
    }
    return true;
  }

  void ReadMessage(const YAML::Node& node, Message* msg,
                   const std::string& path, int depth) {
    if (!Visit(node, path, depth)) return;
    if (node.IsNull()) return;
    if (!node.IsMap()) {
      Fail(node, path,
           absl::StrCat("expected a mapping (", msg->GetDescriptor()->name(),
                        "), got ", Describe(node)));
      return;
    }
    const Descriptor* d = msg->GetDescriptor();
    absl::flat_hash_set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        Fail(kv.first, path, "keys must be plain names");
        continue;
      }
      const std::string& key = kv.first.Scalar();
      const FieldDescriptor* f = d->FindFieldByName(key);
      for (int i = 0; f == nullptr && i < d->field_count(); ++i) {
        if (d->field(i)->json_name() == key) f = d->field(i);
      }
      const std::string fpath = path.empty() ? key : path + "." + key;
      if (f == nullptr) {
        std::vector<std::string> names;
        for (int i = 0; i < d->field_count(); ++i) {
          names.push_back(d->field(i)->name());
        }
        Fail(kv.first, fpath, engine::UnknownNameMessage("field", key, names));
        continue;
      }
      const std::string canonical_path =
          path.empty() ? f->name() : path + "." + f->name();
      if (!seen.insert(f->name()).second) {
        Fail(kv.first, canonical_path, "given twice");
        continue;
      }
      if (positions_ != nullptr) {
        (*positions_)[canonical_path] = {kv.first.Mark().line + 1,
                                         kv.first.Mark().column + 1};
      }
      if (kv.second.IsNull()) continue;  // null means unset
      if (const auto* oneof = f->containing_oneof()) {
        const Reflection* r = msg->GetReflection();
        if (const FieldDescriptor* other =
                r->GetOneofFieldDescriptor(*msg, oneof);
            other != nullptr) {
          Fail(
              kv.first, canonical_path,
              absl::StrCat("only one of ", oneof->name(), " may be set, and \"",
                           other->name(), "\" already is"));
          continue;
        }
      }
      ReadField(kv.second, msg, f, canonical_path, depth + 1);
    }
  }

 private:
  static std::string Describe(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Scalar:
        return absl::StrCat("\"", node.Scalar(), "\"");
      default:
        return "nothing";
    }
  }

  void ReadField(const YAML::Node& node, Message* msg, const FieldDescriptor* f,
                 const std::string& path, int depth) {
    if (f->is_map()) {
      ReadMap(node, msg, f, path, depth);
    } else if (f->is_repeated()) {
      if (!node.IsSequence()) {
        Fail(node, path, absl::StrCat("expected a list, got ", Describe(node)));
        return;
      }
      size_t i = 0;
      for (const auto& item : node) {
        const std::string ipath = absl::StrCat(path, "[", i++, "]");
        if (!Visit(item, ipath, depth)) return;
        SetValue(item, msg, f, ipath, depth);
      }
    } else {
      SetValue(node, msg, f, path, depth);
    }
  }

  void ReadMap(const YAML::Node& node, Message* msg, const FieldDescriptor* f,
               const std::string& path, int depth) {
    if (!node.IsMap()) {
      Fail(node, path,
           absl::StrCat("expected a mapping, got ", Describe(node)));
      return;
    }
    const Reflection* r = msg->GetReflection();
    const FieldDescriptor* key_field = f->message_type()->map_key();
    const FieldDescriptor* value_field = f->message_type()->map_value();
    absl::flat_hash_set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        Fail(kv.first, path, "map keys must be plain strings");
        continue;
      }
      const std::string& key = kv.first.Scalar();
      const std::string kpath = absl::StrCat(path, "[\"", key, "\"]");
      if (!Visit(kv.second, kpath, depth)) return;
      if (!seen.insert(key).second) {
        Fail(kv.first, kpath, "duplicate key");
        continue;
      }
      Message* entry = r->AddMessage(msg, f);
      SetValue(kv.first, entry, key_field, kpath, depth);
      SetValue(kv.second, entry, value_field, kpath, depth);
    }
  }

  // Parses a scalar number. Accepts protobuf JSON's "NaN", "Infinity" and
  // "-Infinity" and YAML's .nan, .inf and -.inf.
  bool ParseDouble(const YAML::Node& node, const std::string& path,
                   double* out) {
    if (!node.IsScalar()) {
      Fail(node, path, absl::StrCat("expected a number, got ", Describe(node)));
      return false;
    }
    const std::string s = absl::AsciiStrToLower(node.Scalar());
    if (s == "nan" || s == ".nan") {
      *out = std::numeric_limits<double>::quiet_NaN();
    } else if (s == "infinity" || s == ".inf" || s == "+.inf") {
      *out = std::numeric_limits<double>::infinity();
    } else if (s == "-infinity" || s == "-.inf") {
      *out = -std::numeric_limits<double>::infinity();
    } else if (!absl::SimpleAtod(s, out) || s.find_first_of("xX") != s.npos) {
      Fail(node, path,
           absl::StrCat("expected a number, got \"", node.Scalar(), "\""));
      return false;
    }
    return true;
  }

  template <typename Int>
  bool ParseInt(const YAML::Node& node, const std::string& path, Int* out) {
    double d = 0;
    if (!ParseDouble(node, path, &d)) return false;
    if (!std::isfinite(d) || d != std::floor(d) ||
        d < static_cast<double>(std::numeric_limits<Int>::min()) ||
        d > static_cast<double>(std::numeric_limits<Int>::max())) {
      Fail(node, path,
           absl::StrCat("expected a whole number in range, got \"",
                        node.Scalar(), "\""));
      return false;
    }
    // Exact parse for values beyond double precision.
    if (!absl::SimpleAtoi(node.Scalar(), out)) *out = static_cast<Int>(d);
    return true;
  }

  void SetValue(const YAML::Node& node, Message* msg, const FieldDescriptor* f,
                const std::string& path, int depth) {
    const Reflection* r = msg->GetReflection();
    const bool rep = f->is_repeated();
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      Message* sub = rep ? r->AddMessage(msg, f) : r->MutableMessage(msg, f);
      if (node.IsScalar() && ReadWellKnown(node, sub, path)) return;
      ReadMessage(node, sub, path, depth + 1);
      return;
    }
    if (!node.IsScalar()) {
      Fail(node, path,
           absl::StrCat("expected a single value, got ", Describe(node)));
      return;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT: {
        double v = 0;
        if (!ParseDouble(node, path, &v)) return;
        if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
          rep ? r->AddDouble(msg, f, v) : r->SetDouble(msg, f, v);
        } else {
          const float fv = static_cast<float>(v);
          rep ? r->AddFloat(msg, f, fv) : r->SetFloat(msg, f, fv);
        }
        return;
      }
      case FieldDescriptor::CPPTYPE_INT32: {
        int32_t v = 0;
        if (!ParseInt(node, path, &v)) return;
        rep ? r->AddInt32(msg, f, v) : r->SetInt32(msg, f, v);
        return;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        int64_t v = 0;
        if (!ParseInt(node, path, &v)) return;
        rep ? r->AddInt64(msg, f, v) : r->SetInt64(msg, f, v);
        return;
      }
      case FieldDescriptor::CPPTYPE_UINT32: {
        uint32_t v = 0;
        if (!ParseInt(node, path, &v)) return;
        rep ? r->AddUInt32(msg, f, v) : r->SetUInt32(msg, f, v);
        return;
      }
      case FieldDescriptor::CPPTYPE_UINT64: {
        uint64_t v = 0;
        if (!ParseInt(node, path, &v)) return;
        rep ? r->AddUInt64(msg, f, v) : r->SetUInt64(msg, f, v);
        return;
      }
      case FieldDescriptor::CPPTYPE_BOOL: {
        const std::string s = absl::AsciiStrToLower(node.Scalar());
        bool v;
        if (s == "true" || s == "yes" || s == "on") {
          v = true;
        } else if (s == "false" || s == "no" || s == "off") {
          v = false;
        } else {
          Fail(node, path,
               absl::StrCat("expected true or false, got \"", node.Scalar(),
                            "\""));
          return;
        }
        rep ? r->AddBool(msg, f, v) : r->SetBool(msg, f, v);
        return;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        const std::string& v = node.Scalar();
        if (f->type() == FieldDescriptor::TYPE_BYTES) {
          // The JSON mapping writes bytes as base64, standard or URL-safe.
          std::string bytes;
          if (!absl::Base64Unescape(v, &bytes) &&
              !absl::WebSafeBase64Unescape(v, &bytes)) {
            Fail(node, path, "is not base64 (bytes are written in base64)");
            return;
          }
          rep ? r->AddString(msg, f, bytes) : r->SetString(msg, f, bytes);
          return;
        }
        if (!IsValidUtf8(v)) {
          Fail(node, path, "is not valid UTF-8");
          return;
        }
        rep ? r->AddString(msg, f, v) : r->SetString(msg, f, v);
        return;
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const EnumValueDescriptor* v = ParseEnum(node, f->enum_type(), path);
        if (v == nullptr) return;
        rep ? r->AddEnum(msg, f, v) : r->SetEnum(msg, f, v);
        return;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return;  // handled above
    }
  }

  // Reads the JSON string forms of google.protobuf.Timestamp (RFC 3339,
  // "2026-11-30T06:35:41.5Z") and Duration ("1.5s"). Returns false when
  // `msg` is not one of them (it is then read as a mapping).
  bool ReadWellKnown(const YAML::Node& node, Message* msg,
                     const std::string& path) {
    const std::string& type = msg->GetDescriptor()->full_name();
    const bool timestamp = type == "google.protobuf.Timestamp";
    if (!timestamp && type != "google.protobuf.Duration") return false;
    const Descriptor* d = msg->GetDescriptor();
    const Reflection* r = msg->GetReflection();
    int64_t seconds = 0;
    int32_t nanos = 0;
    if (timestamp) {
      absl::Time t;
      std::string error;
      if (!absl::ParseTime(absl::RFC3339_full, node.Scalar(), &t, &error)) {
        Fail(node, path,
             absl::StrCat("expected an RFC 3339 time, got \"", node.Scalar(),
                          "\""));
        return true;
      }
      const absl::Duration since = t - absl::UnixEpoch();
      seconds = absl::ToInt64Seconds(since);
      nanos = static_cast<int32_t>(
          absl::ToInt64Nanoseconds(since - absl::Seconds(seconds)));
      if (nanos < 0) {
        --seconds;
        nanos += 1000000000;
      }
    } else {
      absl::Duration dur;
      const std::string& text = node.Scalar();
      if (!absl::EndsWith(text, "s") || !absl::ParseDuration(text, &dur)) {
        Fail(node, path,
             absl::StrCat("expected a duration such as \"1.5s\", "
                          "got \"",
                          text, "\""));
        return true;
      }
      seconds = absl::ToInt64Seconds(dur);
      nanos = static_cast<int32_t>(
          absl::ToInt64Nanoseconds(dur - absl::Seconds(seconds)));
    }
    r->SetInt64(msg, d->FindFieldByName("seconds"), seconds);
    r->SetInt32(msg, d->FindFieldByName("nanos"), nanos);
    return true;
  }

  const EnumValueDescriptor* ParseEnum(const YAML::Node& node,
                                       const EnumDescriptor* e,
                                       const std::string& path) {
    const std::string& s = node.Scalar();
    if (const EnumValueDescriptor* v = e->FindValueByName(s)) return v;
    const std::string upper = EnumPrefix(e) + absl::AsciiStrToUpper(s);
    if (const EnumValueDescriptor* v = e->FindValueByName(upper)) return v;
    int number = 0;
    if (absl::SimpleAtoi(s, &number)) {
      if (const EnumValueDescriptor* v = e->FindValueByNumber(number)) return v;
    }
    std::vector<std::string> names;
    for (int i = 0; i < e->value_count(); ++i) {
      if (e->value(i)->number() == 0 &&
          absl::EndsWith(e->value(i)->name(), "_UNSPECIFIED")) {
        continue;
      }
      names.push_back(ShortEnumName(e->value(i)));
    }
    std::string message = absl::StrCat("unknown value \"", s, "\"");
    const std::string hint =
        engine::SuggestName(absl::AsciiStrToLower(s), names);
    if (!hint.empty())
      absl::StrAppend(&message, " (did you mean \"", hint, "\"?)");
    absl::StrAppend(&message,
                    "; expected one of: ", absl::StrJoin(names, ", "));
    Fail(node, path, std::move(message));
    return nullptr;
  }

  static bool IsValidUtf8(absl::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      int extra = 0;
      uint32_t cp = 0;
      if (c < 0x80) {
        ++i;
        continue;
      } else if ((c & 0xE0) == 0xC0) {
        extra = 1;
        cp = c & 0x1F;
      } else if ((c & 0xF0) == 0xE0) {
        extra = 2;
        cp = c & 0x0F;
      } else if ((c & 0xF8) == 0xF0) {
        extra = 3;
        cp = c & 0x07;
      } else {
        return false;
      }
      for (int k = 1; k <= extra; ++k) {
        if (i + k >= s.size()) return false;
        const unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) return false;
        cp = (cp << 6) | (cc & 0x3F);
      }
      static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
      if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return false;
      }
      i += extra + 1;
    }
    return true;
  }

  std::string source_;
  ReadLimits limits_;
  std::vector<ReadIssue>* issues_;
  PositionMap* positions_;
  size_t nodes_ = 0;
  bool failed_ = false;
  bool aborted_ = false;
};

}  // namespace

std::string ReadIssue::ToString() const {
  std::string out = source;
  if (line > 0) absl::StrAppend(&out, ":", line);
  if (line > 0 && column > 0) absl::StrAppend(&out, ":", column);
  if (!path.empty()) absl::StrAppend(&out, out.empty() ? "" : ": ", path);
  absl::StrAppend(&out, out.empty() ? "" : ": ", message);
  return out;
}

std::string JoinIssues(const std::vector<ReadIssue>& issues) {
  std::vector<std::string> lines;
  for (const ReadIssue& i : issues) lines.push_back(i.ToString());
  return absl::StrJoin(lines, "\n");
}

TextPosition FindPosition(const PositionMap& positions,
                          absl::string_view path) {
  while (!path.empty()) {
    if (auto it = positions.find(path); it != positions.end())
      return it->second;
    const size_t cut = path.find_last_of(".[");
    if (cut == absl::string_view::npos) break;
    path = path.substr(0, cut);
  }
  return {};
}

bool ReadMessage(absl::string_view text, absl::string_view source,
                 google::protobuf::Message* message,
                 std::vector<ReadIssue>* issues, const ReadLimits& limits,
                 PositionMap* positions) {
  message->Clear();
  Reader reader(source, limits, issues, positions);
  if (text.size() > limits.max_bytes) {
    reader.Fail(YAML::Node(YAML::NodeType::Undefined), "",
                absl::StrCat("document is ", text.size(),
                             " bytes; the limit is ", limits.max_bytes));
    return false;
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    issues->push_back({.source = std::string(source),
                       .line = e.mark.line + 1,
                       .column = e.mark.column + 1,
                       .message = absl::StrCat("syntax error: ", e.msg)});
    return false;
  }
  try {
    reader.ReadMessage(root, message, "", 0);
  } catch (const YAML::Exception& e) {
    reader.Fail(YAML::Node(YAML::NodeType::Undefined), "",
                absl::StrCat("unreadable document: ", e.msg));
  }
  return !reader.failed();
}

absl::Status ReadMessageOrError(absl::string_view text,
                                absl::string_view source,
                                google::protobuf::Message* message,
                                const ReadLimits& limits) {
  std::vector<ReadIssue> issues;
  if (ReadMessage(text, source, message, &issues, limits)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(JoinIssues(issues));
}

// Upper snake case of a CamelCase enum type name: "ErrorCode" -> "ERROR_CODE".
std::string EnumPrefix(const EnumDescriptor* e) {
  std::string out;
  for (char c : e->name()) {
    if (absl::ascii_isupper(c) && !out.empty()) out += '_';
    out += absl::ascii_toupper(c);
  }
  return out + "_";
}

// Short lowercase name of an enum value: COMPENSATION_NONE -> "none".
std::string ShortEnumName(const EnumValueDescriptor* v) {
  std::string prefix = EnumPrefix(v->type());
  std::string name = v->name();
  if (absl::StartsWith(name, prefix)) name = name.substr(prefix.size());
  return absl::AsciiStrToLower(name);
}

}  // namespace utilityd::loader
