#include "utilityd/loader/proto_writer.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "utilityd/base/shortest_number.h"
#include "utilityd/loader/proto_reader.h"

namespace utilityd::loader {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// A string plain when YAML reads it back as that string, else quoted.
std::string Text(const std::string& s) {
  bool plain = !s.empty() && (absl::ascii_isalpha(s[0]) || s[0] == '_');
  for (char c : s) {
    plain = plain && (absl::ascii_isalnum(c) || c == '_' || c == '-' ||
                      c == '.' || c == ' ' || c == '/');
  }
  const std::string lower = absl::AsciiStrToLower(s);
  plain = plain && s.back() != ' ' && lower != "true" && lower != "false" &&
          lower != "null" && lower != "yes" && lower != "no" && lower != "on" &&
          lower != "off" && lower != "y" && lower != "n";
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string Scalar(const Message& m, const FieldDescriptor* f, int i) {
  const Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(rep ? r->GetRepeatedInt32(m, f, i)
                              : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(rep ? r->GetRepeatedInt64(m, f, i)
                              : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(rep ? r->GetRepeatedUInt32(m, f, i)
                              : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(rep ? r->GetRepeatedUInt64(m, f, i)
                              : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return ShortestNumber(rep ? r->GetRepeatedDouble(m, f, i)
                                : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return ShortestNumber(rep ? r->GetRepeatedFloat(m, f, i)
                                : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f)) ? "true"
                                                                    : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return ShortEnumName(rep ? r->GetRepeatedEnum(m, f, i)
                               : r->GetEnum(m, f));
    case FieldDescriptor::CPPTYPE_STRING:
      return Text(rep ? r->GetRepeatedString(m, f, i) : r->GetString(m, f));
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "";
}

class Writer {
 public:
  std::string Write(const Message& m) {
    Block(m, 0);
    return std::move(out_);
  }

 private:
  // A map entry's key and value, or a message short and flat enough for
  // one line: "{a: 1, b: x}"; empty when it is not. `whole`: any message,
  // lists of messages included, however long the line.
  static std::string Flow(const Message& m, bool whole = false) {
    std::vector<const FieldDescriptor*> fields;
    m.GetReflection()->ListFields(m, &fields);
    std::vector<std::string> parts;
    for (const FieldDescriptor* f : fields) {
      if (f->is_map()) {
        const std::string map = FlowMap(m, f);
        if (map.empty()) return "";
        parts.push_back(absl::StrCat(f->name(), ": ", map));
        continue;
      }
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !whole) {
        if (f->is_repeated()) return "";
        const std::string inner = Flow(m.GetReflection()->GetMessage(m, f));
        if (inner.empty()) return "";
        parts.push_back(absl::StrCat(f->name(), ": ", inner));
        continue;
      }
      parts.push_back(absl::StrCat(f->name(), ": ", Value(m, f)));
    }
    std::string s = absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    return whole || s.size() <= 72 ? s : "";
  }

 public:
  static std::string Whole(const Message& m) { return Flow(m, true); }

  // A field's whole value on one line: a scalar, "[...]", "{...}".
  static std::string Value(const Message& m, const FieldDescriptor* f) {
    if (f->is_map()) return FlowMap(m, f);
    const Reflection* r = m.GetReflection();
    const bool message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (!f->is_repeated()) {
      return message ? Flow(r->GetMessage(m, f), true) : Scalar(m, f, 0);
    }
    std::vector<std::string> items;
    for (int i = 0; i < r->FieldSize(m, f); ++i) {
      items.push_back(message ? Flow(r->GetRepeatedMessage(m, f, i), true)
                              : Scalar(m, f, i));
    }
    return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
  }

 private:
  static std::string FlowMap(const Message& m, const FieldDescriptor* f) {
    const Reflection* r = m.GetReflection();
    std::vector<std::string> parts;
    for (int i = 0; i < r->FieldSize(m, f); ++i) {
      const Message& e = r->GetRepeatedMessage(m, f, i);
      const FieldDescriptor* k = e.GetDescriptor()->FindFieldByName("key");
      const FieldDescriptor* v = e.GetDescriptor()->FindFieldByName("value");
      if (v->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) return "";
      parts.push_back(absl::StrCat(Scalar(e, k, 0), ": ", Scalar(e, v, 0)));
    }
    std::sort(parts.begin(), parts.end());  // map order is unspecified
    return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  }

  void Line(int indent, const std::string& text) {
    out_.append(static_cast<size_t>(indent), ' ');
    out_ += text;
    out_ += '\n';
  }

  // The fields of `m` as "name: value" lines at `indent`; `first` replaces
  // the indent of the first line (a list item's "- ").
  void Block(const Message& m, int indent, const char* first = nullptr) {
    std::vector<const FieldDescriptor*> fields;
    m.GetReflection()->ListFields(m, &fields);
    const Reflection* r = m.GetReflection();
    for (const FieldDescriptor* f : fields) {
      std::string head = f->name() + ":";
      int at = indent;
      if (first != nullptr) {
        head = first + head;
        at = indent - 2;
        first = nullptr;
      }
      if (f->is_map()) {
        Line(at, absl::StrCat(head, " ", FlowMap(m, f)));
      } else if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        if (!f->is_repeated()) {
          Line(at, absl::StrCat(head, " ", Scalar(m, f, 0)));
          continue;
        }
        std::vector<std::string> items;
        for (int i = 0; i < r->FieldSize(m, f); ++i) {
          items.push_back(Scalar(m, f, i));
        }
        Line(at, absl::StrCat(head, " [", absl::StrJoin(items, ", "), "]"));
      } else if (!f->is_repeated()) {
        const Message& inner = r->GetMessage(m, f);
        const std::string flow = Flow(inner);
        if (!flow.empty()) {
          Line(at, absl::StrCat(head, " ", flow));
        } else {
          Line(at, head);
          Block(inner, indent + 2);
        }
      } else {
        Line(at, head);
        for (int i = 0; i < r->FieldSize(m, f); ++i) {
          const Message& item = r->GetRepeatedMessage(m, f, i);
          const std::string flow = Flow(item);
          if (!flow.empty()) {
            Line(indent + 2, "- " + flow);
          } else {
            Block(item, indent + 4, "- ");
          }
        }
      }
    }
  }

  std::string out_;
};

}  // namespace

std::string WriteMessageYaml(const Message& message) {
  return Writer().Write(message);
}

std::string WriteFieldYaml(const Message& message, const FieldDescriptor* field,
                           int index) {
  if (index >= 0) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      return Scalar(message, field, index);
    }
    return WriteFieldYaml(
        message.GetReflection()->GetRepeatedMessage(message, field, index));
  }
  return Writer::Value(message, field);
}

std::string WriteFieldYaml(const Message& message) {
  return Writer::Whole(message);
}

}  // namespace utilityd::loader
