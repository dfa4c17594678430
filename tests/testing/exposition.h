// Reads a Prometheus text exposition (a /metrics answer) for tests: a
// sample is found by its name and its labels, whatever order the exporter
// writes the labels in.
//
//   EXPECT_EQ(testing::Sample(text, "utilityd_decisions_total",
//                             {{"behaviour_set", "arena_mage"},
//                              {"action", "attack"}, {"variant", "live"}}),
//             3);
#ifndef UTILITYD_TESTS_TESTING_EXPOSITION_H_
#define UTILITYD_TESTS_TESTING_EXPOSITION_H_

#include <cmath>
#include <map>
#include <sstream>
#include <string>

namespace utilityd::testing {

using SampleLabels = std::map<std::string, std::string>;

// Parses `{a="1",b="2"}` (escapes \\, \" and \n) into `labels`; returns
// false when it is malformed.
inline bool ParseSampleLabels(const std::string& text, SampleLabels* labels) {
  size_t i = 1;
  while (i < text.size() && text[i] != '}') {
    const size_t eq = text.find("=\"", i);
    if (eq == std::string::npos) return false;
    const std::string name = text.substr(i, eq - i);
    std::string value;
    for (i = eq + 2; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;
        value += text[i] == 'n' ? '\n' : text[i];
      } else {
        value += text[i];
      }
    }
    (*labels)[name] = value;
    i += 1;  // the closing quote
    if (i < text.size() && text[i] == ',') ++i;
  }
  return true;
}

// Returns the value of the sample `name` whose labels are exactly
// `labels`, or NaN when the exposition has none.
inline double Sample(const std::string& exposition, const std::string& name,
                     const SampleLabels& labels = {}) {
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t end = line.find_first_of("{ ");
    if (end == std::string::npos || line.compare(0, end, name) != 0 ||
        end != name.size()) {
      continue;
    }
    SampleLabels found;
    size_t value_at = end + 1;
    if (line[end] == '{') {
      const size_t close = line.rfind("} ");
      if (close == std::string::npos ||
          !ParseSampleLabels(line.substr(end, close - end + 1), &found)) {
        continue;
      }
      value_at = close + 2;
    }
    if (found == labels) return std::stod(line.substr(value_at));
  }
  return std::nan("");
}

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_EXPOSITION_H_
