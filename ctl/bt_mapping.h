// import-bt's mapping file (--map; docs/TREES.md, "The mapping file"):
// which BT.CPP conditions and actions are which factors and actions, the
// factors' ranges, and the scripts' enums. Internal to ctl/.
#ifndef UTILITYD_CTL_BT_MAPPING_H_
#define UTILITYD_CTL_BT_MAPPING_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace utilityd::ctl {

// What a mapping file says.
struct Mapping {
  std::map<std::string, std::string> conditions;  // ID or name -> factor
                                                  // or comparison
  std::map<std::string, std::string> actions;     // ID -> action
  std::map<std::string, std::pair<double, double>> factors;  // ranges
  std::map<std::string, int32_t> enums;  // the scripts' named numbers
};

// Reads a mapping file's YAML `text` (empty: no mapping). INVALID_ARGUMENT
// with `source:line` for an unknown section or YAML that does not parse.
[[nodiscard]] absl::StatusOr<Mapping> ReadMapping(const std::string& text,
                                                  const std::string& source);

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_BT_MAPPING_H_
