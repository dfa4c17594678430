#include "ctl/bt_mapping.h"

#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace utilityd::ctl {

absl::StatusOr<Mapping> ReadMapping(const std::string& text,
                                    const std::string& source) {
  Mapping m;
  if (text.empty()) return m;
  try {
    const YAML::Node root = YAML::Load(text);
    for (const auto& section : root) {
      const std::string key = section.first.as<std::string>();
      if (key == "conditions" || key == "actions") {
        auto& into = key == "conditions" ? m.conditions : m.actions;
        for (const auto& e : section.second) {
          into[e.first.as<std::string>()] = e.second.as<std::string>();
        }
      } else if (key == "enums") {
        for (const auto& e : section.second) {
          m.enums[e.first.as<std::string>()] = e.second.as<int32_t>();
        }
      } else if (key == "factors") {
        for (const auto& e : section.second) {
          m.factors[e.first.as<std::string>()] = {
              e.second["min"].as<double>(0), e.second["max"].as<double>(1)};
        }
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            source, ":", section.first.Mark().line + 1, ": unknown section \"",
            key, "\" (conditions, actions, factors, enums)"));
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", e.mark.line + 1, ": ", e.msg));
  }
  return m;
}

}  // namespace utilityd::ctl
