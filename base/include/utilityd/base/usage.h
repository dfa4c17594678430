// --help for a utilityd program: only the flags its main file defines, under
// the program's name, with no source path (an installed binary must not
// show the machine it was built on). Used by the binaries only, not
// installed.
#ifndef UTILITYD_BASE_USAGE_H_
#define UTILITYD_BASE_USAGE_H_

#include <string>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace utilityd {

// `main_file`: the path, from the source root, of the file defining the
// flags --help lists, e.g. "server/src/flags.cc"; `program`: the name
// --help shows for it.
inline void SetUsage(const char* main_file, const char* program,
                     absl::string_view message) {
  absl::FlagsUsageConfig usage;
  // Abseil filters by the normalized name, so `program` is the main file.
  usage.contains_help_flags = [main_file, program](absl::string_view file) {
    return file == program || absl::EndsWith(file, main_file);
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.normalize_filename = [main_file, program](absl::string_view file) {
    return absl::EndsWith(file, main_file) ? std::string(program)
                                           : std::string(file);
  };
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(message);
}

}  // namespace utilityd

#endif  // UTILITYD_BASE_USAGE_H_
