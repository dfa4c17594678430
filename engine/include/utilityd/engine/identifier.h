// The format's identifier rule: set, action, consideration, factor, node
// and package names. Shared by the engine's validation and the loader's.
#ifndef UTILITYD_ENGINE_IDENTIFIER_H_
#define UTILITYD_ENGINE_IDENTIFIER_H_

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace utilityd::engine {

// Identifiers: a letter, then letters, digits, '_' or '-', at most 128. They
// appear in metric labels, personality keys ("action.consideration") and
// URLs.
inline bool IsIdentifier(absl::string_view s) {
  if (s.empty() || s.size() > 128 || !absl::ascii_isalpha(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '-';
  });
}

}  // namespace utilityd::engine

#endif  // UTILITYD_ENGINE_IDENTIFIER_H_
