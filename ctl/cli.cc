#include "ctl/cli.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

namespace utilityd::ctl {

std::string Usage(const Command& c) {
  std::string s = absl::StrCat("usage: utilityctl ", c.name, " ", c.synopsis,
                               "\n\n", c.description, "\n");
  if (!c.options.empty()) s += "\noptions:\n";
  for (const Option& o : c.options) {
    std::string flag = "--" + o.name;
    if (!o.implicit.empty()) {
      absl::StrAppend(&flag, "[=", o.value_name, "]");
    } else if (!o.value_name.empty()) {
      absl::StrAppend(&flag, " ", o.value_name);
    }
    absl::StrAppend(&s, absl::StrFormat("  %-28s %s\n", flag, o.help));
  }
  absl::StrAppend(&s,
                  absl::StrFormat("  %-28s %s\n", "--help", "show this help"));
  return s;
}

bool Parse(const Command& c, const std::vector<std::string>& args, Parsed* p,
           std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!absl::StartsWith(a, "--")) {
      p->positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_value = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    const Option* opt = nullptr;
    for (const Option& o : c.options) {
      if (o.name == name) opt = &o;
    }
    if (opt == nullptr) {
      err << "utilityctl " << c.name << ": unknown option --" << name << "\n\n"
          << Usage(c);
      return false;
    }
    if (opt->value_name.empty()) {
      if (has_value) {
        err << "utilityctl " << c.name << ": --" << name << " takes no value\n";
        return false;
      }
      p->values[name] = "true";
    } else if (has_value) {
      p->values[name] = value;
    } else if (!opt->implicit.empty()) {
      p->values[name] = opt->implicit;
    } else if (i + 1 < args.size()) {
      p->values[name] = args[++i];
    } else {
      err << "utilityctl " << c.name << ": --" << name << " needs a "
          << opt->value_name << "\n";
      return false;
    }
  }
  return true;
}

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(m, &json, options);
  return json;
}

int Failed(const absl::Status& status, std::ostream& err) {
  err << absl::StatusCodeToString(status.code()) << ": " << status.message()
      << "\n";
  return kInvalid;
}

bool TableOrJson(const Parsed& p, const std::string& command,
                 std::string* format, std::ostream& err) {
  *format = p.get("format", "table");
  if (*format == "table" || *format == "json") return true;
  err << "utilityctl " << command << ": --format: expected table or json\n";
  return false;
}

}  // namespace utilityd::ctl
